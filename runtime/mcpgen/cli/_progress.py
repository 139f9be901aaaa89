"""What `mcpgen call` shows on stderr while it waits: the server's progress
notifications and log messages.

On a terminal, progress is one bar redrawn in place (`[#####-----]  50%  message`), and a
log message is printed above it; otherwise (a pipe, a file, CI) each progress
notification and each log message is one plain line. stdout keeps only the result.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

__all__ = ["Watcher"]

_WIDTH = 30  # the bar's cells


class Watcher:
    """The progress and log callbacks of one call, writing to `out` (stderr)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stderr
        self.tty = self.out.isatty()
        self._bar = ""  # what the terminal line shows now

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        note = f"  {message}" if message else ""
        if total:
            share = max(0.0, min(1.0, progress / total))
            shown = f"{share:4.0%}"
            if self.tty:
                cells = round(share * _WIDTH)
                self._draw(f"[{'#' * cells}{'-' * (_WIDTH - cells)}] {shown}{note}")
                return
            self._line(f"progress {progress:g}/{total:g} ({shown.strip()}){note}")
        elif self.tty:
            self._draw(f"[{progress:g} so far]{note}")
        else:
            self._line(f"progress {progress:g}{note}")

    def log(self, level: str, data: object, logger: str | None) -> None:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        self._line(f"[{level}]{f' {logger}:' if logger else ''} {text}")

    def done(self) -> None:
        """The call is over: the bar's line is finished."""
        if self._bar:
            self.out.write("\n")
            self.out.flush()
            self._bar = ""

    def _draw(self, text: str) -> None:
        pad = " " * max(0, len(self._bar) - len(text))
        self.out.write(f"\r{text}{pad}")
        self.out.flush()
        self._bar = text

    def _line(self, text: str) -> None:
        if self._bar:  # over the bar, which is drawn again below
            self.out.write("\r" + " " * len(self._bar) + "\r")
        self.out.write(text + "\n")
        if self._bar:
            self.out.write(self._bar)
        self.out.flush()
