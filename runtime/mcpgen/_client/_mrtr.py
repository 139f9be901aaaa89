"""A request that may take several rounds (2026-07-28 multi round-trip requests).

Pure state: `request()` gives the next frame (a new id every round, the original
params plus the answers and the server's `requestState` echoed exactly),
`on_result()` says whether it is done, needs input, or should simply be retried
(a state-only round, with backoff), and `on_error()` whether a refused round is sent
once more (`ClientCore.resend_after`: stale headers, a version switch) or fails. The
caller fulfils input requests and reports the answers with `answer()`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen._client._core import ClientCore, ProgressToken, Sent
from mcpgen._client._steps import Done, NeedInput, Resend, Retry
from mcpgen._errors import ClientError
from mcpgen_types import latest as t

__all__ = ["RoundTrip"]


class RoundTrip:
    def __init__(
        self,
        core: ClientCore,
        method: str,
        params: dict[str, Any],
        *,
        max_rounds: int = 8,
        progress_token: ProgressToken | None = None,
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
        self._resent = False

    def request(self) -> Sent:
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

    def on_result(self, raw: msgspec.Raw | None) -> Done | NeedInput | Retry:
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

    def on_error(self, error: dict[str, Any]) -> Resend:
        """A round answered with `error`: send it once more (the resend is not a new
        round), or raise the server's error."""
        if not self._resent:
            step = self.core.resend_after(self.method, error)
            if step is not None:
                self._resent = True
                self.rounds -= 1
                return step
        raise self.core.raise_error(error)

    def answer(self, answers: dict[str, Any]) -> None:
        self.answers = {key: msgspec.to_builtins(value) for key, value in answers.items()}
