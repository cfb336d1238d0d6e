"""Report commands: reviews and comparisons, batches of them, and JupyterLab on results."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..console import plural
from ..errors import InputError, SsdlabError
from . import app, output_path, stderr

Figures = Annotated[
    Path | None,
    typer.Option("--figures", help="Also write every chart as PNG and SVG into this directory."),
]
Pdf = Annotated[
    bool, typer.Option("--pdf", help="Also print the report to PDF with the system Chromium.")
]
Qos = Annotated[
    str | None,
    typer.Option(
        "--qos",
        help="Review: judge the steps against this QoS profile (a built-in name, see "
        "'ssdlab qos profiles', or a profile file) in a QoS-targets section.",
    ),
]
KeepNotebook = Annotated[
    bool,
    typer.Option(
        "--keep-notebook",
        help="Keep the executed notebook (NAME.executed.ipynb, about 1 MB) beside each report.",
    ),
]


@app.command()
def report(
    results_dirs: Annotated[
        list[Path], typer.Argument(help="Results directory; two or more for a comparison.")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", parser=output_path, help="HTML file to write.")
    ] = Path("report.html"),
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    subject: Annotated[
        str | None,
        typer.Option(help="Comparison: the drive to highlight, by its label (default: the first)."),
    ] = None,
    qos: Qos = None,
    all_cells: Annotated[
        bool,
        typer.Option(
            "--all-cells",
            help="Comparison: also compare cells whose workload parameters differ (default: "
            "like-for-like cells only).",
        ),
    ] = False,
    pdf: Pdf = False,
    figures: Figures = None,
    keep_notebook: KeepNotebook = False,
) -> None:
    """Render a drive review (one directory) or a comparison (several) as one offline HTML.

    The root of a --hosts or several --target run (its fleet.json beside one results
    directory per host or target) renders as a batch: a review of each, their comparison
    and an index, in the directory
    OUTPUT names without its .html."""
    from ..fleet import load_fleet
    from ..report.batch import ReportJob, fleet_title, parent_of_runs, render
    from ..report.notebooks import discard_notebooks

    parent = parent_of_runs(results_dirs[0]) if len(results_dirs) == 1 else None
    if parent is not None:
        what, dirs = parent
        root = results_dirs[0]
        if what == "tree":
            names = " ".join(str(d) for d in dirs[:3]) + (" ..." if len(dirs) > 3 else "")
            raise InputError(
                f"{root} is not a results directory (no manifest.json) but holds "
                f"{plural(len(dirs), 'results directory', 'results directories')}: render "
                f"them all with 'ssdlab batch {root} -o DIR' (a review each, a comparison and "
                f"an index), or compare some with 'ssdlab report {names}'"
            )
        if subject is not None:
            raise InputError("--subject picks the drive of a comparison, not of a fleet's batch")
        if all_cells:
            raise InputError("--all-cells applies to a comparison of results directories")
        out_dir = output.with_suffix("") if output.suffix == ".html" else output
        if out_dir.resolve() == root.resolve():
            raise InputError(
                f"-o {output} would put the reports into the fleet's results; name another "
                "file, e.g. -o fleet-report.html (the reports go into fleet-report/)"
            )
        what = "a review of each, their comparison" if len(dirs) > 1 else "its review"
        noun = "host" if load_fleet(root).mode == "hosts" else "target"
        stderr().print(
            escape(
                f"{root} is the root of a fleet run ({plural(len(dirs), noun)}): "
                f"rendering {what} and an index into {out_dir}"
            ),
            soft_wrap=True,
            highlight=False,
        )
        return _batch(
            root,
            out_dir,
            jobs=None,
            title=title or fleet_title(root, dirs),
            qos=qos,
            pdf=pdf,
            figures=figures,
            keep_notebook=keep_notebook,
        )
    kind = "review" if len(results_dirs) == 1 else "comparison"
    if subject is not None and kind == "review":
        raise InputError(
            "--subject picks the highlighted drive of a comparison (give two or "
            "more results directories)"
        )
    if all_cells and kind == "review":
        raise InputError(
            "--all-cells applies to a comparison (give two or more results directories)"
        )
    if qos is not None and kind == "comparison":
        raise InputError("--qos judges one drive's review (give one results directory)")
    job = ReportJob(
        kind,
        tuple(results_dirs),
        output,
        title=title,
        subject=subject,
        qos=qos,
        like_for_like=not all_cells,
    )
    outcome = render(job, pdf=pdf, figures_dir=figures)
    if not keep_notebook:
        discard_notebooks(output)
    if not outcome.ok:
        raise SsdlabError(outcome.error or "report failed")
    if outcome.figures:
        stderr().print(
            f"{plural(len(outcome.figures) // 2, 'chart')} as PNG and SVG in "
            f"{escape(str(figures))}",
            highlight=False,
        )
    print(output.resolve())
    if outcome.pdf:
        print(outcome.pdf.resolve())


@app.command()
def batch(
    results_root: Annotated[Path, typer.Argument(help="Directory holding results directories.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", parser=output_path, help="Directory for the reports.")
    ],
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", help="Reports rendered at once (default: CPUs, at most 4)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="Title of the index page.")] = None,
    qos: Qos = None,
    pdf: Pdf = False,
    figures: Figures = None,
    keep_notebook: KeepNotebook = False,
) -> None:
    """Review every results directory under RESULTS_ROOT, compare them, and link all reports
    from OUTPUT/index.html; failed reports are listed there with their errors."""
    _batch(
        results_root,
        output,
        jobs=jobs,
        title=title,
        qos=qos,
        pdf=pdf,
        figures=figures,
        keep_notebook=keep_notebook,
    )


def _batch(
    results_root: Path,
    output: Path,
    *,
    jobs: int | None,
    title: str | None,
    qos: str | None,
    pdf: bool,
    figures: Path | None,
    keep_notebook: bool,
) -> None:
    """``ssdlab batch`` (and ``ssdlab report`` of a fleet root), with its progress."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..report.batch import DEFAULT_JOBS, ReportOutcome, run_batch
    from ..report.notebooks import discard_notebooks

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
            qos=qos,
        )
    index = result.index.job.output
    if not keep_notebook:
        discard_notebooks(*(o.job.output for o in (*result.reports, result.index)))
    if result.failed:
        total = len(result.reports) + 1
        raise SsdlabError(f"{len(result.failed)} of {plural(total, 'report')} failed; see {index}")
    print(index.resolve())


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def lab(
    ctx: typer.Context,
    results_root: Annotated[
        Path, typer.Argument(help="Directory holding results directories.")
    ] = Path("."),
    port: Annotated[int | None, typer.Option(help="Port of the JupyterLab server.")] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser.")
    ] = False,
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
    if no_browser:
        args.append("--no-browser")
    if os.geteuid() == 0:  # testers often run as root (block devices); JupyterLab refuses
        args.append("--allow-root")
    stderr().print(f"starting JupyterLab on {escape(str(results_root.resolve()))}", highlight=False)
    sys.stdout.flush()
    os.execv(sys.executable, [*args, *ctx.args])
