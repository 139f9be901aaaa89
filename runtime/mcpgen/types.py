"""The newest modern MCP revision's generated types (see `mcpgen_types.LATEST`).

For another revision import its module directly, e.g. `mcpgen_types.v2025_11_25`.
"""

from __future__ import annotations

from mcpgen_types.latest import *  # noqa: F403
from mcpgen_types.latest import __all__ as __all__  # noqa: PLC0414
