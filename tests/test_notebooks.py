"""The report notebooks against the section registries: each notebook shows exactly the
sections registered for it, in order, and its cells call library functions only."""

from __future__ import annotations

import ast

import nbformat
import pytest

from ssdlab.resources import notebook_path
from ssdlab.review import compare, drive, fleet_endurance, index
from ssdlab.review.section import Registry

REGISTRIES = {
    r.notebook: r
    for r in (drive.SECTIONS, compare.SECTIONS, index.SECTIONS, fleet_endurance.SECTIONS)
}
#: the only statements a report cell may hold besides the section it shows
SETUP = (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr)


def _cells(name: str) -> list[ast.Module]:
    nb = nbformat.read(notebook_path(name), as_version=4)
    nbformat.validate(nb)
    return [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]


def _shown(cell: ast.Module) -> str | None:
    """The function whose result the cell displays (its last expression), if it is a call."""
    last = cell.body[-1] if cell.body else None
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return None


@pytest.mark.parametrize("name", sorted(REGISTRIES))
def test_notebook_shows_its_registered_sections(name: str) -> None:
    registry: Registry = REGISTRIES[name]
    parameters, *cells = _cells(name)
    assert all(isinstance(s, ast.Assign) for s in parameters.body)  # the papermill parameters
    assert [_shown(c) for c in cells] == registry.names
    for cell in cells:  # no logic in notebooks (no def, class, loop or branch)
        assert all(isinstance(s, SETUP) for s in cell.body)


def test_explore_notebook_shows_no_section() -> None:
    shown = {_shown(c) for c in _cells("explore")}
    registered = {n for r in REGISTRIES.values() for n in r.names}
    assert not shown & registered


@pytest.mark.parametrize("name", sorted(REGISTRIES))
def test_every_parameter_reaches_a_cell(name: str) -> None:
    """A parameter papermill sets (``qos`` of the drive review: the profile its QoS-targets
    section is given) is read by some cell, so a report option is never silently dropped."""
    parameters, *cells = _cells(name)
    given = {t.id for s in parameters.body for t in s.targets if isinstance(t, ast.Name)}
    read = {
        n.id
        for cell in cells
        for n in ast.walk(cell)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    assert given - read <= {"title"}  # the title is the report's, set by the renderer
