"""Helpers shared by the mcp_elicit.state tests (and the cross-process worker)."""

from __future__ import annotations

from tests import store_support
from tests.helpers import FakeClock as FakeClock

from mcp_elicit.state import PostgresSingleUseStore, SingleUseStore, SQLiteSingleUseStore

AUDIENCE = "https://mcp.example.test/mcp"


class StoreSpec(store_support.StoreSpec[SingleUseStore]):
    sqlite_type = SQLiteSingleUseStore
    sqlite_file = "used-state.db"
    postgres_type = PostgresSingleUseStore
    table_prefix = "mcp_elicit_test"
