"""Interop tests: official MCP clients against mcpgen servers."""
