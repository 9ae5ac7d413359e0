"""Helpers for the flow-store tests (and the cross-process worker)."""

from __future__ import annotations

from tests import store_support
from tests.helpers import FakeClock as FakeClock

from mcp_elicit.connect.flows import FlowStore, PostgresFlowStore, SQLiteFlowStore

ALICE = "https://auth.example.test|alice"
BOB = "https://auth.example.test|bob"
NOW = 1_800_000_000.0


class StoreSpec(store_support.StoreSpec[FlowStore]):
    sqlite_type = SQLiteFlowStore
    sqlite_file = "flows.db"
    postgres_type = PostgresFlowStore
    table_prefix = "mcp_elicit_test_flows"
    companion_suffixes = store_support.FLOW_COMPANION_SUFFIXES
