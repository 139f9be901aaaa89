"""Run under the official Python SDK's venv: read a protected mcpgen server's 401 and
403 challenges and its metadata with the SDK's own helpers; print what it understood.

    python official_sdk_reader.py URL TOKEN_WITHOUT_ADMIN
"""

from __future__ import annotations

import json
import sys

import httpx2 as httpx
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
)
from mcp.shared.auth import ProtectedResourceMetadata

url, token = sys.argv[1], sys.argv[2]
meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
params = {"name": "admin_only", "_meta": meta}
call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
headers = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "admin_only",
}
missing = httpx.post(url, json=call, headers=headers)
where = extract_resource_metadata_from_www_auth(missing)
metadata = ProtectedResourceMetadata.model_validate_json(httpx.get(str(where)).content)
refused = httpx.post(url, json=call, headers=headers | {"authorization": f"Bearer {token}"})
print(
    json.dumps(
        {
            "missing_status": missing.status_code,
            "resource_metadata": where,
            "resource": str(metadata.resource),
            "authorization_servers": [str(a) for a in metadata.authorization_servers or []],
            "refused_status": refused.status_code,
            "refused_error": extract_field_from_www_auth(refused, "error"),
            "refused_scope": extract_scope_from_www_auth(refused),
        }
    )
)
