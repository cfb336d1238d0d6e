"""Locate the notebooks and nbconvert templates shipped with ssdlab.

In a source checkout (editable install) they live at the repository's top level; a wheel
carries copies under ``ssdlab/_share``.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _share_root() -> Path:
    bundled = _PKG / "_share"
    return bundled if bundled.is_dir() else _PKG.parent


def templates_dir() -> Path:
    """Directory holding ssdlab's nbconvert templates (``ssdlab`` is the report template)."""
    return _share_root() / "templates"


def notebook_path(name: str) -> Path:
    """Path of a shipped notebook, e.g. ``notebook_path("drive_review")``."""
    return _share_root() / "notebooks" / f"{name}.ipynb"
