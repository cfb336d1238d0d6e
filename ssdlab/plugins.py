"""Named plug-ins of one kind, papermill-style: ssdlab's own, those any installed package
declares under an entry-point group, and those registered at run time.

A package adds one in its ``pyproject.toml``, for example a frame builder::

    [project.entry-points."ssdlab.frames"]
    fan_speed = "mypkg.frames:fan_speed_frame"

Plug-ins are imported on first use and judged by their registry's ``check`` (a frame builder
or a power source must be callable, a format a :class:`~ssdlab.formats.Format`); one that
cannot be imported or fails its check is an error naming it, its ``module:attribute`` and its
entry-point group (:meth:`Plugins.label`), never skipped. An entry point cannot take a name
ssdlab uses itself (one of its own plug-ins, or a ``reserved`` name such as a core frame) nor
one another package declares: that is an error naming both origins, never a silent
replacement. Only :meth:`Plugins.register`, at run time, replaces a plug-in of a name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from .errors import SsdlabError

T = TypeVar("T")

#: What is wrong with the plug-in of a name, ``check(name, plugin)``: a phrase completing
#: "<plug-in> is ..." (``"int, not callable"``), or None when it is usable.
Check = Callable[[str, Any], "str | None"]


def type_name(value: Any) -> str:
    """The type of ``value`` for a message: ``dict``, ``pandas.core.frame.DataFrame``."""
    cls = type(value)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def is_callable(name: str, plugin: Any) -> str | None:
    """The check of plug-ins that are functions (frame builders, power source factories)."""
    return None if callable(plugin) else f"{type_name(plugin)}, not callable"


def origin_of(plugin: Any) -> str:
    """``module:qualified name`` of an object (a plug-in registered at run time)."""
    return f"{getattr(plugin, '__module__', '?')}:{getattr(plugin, '__qualname__', '?')}"


def _declared_by(point: EntryPoint) -> str:
    """Who declares ``point``: a package (name and version), or ssdlab itself."""
    dist = getattr(point, "dist", None)
    who = f"package {dist.name} {dist.version}" if dist is not None else "ssdlab itself"
    return f"{who} ({point.value})"


class Plugins(Mapping[str, T], Generic[T]):
    """``name -> plug-in`` of one entry-point ``group``; ``builtins`` maps ssdlab's own
    names to ``"module:attribute"``; ``reserved`` are names of ssdlab's own that are not
    plug-ins (no entry point may take them); ``check`` judges every plug-in as it is loaded
    or registered."""

    def __init__(
        self,
        group: str,
        kind: str,
        builtins: Mapping[str, str],
        *,
        check: Check | None = None,
        reserved: Iterable[str] = (),
    ) -> None:
        self.group = group
        self.kind = kind
        self.check = check
        self.reserved = frozenset(reserved)
        self._builtins = {n: EntryPoint(n, v, group) for n, v in builtins.items()}
        self._declared: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, T] = {}
        self._registered: dict[str, T] = {}

    def _points(self) -> dict[str, EntryPoint]:
        if self._declared is None:
            declared = dict(self._builtins)
            for point in entry_points(group=self.group):
                if point.name in self.reserved:
                    other = f"ssdlab's own {point.name!r}, which is not a plug-in"
                elif point.name in declared:
                    other = _declared_by(declared[point.name])
                else:
                    declared[point.name] = point
                    continue
                raise SsdlabError(
                    f"{self.kind} {point.name!r} of {_declared_by(point)}, entry point group "
                    f"{self.group!r}, clashes with {other}: rename or uninstall the plug-in"
                )
            self._declared = declared
        return self._declared

    def register(self, name: str, plugin: T) -> None:
        """Use ``plugin`` as ``name`` in this process (until :meth:`unregister`), in place
        of any plug-in of that name."""
        self._judge(
            name, plugin, f"{self.kind} {name!r} ({origin_of(plugin)}, registered at run time)"
        )
        self._registered[name] = plugin

    def unregister(self, name: str) -> None:
        """Undo :meth:`register`: a declared plug-in of that name applies again."""
        del self._registered[name]

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: ``module:attribute``."""
        if name in self._registered:
            return origin_of(self._registered[name])
        return self._points()[name].value

    def label(self, name: str) -> str:
        """``name`` as errors show it: ``kind 'name' (module:attribute, entry point group
        'group')``, or ``(module:attribute, registered at run time)``."""
        where = (
            "registered at run time"
            if name in self._registered
            else f"entry point group {self.group!r}"
        )
        return f"{self.kind} {name!r} ({self.origin(name)}, {where})"

    def _judge(self, name: str, plugin: T, label: str) -> None:
        """SsdlabError when ``check`` finds ``plugin`` (shown as ``label``) unusable."""
        problem = self.check(name, plugin) if self.check is not None else None
        if problem is not None:
            raise SsdlabError(f"{label} is {problem}")

    def __getitem__(self, name: str) -> T:
        if name in self._registered:
            return self._registered[name]
        if name in self._loaded:
            return self._loaded[name]
        point = self._points()[name]
        try:
            plugin = point.load()
        except Exception as exc:  # a missing module or attribute, or its import raising
            reason = f"{type(exc).__name__}: {exc}"
            raise SsdlabError(f"{self.label(name)} cannot be loaded: {reason}") from exc
        self._judge(name, plugin, self.label(name))
        self._loaded[name] = plugin
        return plugin

    def __iter__(self) -> Iterator[str]:
        points = self._points()
        return iter([*points, *(n for n in self._registered if n not in points)])

    def __len__(self) -> int:
        return len(list(iter(self)))
