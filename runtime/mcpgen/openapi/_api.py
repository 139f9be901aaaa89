"""What a module written by `mcpgen openapi` calls at run time: one `Api` per upstream
HTTP API, sending each tool call as the request its operation describes.

An `Operation` is the generated description of one endpoint (method, path template,
security requirements, success codes, body encoding); `Api.call` fills the path, the
query and the headers from the tool's arguments, authenticates as the operation's
security requirements ask (`ApiAuth`), and turns the answer into the tool's result:
a 2xx body decoded into the declared return type, anything else a `ToolError` carrying
the status and the API's own error body, which the model reads.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, overload
from urllib.parse import quote

import httpx
import msgspec

from mcpgen._errors import ConfigurationError, ToolError
from mcpgen._server._context import Context

__all__ = ["Api", "ApiAuth", "Operation", "Scheme"]

T = TypeVar("T")
_ERROR_BODY_LIMIT = 4000  # characters of an error body passed on to the model


@dataclass(frozen=True)
class Scheme:
    """A security scheme of the document: `apiKey` (in `header`, `query` or `cookie`,
    under `name`), `http` (`bearer` or `basic`), or `oauth2`/`openIdConnect` (a bearer
    token)."""

    type: Literal["apiKey", "http", "oauth2", "openIdConnect"]
    location: Literal["header", "query", "cookie"] | None = None
    name: str | None = None
    scheme: str | None = None  # http: "bearer" | "basic"


@dataclass(frozen=True)
class Operation:
    """One endpoint, as the generator read it from the document."""

    method: str
    path: str  # the template, e.g. "/items/{item_id}"
    operation_id: str
    ok: tuple[int, ...] = (200,)
    # each entry one alternative: every scheme named in it must be satisfied
    security: tuple[tuple[str, ...], ...] = ()
    body: Literal["json", "form"] | None = None


@dataclass(frozen=True)
class ApiAuth:
    """The credentials an `Api` sends, per security scheme of the document.

    `secrets` maps a scheme's name to its value (an API key, a bearer token, or
    `user:password` for basic). `forward`: opt-in, a function returning the token to
    send for a call (for example the MCP caller's own token, `ctx.auth`); it wins over
    `secrets` for bearer-like schemes. Nothing is sent for a scheme that has neither."""

    secrets: Mapping[str, str] = field(default_factory=dict)
    forward: Callable[[Context], str | None] | None = None


class Api:
    """Sends the generated tools' requests to one HTTP API (base URL, shared client)."""

    def __init__(
        self,
        base_url: str,
        schemes: Mapping[str, Scheme] | None = None,
        *,
        auth: ApiAuth | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(f"the API's base URL must be http(s), not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.schemes = dict(schemes or {})
        self.auth = auth or ApiAuth()
        self.client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        await self.client.aclose()

    @overload
    async def call(
        self,
        ctx: Context | None,
        op: Operation,
        result: type[T],
        *,
        path: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> T: ...
    @overload
    async def call(
        self,
        ctx: Context | None,
        op: Operation,
        result: object,  # a union, a Literal, ...: the caller annotates what it gets
        *,
        path: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any: ...
    async def call(
        self,
        ctx: Context | None,
        op: Operation,
        result: Any,
        *,
        path: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        """Send `op` with these arguments (None values are left out); the 2xx answer
        decoded as `result`, else a `ToolError` naming the status and the API's body."""
        url = self.base_url + _fill(op.path, path or {})
        params = _query(query or {})
        sent = {name: _text(value) for name, value in (headers or {}).items() if value is not None}
        cookies: dict[str, str] = {}
        self._authenticate(ctx, op, sent, params, cookies)
        if cookies:  # as the header itself: httpx keeps per-request cookies on the client
            sent["cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
        request: dict[str, Any] = {"params": params, "headers": sent}
        if body is not None:
            plain = msgspec.to_builtins(body)
            if op.body == "form":
                request["data"] = plain
            else:
                request["content"] = msgspec.json.encode(plain)
                sent["content-type"] = "application/json"
        try:
            response = await self.client.request(op.method, url, **request)
        except httpx.HTTPError as exc:
            raise ToolError(
                f"{op.operation_id}: the API did not answer ({type(exc).__name__})"
            ) from None
        if response.status_code not in op.ok and not (200 <= response.status_code < 300):
            raise ToolError(_failure(op, response))
        return _decode(op, response, result)

    def _authenticate(
        self,
        ctx: Context | None,
        op: Operation,
        headers: dict[str, str],
        params: list[tuple[str, str]],
        cookies: dict[str, str],
    ) -> None:
        if not op.security:
            return
        for alternative in op.security:  # the first alternative we can satisfy wholly
            values = {name: self._secret(ctx, name) for name in alternative}
            if all(value is not None for value in values.values()):
                for name, value in values.items():
                    assert value is not None
                    self._apply(name, value, headers, params, cookies)
                return

    def _secret(self, ctx: Context | None, name: str) -> str | None:
        scheme = self.schemes.get(name)
        if scheme is None:
            return None
        bearer_like = scheme.type in ("oauth2", "openIdConnect") or scheme.scheme == "bearer"
        if bearer_like and self.auth.forward is not None and ctx is not None:
            forwarded = self.auth.forward(ctx)
            if forwarded:
                return forwarded
        return self.auth.secrets.get(name)

    def _apply(
        self,
        name: str,
        value: str,
        headers: dict[str, str],
        params: list[tuple[str, str]],
        cookies: dict[str, str],
    ) -> None:
        scheme = self.schemes[name]
        if scheme.type == "apiKey":
            key = scheme.name or name
            if scheme.location == "query":
                params.append((key, value))
            elif scheme.location == "cookie":
                cookies[key] = value
            else:
                headers[key] = value
        elif scheme.scheme == "basic":
            headers["authorization"] = "Basic " + base64.b64encode(value.encode()).decode()
        else:
            headers["authorization"] = f"Bearer {value}"


def _text(value: Any) -> str:
    plain = msgspec.to_builtins(value)
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, str | int | float):
        return str(plain)
    return json.dumps(plain, separators=(",", ":"))


def _fill(template: str, values: Mapping[str, Any]) -> str:
    out = template
    for name, value in values.items():
        if value is None:
            raise ToolError(f"the path parameter {name!r} is required")
        out = out.replace("{" + name + "}", quote(_text(value), safe=""))
    return out


def _query(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in values.items():
        if value is None:
            continue
        plain = msgspec.to_builtins(value)
        items: Sequence[Any] = plain if isinstance(plain, list) else [plain]
        out.extend((name, _text(item)) for item in items)  # form style, exploded
    return out


def _failure(op: Operation, response: httpx.Response) -> str:
    text = response.text.strip()
    if len(text) > _ERROR_BODY_LIMIT:
        text = text[:_ERROR_BODY_LIMIT] + " ..."
    status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    return f"{op.operation_id}: {status}" + (f": {text}" if text else "")


def _decode(op: Operation, response: httpx.Response, result: Any) -> Any:
    if result is type(None) or not response.content:
        if result is str:
            return f"HTTP {response.status_code}"
        return None
    if result is str and "json" not in response.headers.get("content-type", ""):
        return response.text
    try:
        return msgspec.json.decode(response.content, type=result, strict=False)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ToolError(
            f"{op.operation_id}: the API's answer does not match its description ({exc})"
        ) from None
