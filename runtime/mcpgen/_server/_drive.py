"""Stepping a coroutine by hand: resuming one already stepped, and a bare yield.

An inline middleware chain (`_middleware`) runs its first step on the caller's stack;
when it suspends, the rest runs in a task of its own from the step it yielded.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["YIELD", "resume"]


class _Yield:
    """One bare yield to whoever drives the coroutine (as `asyncio.sleep(0)` does)."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        yield


YIELD = _Yield()


class _Resume:
    """Drive on a coroutine already stepped once, from the step it yielded."""

    __slots__ = ("coro", "step")

    def __init__(self, coro: Coroutine[Any, Any, Any], step: Any) -> None:
        self.coro, self.step = coro, step

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, step = self.coro, self.step
        while True:
            try:
                value = yield step
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation included: the chain sees it
                try:
                    step = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
                continue
            try:
                step = coro.send(value)
            except StopIteration as stop:
                return stop.value


async def resume(coro: Coroutine[Any, Any, Any], step: Any) -> Any:
    return await _Resume(coro, step)
