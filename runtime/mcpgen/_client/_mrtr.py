"""A request that may take several rounds (2026-07-28 multi round-trip requests).

Pure state: `request()` gives the next frame (a new id every round, the original
params plus the answers and the server's `requestState` echoed exactly),
`on_result()` says whether it is done, needs input, or should simply be retried
(a state-only round, with backoff). The caller fulfils input requests and reports
the answers with `answer()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from mcpgen._errors import ClientError
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._client._core import ClientCore

__all__ = ["Done", "NeedInput", "Retry", "RoundTrip"]


class Done(msgspec.Struct, frozen=True):
    result: Any


class NeedInput(msgspec.Struct, frozen=True):
    requests: dict[str, Any]  # key -> an InputRequest (ElicitRequest, CreateMessageRequest, ...)


class Retry(msgspec.Struct, frozen=True):
    delay: float  # seconds to wait before retrying with only the state


class RoundTrip:
    def __init__(
        self,
        core: ClientCore,
        method: str,
        params: dict[str, Any],
        *,
        max_rounds: int = 8,
        progress_token: Any = None,
        tasks: bool = False,
    ) -> None:
        self.core = core
        self.tasks = tasks  # declare the Tasks extension: a CreateTaskResult may end it
        self.method = method
        self.params = params
        self.max_rounds = max_rounds
        self.progress_token = progress_token
        self.rounds = 0
        self.state: str | None = None
        self.answers: dict[str, Any] | None = None
        self._idle = 0

    def request(self) -> tuple[Any, dict[str, Any], bytes]:
        self.rounds += 1
        if self.rounds > self.max_rounds:
            raise ClientError(
                f"{self.method}: still asking for input after {self.max_rounds} rounds"
            )
        params = dict(self.params)
        if self.answers is not None:
            params["inputResponses"] = self.answers
        if self.state is not None:
            params["requestState"] = self.state  # exactly as received, never inspected
        caps = self.core.task_capabilities if self.tasks else None
        return self.core.request(
            self.method, params, progress_token=self.progress_token, capabilities=caps
        )

    def on_result(self, raw: Any) -> Done | NeedInput | Retry:
        result = self.core.result(self.method, raw, tasks=self.tasks)
        if not isinstance(result, t.InputRequiredResult):
            return Done(result)
        self.state = None if result.request_state is UNSET else result.request_state
        self.answers = None
        requests = {} if result.input_requests is UNSET else result.input_requests
        if requests:
            self._idle = 0
            return NeedInput(dict(requests))
        if self.state is None:
            raise ClientError(
                f"{self.method}: an input-required result with neither requests nor state"
            )
        self._idle += 1
        return Retry(min(0.05 * 2 ** (self._idle - 1), 2.0))

    def answer(self, answers: dict[str, Any]) -> None:
        self.answers = {key: msgspec.to_builtins(value) for key, value in answers.items()}
