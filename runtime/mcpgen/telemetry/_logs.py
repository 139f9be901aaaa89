"""Log context: every record of mcpgen's loggers names the MCP method and request id
being handled (never arguments or results)."""

from __future__ import annotations

import contextvars
import logging

from mcpgen.telemetry._common import glance

__all__ = ["current_request", "install_log_context"]

# (method, request id) of the message being handled, for log records; or the frame
# itself, read only if a record is made (most requests log nothing).
_request: contextvars.ContextVar[tuple[str, str | None] | bytes | str | None] = (
    contextvars.ContextVar("mcpgen_request", default=None)
)
current_request = _request


def _log_fields(frame: bytes | str) -> tuple[str | None, str | None]:
    seen = glance(frame)
    if seen is None or type(seen[0].method) is not str:
        return None, None
    rid = seen[0].id
    return seen[0].method, str(rid) if rid is not None and type(rid) is not bool else None


class _RequestFilter(logging.Filter):
    """Adds `mcp_method` and `mcp_request_id` to every record (None outside a
    request); never arguments or results."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = _request.get()
        fields: tuple[str | None, str | None] = (None, None)
        if isinstance(found, tuple):
            fields = found
        elif found is not None:
            fields = _log_fields(found)
        record.mcp_method, record.mcp_request_id = fields
        return True


_FILTER = _RequestFilter()


def install_log_context(logger_name: str) -> None:
    """Give the `logger_name` logger's records the current request (once)."""
    logger = logging.getLogger(logger_name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
