"""How the parallel run (pytest-xdist, `--dist loadgroup`) learns each test's group.

xdist's own loadgroup tells the controller a test's group by appending `@group` to the
test's node id on the worker. pytest 9.2 keeps node ids in a structured field that this
no longer changes, so each test silently became a work unit of its own and a module's
servers started on every worker (pytest-dev/pytest-xdist#1386). Here each worker writes
the group of each of its tests to a file in a directory the controller hands it, and the
controller's scheduler reads the groups from there; node ids stay as pytest made them.
A test without a group (a `slow` one) stays a unit of its own.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

KEY = "mcpgen_xdist_groups"  # in each worker's `workerinput`: the directory
_STASH = pytest.StashKey[Path]()


def directory(config: pytest.Config) -> Path:
    """The controller's directory for this run's group files (made once)."""
    if _STASH not in config.stash:
        config.stash[_STASH] = Path(tempfile.mkdtemp(prefix="mcpgen-xdist-groups-"))
    return config.stash[_STASH]


def remove(config: pytest.Config) -> None:
    if _STASH in config.stash:
        shutil.rmtree(config.stash[_STASH], ignore_errors=True)


def write(config: pytest.Config, groups: dict[str, str]) -> None:
    """On a worker: record `node id -> group` where the controller will read it."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None or KEY not in workerinput:
        return
    target = Path(workerinput[KEY]) / f"{workerinput['workerid']}.json"
    partial = target.with_suffix(".part")
    partial.write_text(json.dumps(groups))
    partial.replace(target)  # whole or absent: the controller never reads half a file


class GroupScheduling(LoadScopeScheduling):
    """loadscope's scheduler whose work units are the groups the workers wrote: every
    test of one group goes to one worker, in collection order (no reordering when
    `--no-loadscope-reorder`)."""

    def __init__(self, config: pytest.Config, log: Any, where: Path) -> None:
        super().__init__(config, log)
        self._where = where
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            found: dict[str, str] = {}
            for path in sorted(self._where.glob("*.json")):
                found.update(json.loads(path.read_text()))
            if not found:
                return nodeid  # nothing written (yet): a unit of its own
            self._groups = found
        return self._groups.get(nodeid, nodeid)
