"""Report commands: reviews and comparisons, batches of them, and JupyterLab on results."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import InputError, SsdlabError
from . import app, stderr

Figures = Annotated[
    Path | None,
    typer.Option("--figures", help="Also write every chart as PNG and SVG into this directory."),
]
Pdf = Annotated[
    bool, typer.Option("--pdf", help="Also print the report to PDF with the system Chromium.")
]


@app.command()
def report(
    results_dirs: Annotated[
        list[Path], typer.Argument(help="Results directory; two or more for a comparison.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    subject: Annotated[
        str | None,
        typer.Option(help="Comparison: the drive to highlight, by its label (default: the first)."),
    ] = None,
    pdf: Pdf = False,
    figures: Figures = None,
) -> None:
    """Render a drive review (one directory) or a comparison (several) as one offline HTML."""
    from ..report.batch import ReportJob, render

    kind = "review" if len(results_dirs) == 1 else "comparison"
    if subject is not None and kind == "review":
        raise InputError(
            "--subject picks the highlighted drive of a comparison (give two or "
            "more results directories)"
        )
    job = ReportJob(kind, tuple(results_dirs), output, title=title, subject=subject)
    outcome = render(job, pdf=pdf, figures_dir=figures)
    if not outcome.ok:
        raise SsdlabError(outcome.error or "report failed")
    if outcome.figures:
        stderr().print(
            f"{len(outcome.figures) // 2} charts as PNG and SVG in {escape(str(figures))}",
            highlight=False,
        )
    print(output.resolve())
    if outcome.pdf:
        print(outcome.pdf.resolve())


@app.command()
def batch(
    results_root: Annotated[Path, typer.Argument(help="Directory holding results directories.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the reports.")],
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", help="Reports rendered at once (default: CPUs, at most 4)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="Title of the index page.")] = None,
    pdf: Pdf = False,
    figures: Figures = None,
) -> None:
    """Review every results directory under RESULTS_ROOT, compare them, and link all reports
    from OUTPUT/index.html; failed reports are listed there with their errors."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..report.batch import DEFAULT_JOBS, ReportOutcome, run_batch

    columns = (
        TextColumn("rendering reports"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    err = stderr()
    with Progress(*columns, console=err, disable=not err.is_terminal) as progress:
        task = progress.add_task("reports", total=None)

        def on_done(outcome: ReportOutcome, total: int) -> None:
            progress.update(task, total=total, advance=1)
            name = escape(outcome.job.output.name)
            if outcome.ok:
                progress.console.print(
                    f"rendered {name} ({outcome.seconds:.1f} s)", highlight=False
                )
            else:
                progress.console.print(
                    f"[red]failed[/] {name}: {escape(outcome.error or '')}",
                    soft_wrap=True,
                    highlight=False,
                )

        result = run_batch(
            results_root,
            output,
            jobs=jobs or DEFAULT_JOBS,
            pdf=pdf,
            figures_dir=figures,
            title=title,
            on_done=on_done,
        )
    index = result.index.job.output
    if result.failed:
        total = len(result.reports) + 1
        raise SsdlabError(f"{len(result.failed)} of {total} reports failed; see {index}")
    print(index.resolve())


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def lab(
    ctx: typer.Context,
    results_root: Annotated[
        Path, typer.Argument(help="Directory holding results directories.")
    ] = Path("."),
    port: Annotated[int | None, typer.Option(help="Port of the JupyterLab server.")] = None,
    browser: Annotated[bool, typer.Option(help="Open a browser.")] = True,
) -> None:
    """Open JupyterLab on RESULTS_ROOT with the explore notebook (copied there once) and its
    catalog built; further options go to JupyterLab."""
    from ..catalog import catalog
    from ..resources import notebook_path

    catalog(results_root).close()  # build the Parquet cache now; the notebook reuses it
    notebook = results_root / "explore.ipynb"
    if not notebook.exists():
        shutil.copyfile(notebook_path("explore"), notebook)
    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        str(notebook.resolve()),
        f"--ServerApp.root_dir={results_root.resolve()}",
    ]
    if port is not None:
        args.append(f"--port={port}")
    if not browser:
        args.append("--no-browser")
    if os.geteuid() == 0:  # testers often run as root (block devices); JupyterLab refuses
        args.append("--allow-root")
    stderr().print(f"starting JupyterLab on {escape(str(results_root.resolve()))}", highlight=False)
    sys.stdout.flush()
    os.execv(sys.executable, [*args, *ctx.args])
