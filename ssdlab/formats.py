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
registry seen through one kind (:meth:`Formats.kind`); asking for one kind imports no module
of ssdlab's own formats of another.

A reader taking options (keywords after the path) names them in its format's ``options``,
and those it cannot read without in ``needs``: ``ssdlab power attach`` passes a format only
the options it names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, Generic, TypeVar

from .errors import InputError, SsdlabError
from .io.text import parse_json, read_bytes, read_file, read_text, size_limit, too_large
from .plugins import Plugins, origin_of, type_name

R = TypeVar("R")

#: Files up to this size are read whole to try them as JSON; larger ones are probed by head
#: (and ``json_error`` says why they are not taken as JSON).
PROBE_JSON_KIND = "JSON recognised by content"
PROBE_JSON_MAX_BYTES = size_limit(PROBE_JSON_KIND)
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
        return cls(path, read_bytes(path, HEAD_BYTES))  # a FIFO, a device: refused unread

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
        """The parsed document when the file is JSON of at most :data:`PROBE_JSON_MAX_BYTES`
        (None otherwise; see ``json_error``)."""
        if not self.head.lstrip().startswith(("{", "[")):
            return None
        try:
            if self.data is None:  # read once, within the limit
                self.data = read_file(self.path, PROBE_JSON_KIND)[0]
            elif len(self.data) > PROBE_JSON_MAX_BYTES:
                raise too_large(self.path, len(self.data), PROBE_JSON_KIND)
            return parse_json(self.text, self.path)
        except InputError as exc:
            self.json_error = str(exc)
            return None


@dataclass(frozen=True)
class Format(Generic[R]):
    """One format: its name, kind, reader and, when it can be recognised, its ``sniff``;
    the keyword ``options`` its reader takes and, of them, those it ``needs``."""

    name: str
    kind: str
    read: Callable[..., R]
    sniff: Callable[[Probe], bool] | None = None
    options: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


#: ssdlab's own formats by kind: name -> ``module:Format object``, in detection order (last
#: first)
BUILTIN_KINDS = {
    "fio": {
        "fio_json": "ssdlab.io.fio_formats:FIO_JSON",
        "fio_log": "ssdlab.io.fio_formats:FIO_LOG",
        "fio_hist_log": "ssdlab.io.fio_formats:FIO_HIST_LOG",
    },
    "ACT": {"act_log": "ssdlab.act.log:FORMAT"},
    "SMART": {
        "nvme_smart_log": "ssdlab.telemetry.smart.nvme_smart_log:FORMAT",
        "nvme_ocp_smart_add_log": "ssdlab.telemetry.smart.nvme_ocp:FORMAT",
        "nvme_id_ctrl": "ssdlab.telemetry.smart.nvme_id_ctrl:FORMAT",
        "nvme_intel_smart_log_add": "ssdlab.telemetry.smart.nvme_intel:FORMAT",
        "smartctl_exporter": "ssdlab.telemetry.smart.smartctl_exporter:FORMAT",
        "smartctl": "ssdlab.telemetry.smart.smartctl:FORMAT",
    },
    "power": {
        "csv": "ssdlab.telemetry.power.generic:FORMAT",
        "quarch": "ssdlab.telemetry.power.quarch:FORMAT",
        "yokotool": "ssdlab.telemetry.power.yokotool:FORMAT",
        "ipmitool_dcmi": "ssdlab.telemetry.power.ipmitool:FORMAT",
    },
}
#: ssdlab's own formats: name -> ``module:Format object``
BUILTIN = {name: target for names in BUILTIN_KINDS.values() for name, target in names.items()}
_BUILTIN_KIND = {name: kind for kind, names in BUILTIN_KINDS.items() for name in names}


def _is_format(name: str, plugin: Any) -> str | None:
    """The check of an entry point of group ``ssdlab.formats``: a :class:`Format` named as
    the entry point (so no package's format takes a built-in's name), of a known kind
    spelt as ssdlab spells it."""
    if not isinstance(plugin, Format):
        return f"{type_name(plugin)}, not a Format"
    if plugin.name != name:
        return f"a format named {plugin.name!r}: name its entry point after it"
    near = [k for k in BUILTIN_KINDS if k.casefold() == plugin.kind.casefold()]
    if near and plugin.kind not in near:
        return f"of kind {plugin.kind!r}, not {near[0]!r}"
    return None


class Formats:
    """Every format, by ``(kind, name)``; see the module docstring."""

    def __init__(self) -> None:
        self._declared: Plugins[Format[Any]] = Plugins(
            "ssdlab.formats", "format", BUILTIN, check=_is_format
        )
        self._added: dict[tuple[str, str], Format[Any]] = {}

    def all(self, kind: str | None = None) -> list[Format[Any]]:
        """The formats (of ``kind``), in registration order."""
        found: dict[tuple[str, str], Format[Any]] = {}
        for name in self._declared:
            if kind is not None and _BUILTIN_KIND.get(name, kind) != kind:
                continue  # one of ssdlab's own of another kind: not imported
            fmt = self._declared[name]
            found[fmt.kind, fmt.name] = fmt
        for key, fmt in self._added.items():
            found.pop(key, None)
            found[key] = fmt
        return [f for f in found.values() if kind is None or f.kind == kind]

    def label(self, fmt: Format[Any]) -> str:
        """``fmt`` as errors show it: kind, name and origin (``module:attribute`` and entry
        point group, or its reader's ``module:function`` when registered at run time)."""
        if fmt.name in self._declared and self._declared[fmt.name] is fmt:
            return f"{fmt.kind} {self._declared.label(fmt.name)}"
        return f"{fmt.kind} format {fmt.name!r} ({origin_of(fmt.read)}, registered at run time)"

    def reader(self, fmt: Format[R]) -> Callable[..., R]:
        """``fmt.read``; its failure other than an SsdlabError (a plug-in's bug, or one
        written for another version) is one SsdlabError naming the file and the format."""

        @wraps(fmt.read)
        def read(path: str | Path, *args: Any, **options: Any) -> R:
            try:
                return fmt.read(path, *args, **options)
            except SsdlabError:
                raise
            except Exception as exc:
                raise SsdlabError(f"{path}: {self.label(fmt)} failed: {exc!r}") from exc

        return read

    def get(self, kind: str | None, name: str) -> Format[Any] | None:
        """The format (of ``kind``) called ``name``, the last registered; None if none is."""
        named = [f for f in self.all(kind) if f.name == name]
        return named[-1] if named else None

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
            return self.reader(self.detect(path, kind))(path, **options)
        if (fmt := self.get(kind, format)) is None:
            known = ", ".join(f.name for f in self.all(kind))
            raise InputError(f"{path}: unknown {kind or ''} format {format!r} (known: {known})")
        return self.reader(fmt)(path, **options)


def sniffs(fmt: Format[Any], probe: Probe) -> bool:
    """Whether ``fmt`` recognises ``probe`` by its ``sniff``; a ``sniff`` raising (a
    plug-in's bug) is a warning naming the format and the file is taken as not of it, so
    the other formats still judge it (an SsdlabError, an unreadable file, still stops)."""
    if fmt.sniff is None:
        return False
    try:
        return bool(fmt.sniff(probe))
    except SsdlabError:
        raise
    except Exception as exc:
        warnings.warn(
            f"{FORMATS.label(fmt)}: sniff failed: {exc!r}; taken as not of this format",
            RuntimeWarning,
            stacklevel=2,
        )
        return False


def sniffed(probe: Probe, formats: Sequence[Format[Any]]) -> Format[Any] | None:
    """The last of ``formats`` whose ``sniff`` recognises ``probe`` (:func:`sniffs`), or None."""
    return next((fmt for fmt in reversed(formats) if sniffs(fmt, probe)), None)


def recognise(probe: Probe, formats: list[Format[Any]], kind: str | None = None) -> Format[Any]:
    """The last of ``formats`` whose ``sniff`` recognises ``probe``; InputError saying why
    none does (empty, malformed JSON, or not one of them; ``kind`` names what was expected)."""
    if fmt := sniffed(probe, formats):
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
        return self.formats.reader(self.format(name))

    def format(self, name: str) -> Format[R]:
        """The format ``name`` of this kind; KeyError if there is none."""
        if (fmt := self.formats.get(self.kind, name)) is None:
            raise KeyError(name)
        return fmt

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
