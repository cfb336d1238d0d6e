"""Report commands: reviews and comparisons, batches of them, and JupyterLab on results."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..console import plural
from ..errors import InputError, SsdlabError
from . import app, check_html, output_path, stderr

#: the notebook ``ssdlab lab`` opens, copied into the results root once
LAB_NOTEBOOK = "explore.ipynb"

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
    from ..discover import parent_of_runs
    from ..fleet import load_fleet

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
        from ..report.batch import fleet_title

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
    check_html(output)
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
    if kind == "comparison":
        _check_comparable(results_dirs, subject, like_for_like=not all_cells)
    from ..report.batch import ReportJob, render  # altair, nbconvert: once all is checked
    from ..report.notebooks import discard_notebooks

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
    try:
        if not keep_notebook:
            discard_notebooks(output)
    finally:
        if not outcome.ok:  # the report's own error, not one discarding its notebook
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


def _check_comparable(results_dirs: list[Path], subject: str | None, like_for_like: bool) -> None:
    """InputError when the runs have nothing to compare: no test that two or more of them
    ran (like for like, unless not ``like_for_like``), saying what ``--all-cells`` adds."""
    from ..review.compare import load_comparison

    analysis = load_comparison(results_dirs, subject, like_for_like).analysis
    if analysis.scores.height:
        return
    left_out = analysis.excluded.height
    hint = (
        f"; {plural(left_out, 'measurement')} whose workload parameters differ left out "
        "(--all-cells compares them)"
        if left_out
        else ""
    )
    raise InputError(
        "nothing to compare: no test was measured by two or more of "
        f"{', '.join(repr(name) for name in analysis.names)}{hint}"
    )


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
    try:
        if not keep_notebook:
            discard_notebooks(*(o.job.output for o in (*result.reports, result.index)))
    finally:
        if result.failed:  # the reports' errors, not one discarding their notebooks
            total = len(result.reports) + 1
            raise SsdlabError(
                f"{len(result.failed)} of {plural(total, 'report')} failed; see {index}"
            )
    print(index.resolve())


def lab_process(
    results_root: Path, private: Path, options: list[str]
) -> tuple[list[str], dict[str, str]]:
    """The command and environment of ``ssdlab lab``'s JupyterLab server, with ``options`` for
    it. The server starts in ``private`` (a :func:`~ssdlab.report.kernel.private_directory`)
    and serves ``results_root``; its kernels start in a notebook's directory, as users expect
    when they open files there, but inherit an environment in which nothing is imported from
    there (:func:`~ssdlab.report.kernel.kernel_environment`)."""
    from ..report.kernel import kernel_environment

    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        str((results_root / LAB_NOTEBOOK).resolve()),
        f"--ServerApp.root_dir={results_root.resolve()}",
    ]
    if os.geteuid() == 0:  # testers often run as root (block devices); JupyterLab refuses
        args.append("--allow-root")
    return [*args, *options], kernel_environment(os.environ, private)


def _wait(proc: subprocess.Popen[bytes]) -> int:
    """The exit status of ``proc`` (128 + N when signal N ended it): SIGTERM and SIGHUP are
    passed on to it; a Ctrl-C at the terminal reaches it directly and is ignored here."""

    def forward(signum: int, _frame: object) -> None:
        proc.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code if code >= 0 else 128 - code


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
    catalog built; further options go to JupyterLab. Its kernels import nothing from
    RESULTS_ROOT or the current directory."""
    from ..atomic import write_error
    from ..catalog import catalog
    from ..report.kernel import private_directory
    from ..resources import notebook_path

    catalog(results_root).close()  # build the Parquet cache now; the notebook reuses it
    notebook = results_root / LAB_NOTEBOOK
    if not notebook.exists():
        try:
            shutil.copyfile(notebook_path("explore"), notebook)
        except OSError as exc:
            raise write_error(notebook, exc) from None
    options = [f"--port={port}"] if port is not None else []
    if no_browser:
        options.append("--no-browser")
    stderr().print(f"starting JupyterLab on {escape(str(results_root.resolve()))}", highlight=False)
    sys.stdout.flush()
    with private_directory() as private:
        args, env = lab_process(results_root, private, [*options, *ctx.args])
        code = _wait(subprocess.Popen(args, env=env, cwd=private))
    raise typer.Exit(code)
