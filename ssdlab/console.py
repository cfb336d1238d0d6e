"""The console ssdlab prints to: stderr, surviving a closed pipe or a lost terminal.

Light on purpose (rich only): the command line makes it before it knows what it will run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from rich.console import Console


class LossyStream:
    """The text stream ``get()`` returns, dropping what it cannot take: a closed pipe or a
    lost terminal (EPIPE, EIO) must not stop a run. After the first failure (or with no
    stream at all) everything written is dropped."""

    def __init__(self, get: Callable[[], TextIO | None]) -> None:
        self._get = get
        self.lost = False

    def _stream(self) -> TextIO | None:
        """The stream, unless lost; the real one under rich's redirection of a live display."""
        stream = None if self.lost else self._get()
        return getattr(stream, "rich_proxied_file", stream)

    def write(self, text: str) -> int:
        if (stream := self._stream()) is not None:
            try:
                stream.write(text)
            except OSError:
                self.lost = True
        return len(text)

    def flush(self) -> None:
        if (stream := self._stream()) is not None:
            try:
                stream.flush()
            except OSError:
                self.lost = True

    def isatty(self) -> bool:
        stream = self._stream()
        return stream is not None and stream.isatty()

    def fileno(self) -> int:
        stream = self._stream()
        if stream is None:
            raise OSError("no stream")
        return stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream(), "encoding", None) or "utf-8"


def lossy_stderr() -> Console:
    """A console on stderr that outlives the terminal (see :class:`LossyStream`)."""
    return Console(file=LossyStream(lambda: sys.stderr))  # type: ignore[arg-type]


#: the width of a console writing to a pipe or file: no line is cut
UNLIMITED_WIDTH = 100_000


def stdout_console(file: TextIO | None = None) -> Console:
    """A console for tables on stdout (or ``file``): as wide as the terminal (``COLUMNS``
    when set); writing to a pipe or file, no width is imposed (lines stay whole for the
    program reading them, as ``ls`` and ``git`` keep theirs)."""
    console = Console(file=file, highlight=False)
    if not console.is_terminal:
        console.width = UNLIMITED_WIDTH
    return console


def plural(count: int, word: str, words: str | None = None) -> str:
    """``count`` and ``word`` in the number it takes: ``1 step``, ``2 steps``, ``0 hosts``
    (``words``: the plural when it is not ``word + "s"``)."""
    return f"{count:,} {word if count == 1 else words or word + 's'}"
