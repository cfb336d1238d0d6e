"""Import several trees of fio output as separate runs in one process (``ssdlab import
--each``): each tree becomes ``ROOT/<tree name>``, a tree that fails is reported and the others
still import."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, SsdlabError
from .importer import ImportReport, import_results
from .layout import MANIFEST


@dataclass
class TreeImport:
    """One tree of :func:`import_each`: where it goes, and its report or the error that
    stopped it."""

    tree: Path
    out: Path
    report: ImportReport | None = None
    error: SsdlabError | None = None


def _normal(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))


def _nested(a: Path, b: Path) -> bool:
    """Whether one of the (normalised) paths is the other or lies inside it."""
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def plan_each(trees: Sequence[Path], root: Path) -> list[TreeImport]:
    """``ROOT/<tree name>`` for every tree; InputError naming the problem when two trees
    have the same name, an output already holds results, or an output and a tree overlap
    (one inside the other), so nothing is imported."""
    plan = [TreeImport(tree, root / _normal(tree).name) for tree in trees]
    seen: dict[str, Path] = {}
    for item in plan:
        name = item.out.name
        if not name or name in (".", ".."):
            raise InputError(f"{item.tree}: a tree needs a name to import into {root}/<name>")
        if name in seen:
            raise InputError(f"{seen[name]} and {item.tree} would both import into {item.out}")
        seen[name] = item.tree
        if (item.out / MANIFEST).exists():
            raise InputError(f"{item.out} already holds results; import into a new directory")
        for other in plan:
            if _nested(_normal(item.out), _normal(other.tree)):
                raise InputError(f"{item.out} (for {item.tree}) overlaps the tree {other.tree}")
    return plan


def import_each(
    trees: Sequence[Path],
    root: Path,
    *,
    strict: bool = False,
    on_start: Callable[[TreeImport], None] | None = None,
    on_file: Callable[[int, int], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    on_done: Callable[[TreeImport], None] | None = None,
) -> list[TreeImport]:
    """Import every tree into ``ROOT/<tree name>`` (checked first by :func:`plan_each`), one
    after the other; a tree whose import raises a user error (``strict`` makes a skipped file
    one) keeps it in ``error`` and the next tree goes on. ``on_start``/``on_done`` frame each
    tree; ``on_file`` and ``on_status`` are :func:`~ssdlab.importer.import_results`'."""
    plan = plan_each(trees, root)
    for item in plan:
        if on_start:
            on_start(item)
        try:
            item.report = import_results(
                [item.tree],
                item.out,
                strict=strict,
                on_file=on_file,
                on_status=on_status,
            )
        except SsdlabError as exc:
            item.error = exc
        if on_done:
            on_done(item)
    return plan
