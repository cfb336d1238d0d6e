"""One registry of every external format ssdlab reads: fio, ACT, SMART and power alike.

A format is a :class:`Format`: its ``name``, its ``kind`` (``fio``, ``ACT``, ``SMART``,
``power``), its reader ``read(path, **options)`` and, when the format can be recognised,
``sniff(probe) -> bool`` judging a file by its content (a :class:`Probe`), never its name:
ObsPy's ``isFormat``/``readFormat`` pair. :func:`detect` asks the most recently registered
formats first, so a plug-in can take over from a built-in one; a format without ``sniff``
(the generic power CSV, which needs a column mapping) is only read by name.

Formats come from ssdlab's own modules (:data:`BUILTIN`), from installed packages' entry
points (group ``ssdlab.formats``, each naming a :class:`Format` object), and from
:meth:`Formats.register` at run time. ``SMART_FORMATS`` and ``POWER_FORMATS`` are this
registry seen through one kind (:meth:`Formats.kind`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

from .errors import InputError
from .io.text import parse_json, read_text
from .plugins import Plugins

R = TypeVar("R")

#: Files up to this size are read whole to try them as JSON; larger ones are probed by head.
PROBE_JSON_MAX_BYTES = 16 * 2**20
HEAD_BYTES = 64 * 1024


@dataclass
class Probe:
    """What a ``sniff`` function sees of a file: its first 64 KiB (``raw`` bytes and ``head``
    text) and, if JSON, the document."""

    path: Path
    raw: bytes
    json_error: str | None = field(default=None, init=False)
    #: the whole file when the caller has read it (:meth:`of_bytes`), so it is not read again
    data: bytes | None = field(default=None, repr=False)

    @classmethod
    def of(cls, path: str | Path) -> Probe:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"{path}: {'not a file' if path.exists() else 'no such file'}")
        try:
            with path.open("rb") as fh:
                raw = fh.read(HEAD_BYTES)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        return cls(path, raw)

    @classmethod
    def of_bytes(cls, path: str | Path, data: bytes) -> Probe:
        """The probe of a file whose bytes ``data`` the caller has read whole."""
        return cls(Path(path), data[:HEAD_BYTES], data)

    @cached_property
    def text(self) -> str:
        """The whole file's text (undecodable bytes replaced); InputError as ``read_text``."""
        if self.data is None:
            return read_text(self.path)
        if b"\0" in self.data[:4096]:
            raise InputError(f"{self.path}: binary file, not a text file")
        return self.data.decode("utf-8", errors="replace")

    @cached_property
    def head(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    @cached_property
    def json(self) -> Any:
        """The parsed document when the file is JSON (None otherwise; see ``json_error``)."""
        if not self.head.lstrip().startswith(("{", "[")):
            return None
        size = self.path.stat().st_size if self.data is None else len(self.data)
        if size > PROBE_JSON_MAX_BYTES:
            return None
        try:
            return parse_json(self.text, self.path)
        except InputError as exc:
            self.json_error = str(exc)
            return None


@dataclass(frozen=True)
class Format(Generic[R]):
    """One format: its name, kind, reader and, when it can be recognised, its ``sniff``."""

    name: str
    kind: str
    read: Callable[..., R]
    sniff: Callable[[Probe], bool] | None = None


#: ssdlab's own formats: name -> ``module:Format object``, in detection order (last first)
BUILTIN = {
    "fio_json": "ssdlab.io.fio_formats:FIO_JSON",
    "fio_log": "ssdlab.io.fio_formats:FIO_LOG",
    "fio_hist_log": "ssdlab.io.fio_formats:FIO_HIST_LOG",
    "act_log": "ssdlab.act.log:FORMAT",
    "nvme_smart_log": "ssdlab.telemetry.smart.nvme_smart_log:FORMAT",
    "nvme_ocp_smart_add_log": "ssdlab.telemetry.smart.nvme_ocp:FORMAT",
    "nvme_id_ctrl": "ssdlab.telemetry.smart.nvme_id_ctrl:FORMAT",
    "nvme_intel_smart_log_add": "ssdlab.telemetry.smart.nvme_intel:FORMAT",
    "smartctl_exporter": "ssdlab.telemetry.smart.smartctl_exporter:FORMAT",
    "smartctl": "ssdlab.telemetry.smart.smartctl:FORMAT",
    "csv": "ssdlab.telemetry.power.generic:FORMAT",
    "quarch": "ssdlab.telemetry.power.quarch:FORMAT",
    "yokotool": "ssdlab.telemetry.power.yokotool:FORMAT",
    "ipmitool_dcmi": "ssdlab.telemetry.power.ipmitool:FORMAT",
}


class Formats:
    """Every format, by ``(kind, name)``; see the module docstring."""

    def __init__(self) -> None:
        self._declared: Plugins[Format[Any]] = Plugins("ssdlab.formats", "format", BUILTIN)
        self._added: dict[tuple[str, str], Format[Any]] = {}

    def all(self, kind: str | None = None) -> list[Format[Any]]:
        """The formats (of ``kind``), in registration order."""
        found: dict[tuple[str, str], Format[Any]] = {}
        for name in self._declared:  # a package's format of a built-in's name takes over
            fmt = self._declared[name]
            found.pop((fmt.kind, fmt.name), None)
            found[fmt.kind, fmt.name] = fmt
        for key, fmt in self._added.items():
            found.pop(key, None)
            found[key] = fmt
        return [f for f in found.values() if kind is None or f.kind == kind]

    def register(self, fmt: Format[Any], *, replace: bool = False) -> None:
        """Add a format; ``replace=True`` to take over an existing name of its kind."""
        if not replace and any(f.name == fmt.name for f in self.all(fmt.kind)):
            raise ValueError(f"{fmt.kind} format {fmt.name!r} is already registered")
        self._added.pop((fmt.kind, fmt.name), None)
        self._added[fmt.kind, fmt.name] = fmt

    def unregister(self, kind: str, name: str) -> None:
        """Remove a format registered at run time."""
        del self._added[kind, name]

    def kind(self, kind: str) -> KindView[Any]:
        """The formats of one kind, as a mapping name -> reader."""
        return KindView(self, kind)

    def detect(self, path: str | Path, kind: str | None = None) -> Format[Any]:
        """The format ``path`` is in (of ``kind``), judged by content."""
        return recognise(Probe.of(path), self.all(kind), kind)

    def read(
        self, path: str | Path, format: str | None = None, kind: str | None = None, **options: Any
    ) -> Any:
        """Read ``path`` with the named format, or the one :meth:`detect` finds."""
        if format is None:
            return self.detect(path, kind).read(path, **options)
        named = [f for f in self.all(kind) if f.name == format]
        if not named:
            known = ", ".join(f.name for f in self.all(kind))
            raise InputError(f"{path}: unknown {kind or ''} format {format!r} (known: {known})")
        return named[-1].read(path, **options)


def recognise(probe: Probe, formats: list[Format[Any]], kind: str | None = None) -> Format[Any]:
    """The last of ``formats`` whose ``sniff`` recognises ``probe``; InputError saying why
    none does (empty, malformed JSON, or not one of them; ``kind`` names what was expected)."""
    for fmt in reversed(formats):
        if fmt.sniff is not None and fmt.sniff(probe):
            return fmt
    if not probe.head.strip():
        raise InputError(f"{probe.path}: empty file")
    if probe.json_error:
        raise InputError(probe.json_error)
    known = ", ".join(f.name for f in formats if f.sniff is not None)
    what = f"{kind} file" if kind else "file of a known format"
    raise InputError(f"{probe.path}: not a recognised {what} (known: {known})")


class KindView(Mapping[str, Callable[..., R]]):
    """The formats of one kind (``"SMART"``, ``"power"``), as a mapping name -> reader."""

    def __init__(self, formats: Formats, kind: str) -> None:
        self.formats = formats
        self.kind = kind

    def register(
        self,
        name: str,
        read: Callable[..., R],
        sniff: Callable[[Probe], bool] | None = None,
        *,
        replace: bool = False,
    ) -> None:
        """Add a format of this kind; ``replace=True`` to take over an existing name."""
        self.formats.register(Format(name, self.kind, read, sniff), replace=replace)

    def unregister(self, name: str) -> None:
        self.formats.unregister(self.kind, name)

    def __getitem__(self, name: str) -> Callable[..., R]:
        named = [f for f in self.formats.all(self.kind) if f.name == name]
        if not named:
            raise KeyError(name)
        return named[-1].read

    def __iter__(self) -> Iterator[str]:
        return iter([f.name for f in self.formats.all(self.kind)])

    def __len__(self) -> int:
        return len(self.formats.all(self.kind))

    def detect(self, path: str | Path) -> str:
        """The name of the format ``path`` is in, judged by content."""
        return self.formats.detect(path, self.kind).name

    def read(self, path: str | Path, format: str | None = None, **options: Any) -> R:
        """Read ``path`` with the named format, or the one :meth:`detect` finds."""
        return self.formats.read(path, format, self.kind, **options)


#: the registry
FORMATS = Formats()


def detect(path: str | Path, kind: str | None = None) -> Format[Any]:
    """The format of ``path`` (of ``kind``), by content: see :class:`Formats`."""
    return FORMATS.detect(path, kind)


def read(path: str | Path, format: str | None = None, **options: Any) -> Any:
    """Read ``path`` with the named format or the one its content shows."""
    return FORMATS.read(path, format, **options)
