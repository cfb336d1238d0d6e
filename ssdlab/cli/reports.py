"""Report commands: review and comparison reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import SsdlabError
from . import app


@app.command()
def report(
    results_dirs: Annotated[list[Path], typer.Argument(help="Results directory.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
) -> None:
    """Render the review report of a results directory as one offline HTML file."""
    from ..review import render_review

    if len(results_dirs) != 1:
        raise SsdlabError("comparison reports of several results directories are not built yet")
    path = render_review(results_dirs[0], output, title=title)
    print(path.resolve())
