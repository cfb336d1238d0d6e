"""Where results are: the results directories and SMART histories at or below a directory,
and what a directory that is no results directory itself holds. Light: commands that render
nothing use it (no DuckDB, no altair)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError, SsdlabError
from .layout import FLEET_FILE, MANIFEST, SMART_HISTORY


def find_results(root: Path | str, exclude: tuple[Path, ...] = ()) -> list[Path]:
    """Results directories (holding ``manifest.json``) at or below ``root``, sorted.

    Hidden directories, directories inside a results directory and ``exclude`` are skipped.
    """
    return find_marked(Path(root), exclude)[MANIFEST]


def find_marked(root: Path, exclude: tuple[Path, ...] = ()) -> dict[str, list[Path]]:
    """Results directories and SMART histories at or below ``root``, by the file marking
    them (``manifest.json``, ``smart_history.json``), sorted; nothing inside either."""
    if not root.is_dir():
        raise InputError(f"{root}: {'not a directory' if root.exists() else 'no such directory'}")
    excluded = {p.resolve() for p in exclude}
    found: dict[str, list[Path]] = {MANIFEST: [], SMART_HISTORY: []}
    for dirpath, dirnames, filenames in os.walk(root):
        path = Path(dirpath)
        marker = next((m for m in found if m in filenames), None)
        if marker is not None:
            found[marker].append(path)
            dirnames.clear()
            continue
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and (path / d).resolve() not in excluded
        )
    return {marker: sorted(paths) for marker, paths in found.items()}


def parent_of_runs(path: Path) -> tuple[str, list[Path]] | None:
    """What ``path`` holds when it is no results directory itself but a parent of some:
    ``("fleet", dirs)`` for the root of a ``--hosts`` run (``fleet.json``: one results
    directory per host and target), ``("tree", dirs)`` for any other directory holding
    results directories; None for a results directory (or a path holding none)."""
    if not path.is_dir() or (path / MANIFEST).exists():
        return None
    if (path / FLEET_FILE).is_file():
        from .fleet.store import load_fleet

        try:
            dirs = [d for d in load_fleet(path).results_dirs if (d / MANIFEST).exists()]
        except SsdlabError:
            dirs = []
        return ("fleet", dirs or find_results(path))
    try:
        dirs = find_results(path)
    except InputError:
        return None
    return ("tree", dirs) if dirs else None
