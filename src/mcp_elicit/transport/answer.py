"""The one step every server transport shares: a parsed request in, encoded response bytes out."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mcp_elicit.server.context import Notify
from mcp_elicit.wire.errors import McpError, internal_error
from mcp_elicit.wire.jsonrpc import Request, encode_error, encode_result
from mcp_elicit.wire.meta import RequestMeta

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.transport")


async def answer(
    server: Server,
    request: Request,
    *,
    meta: RequestMeta | None = None,
    principal: str | None = None,
    notify: Notify | None = None,
    client: str | None = None,
) -> tuple[McpError | None, bytes]:
    """Dispatch ``request``; return the error (if any) and the encoded JSON-RPC response."""
    try:
        result = await server.dispatch(request, meta=meta, principal=principal, notify=notify, client=client)
        return None, encode_result(request.id, result)
    except McpError as exc:
        try:
            return exc, encode_error(request.id, exc)
        except TypeError:
            # A handler raised McpError with data (or a message) that is not JSON: a server bug.
            logger.exception("could not encode the error %r raised by %s", exc, request.method)
            error = internal_error("the handler raised an error that cannot be sent as JSON")
            return error, encode_error(request.id, error)
    except TypeError:
        # A handler returned something that is not JSON (orjson refuses it): a server bug.
        logger.exception("could not encode the result of %s", request.method)
        error = internal_error("the handler returned a value that cannot be sent as JSON")
        return error, encode_error(request.id, error)
    except Exception:
        logger.exception("unexpected failure handling %s", request.method)
        error = internal_error()
        return error, encode_error(request.id, error)
    except SystemExit:
        # sys.exit() in a handler (argparse inside a tool, say) fails this request only: the
        # server and the other requests in flight go on.
        logger.exception("a handler of %s called sys.exit(); the server keeps running", request.method)
        error = internal_error()
        return error, encode_error(request.id, error)
