"""What a client learns of a failure it did not cause.

An unexpected exception in a handler is the operator's business: it is logged on the
`mcpgen.server` logger with its traceback and a short random reference, and the client
gets a generic message naming that reference, so a user can quote it and the operator
can find the traceback. `Server(mask_errors=False)` sends the exception's type and text
instead (for development). Deliberate errors go through as written whatever the
setting: a `ToolError` raised in a tool becomes its `isError` result (no traceback
logged: it is an answer, not a bug), an `McpError` the JSON-RPC error it names. A shared
store that is down (`StoreUnavailableError`) is "temporarily unavailable", never its
address or socket error.
"""

from __future__ import annotations

import logging
import secrets

from mcpgen._errors import ToolError
from mcpgen.stores import StoreUnavailableError

__all__ = ["UNAVAILABLE", "deliberate", "report"]

log = logging.getLogger("mcpgen.server")
UNAVAILABLE = "service temporarily unavailable; try again"


def deliberate(exc: Exception) -> str | None:
    """The message of an error raised on purpose for the model to read (`ToolError`)."""
    return exc.message if isinstance(exc, ToolError) else None


def report(what: str, exc: Exception, masked: bool) -> str:
    """Log `exc` (what failed, with its traceback, under a new reference) and return
    what the client may read of it, to follow "failed" or "internal error": the
    reference when masked (always for a store that is down), else the exception."""
    reference = secrets.token_hex(4)
    log.error("%s failed (ref %s)", what, reference, exc_info=exc)
    if masked or isinstance(exc, StoreUnavailableError):
        return f" (ref {reference})"
    return f": {type(exc).__name__}: {exc}"
