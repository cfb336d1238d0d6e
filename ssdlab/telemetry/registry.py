"""Format registries: a mapping name -> reader, plus detection of a file's format by content.

Each format registers a reader (``read(path, **options)``) and an optional ``sniff(probe)``
that answers whether a file is in that format from its content, never its name. Detection asks
the most recently registered formats first, so a user's format can take over from a built-in
one; formats without ``sniff`` (a generic CSV needing a column mapping) are only read by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..errors import InputError
from ..io.text import read_text
from ._values import parse_json

R = TypeVar("R")

#: Files up to this size are read whole to try them as JSON; larger ones are probed by head.
PROBE_JSON_MAX_BYTES = 16 * 2**20
_HEAD_CHARS = 64 * 1024


@dataclass
class Probe:
    """What a ``sniff`` function sees of a file: its first 64 KiB and, if JSON, the document."""

    path: Path
    head: str
    json_error: str | None = field(default=None, init=False)

    @classmethod
    def of(cls, path: str | Path) -> Probe:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"{path}: {'not a file' if path.exists() else 'no such file'}")
        try:
            with path.open("rb") as fh:
                head = fh.read(_HEAD_CHARS)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        return cls(path, head.decode("utf-8", errors="replace"))

    @cached_property
    def json(self) -> Any:
        """The parsed document when the file is JSON (None otherwise; see ``json_error``)."""
        if not self.head.lstrip().startswith(("{", "[")):
            return None
        if self.path.stat().st_size > PROBE_JSON_MAX_BYTES:
            return None
        try:
            return parse_json(read_text(self.path), self.path)
        except InputError as exc:
            self.json_error = str(exc)
            return None


@dataclass(frozen=True)
class Format(Generic[R]):
    """One registered format: its reader and, when it can be recognised, its ``sniff``."""

    name: str
    read: Callable[..., R]
    sniff: Callable[[Probe], bool] | None = None


class Registry(Mapping[str, Callable[..., R]]):
    """Formats of one kind (``"SMART"``, ``"power"``), as a mapping name -> reader."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._formats: dict[str, Format[R]] = {}

    def register(
        self,
        name: str,
        read: Callable[..., R],
        sniff: Callable[[Probe], bool] | None = None,
        *,
        replace: bool = False,
    ) -> None:
        """Add a format; ``replace=True`` to take over an existing name."""
        if name in self._formats and not replace:
            raise ValueError(f"{self.kind} format {name!r} is already registered")
        self._formats.pop(name, None)
        self._formats[name] = Format(name, read, sniff)

    def unregister(self, name: str) -> None:
        del self._formats[name]

    def __getitem__(self, name: str) -> Callable[..., R]:
        return self._formats[name].read

    def __iter__(self) -> Iterator[str]:
        return iter(self._formats)

    def __len__(self) -> int:
        return len(self._formats)

    def detect(self, path: str | Path) -> str:
        """The name of the format ``path`` is in, judged by content."""
        probe = Probe.of(path)
        for fmt in reversed(self._formats.values()):
            if fmt.sniff is not None and fmt.sniff(probe):
                return fmt.name
        if not probe.head.strip():
            raise InputError(f"{probe.path}: empty file")
        if probe.json_error:
            raise InputError(probe.json_error)
        known = ", ".join(n for n, f in self._formats.items() if f.sniff is not None)
        raise InputError(f"{probe.path}: not a recognised {self.kind} file (known: {known})")

    def read(self, path: str | Path, format: str | None = None, **options: Any) -> R:
        """Read ``path`` with the named format, or the one :meth:`detect` finds."""
        name = format or self.detect(path)
        if name not in self._formats:
            known = ", ".join(self._formats)
            raise InputError(f"{path}: unknown {self.kind} format {name!r} (known: {known})")
        return self._formats[name].read(path, **options)
