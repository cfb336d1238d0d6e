"""Named plug-ins of one kind, papermill-style: ssdlab's own, those any installed package
declares under an entry-point group, and those registered at run time.

A package adds one in its ``pyproject.toml``, for example a frame builder::

    [project.entry-points."ssdlab.frames"]
    fan_speed = "mypkg.frames:fan_speed_frame"

Plug-ins are imported on first use; one that cannot be imported is an error naming it and
where it was declared, never skipped. A name registered later (or by a package) replaces
ssdlab's own of that name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from .errors import SsdlabError

T = TypeVar("T")


class Plugins(Mapping[str, T], Generic[T]):
    """``name -> plug-in`` of one entry-point ``group``; ``builtins`` maps ssdlab's own
    names to ``"module:attribute"``."""

    def __init__(self, group: str, kind: str, builtins: Mapping[str, str]) -> None:
        self.group = group
        self.kind = kind
        self._builtins = {n: EntryPoint(n, v, group) for n, v in builtins.items()}
        self._declared: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, T] = {}
        self._registered: dict[str, T] = {}

    def _points(self) -> dict[str, EntryPoint]:
        if self._declared is None:
            self._declared = self._builtins | {ep.name: ep for ep in entry_points(group=self.group)}
        return self._declared

    def register(self, name: str, plugin: T) -> None:
        """Use ``plugin`` as ``name`` in this process (until :meth:`unregister`)."""
        self._registered[name] = plugin

    def unregister(self, name: str) -> None:
        """Undo :meth:`register`: a declared plug-in of that name applies again."""
        del self._registered[name]

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: ``module:attribute``."""
        if name in self._registered:
            plugin = self._registered[name]
            return f"{getattr(plugin, '__module__', '?')}:{getattr(plugin, '__qualname__', '?')}"
        return self._points()[name].value

    def __getitem__(self, name: str) -> T:
        if name in self._registered:
            return self._registered[name]
        if name in self._loaded:
            return self._loaded[name]
        point = self._points()[name]
        try:
            plugin = point.load()
        except (ImportError, AttributeError) as exc:
            where = f"{point.value}, entry point group {self.group!r}"
            raise SsdlabError(f"{self.kind} {name!r} ({where}) cannot be loaded: {exc}") from exc
        self._loaded[name] = plugin
        return plugin

    def __iter__(self) -> Iterator[str]:
        points = self._points()
        return iter([*points, *(n for n in self._registered if n not in points)])

    def __len__(self) -> int:
        return len(list(iter(self)))
