"""Render many reports: one review per results directory, a comparison of them and an index.

Reviews render in parallel in a bounded pool of worker processes (each report runs its own
notebook kernel; a kernel that fails to start is retried once). A failing report does not
stop the others: it is listed in the index with its error and its partial report. Reports can
also be printed to PDF with the system Chromium and their charts written as PNG and SVG.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import nbformat

from ..discover import find_results
from ..errors import InputError, SsdlabError
from ..io.text import check_utf8_path
from ..layout import MANIFEST
from ..manifest import Manifest
from ..resources import notebook_path
from ..review import index as index_sections
from ..review.compare import display_names
from . import render_report
from ._files import check_writable
from .notebooks import (
    comparison_title,
    qos_parameter,
    render_comparison,
    render_review,
    review_title,
)

INDEX = "index.html"
COMPARISON = "comparison"
DEFAULT_JOBS = max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class ReportJob:
    """One report to render: a review of one results directory or a comparison of several."""

    kind: Literal["review", "comparison", "index"]
    inputs: tuple[Path, ...]
    output: Path
    title: str | None = None
    subject: str | None = None
    #: a review's QoS profile (built-in name or file); a comparison's like-for-like rule
    qos: str | None = None
    like_for_like: bool = True

    @property
    def name(self) -> str:
        return self.output.stem


@dataclass
class ReportOutcome:
    """How a report job ended: its files, or the error (with the partial report, if any)."""

    job: ReportJob
    error: str | None = None
    seconds: float = 0.0
    pdf: Path | None = None
    figures: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def partial(self) -> Path | None:
        path = self.job.output.with_suffix(".partial.html")
        return path if path.is_file() else None

    def entry(self, base: Path, root: Path) -> dict[str, Any]:
        """What the index shows of this report: links relative to ``base``, results
        directories relative to ``root``."""

        def rel(path: Path | None) -> str | None:
            return os.path.relpath(path, base) if path else None

        return {
            "name": self.job.name,
            "kind": self.job.kind,
            "title": self.job.title or self.job.name,
            "inputs": [os.path.relpath(p, root) for p in self.job.inputs],
            "html": rel(self.job.output) if self.ok else None,
            "partial": rel(self.partial) if not self.ok else None,
            "pdf": rel(self.pdf),
            "figures": rel(self.figures[0].parent) if self.figures else None,
            "charts": len(self.figures) // 2,
            "error": self.error,
            "seconds": round(self.seconds, 1),
        }


def _render_html(job: ReportJob) -> Path:
    if job.kind == "review":
        return render_review(job.inputs[0], job.output, title=job.title, qos=job.qos)
    return render_comparison(
        list(job.inputs),
        job.output,
        title=job.title,
        subject=job.subject,
        like_for_like=job.like_for_like,
    )


def render(job: ReportJob, *, pdf: bool = False, figures_dir: Path | None = None) -> ReportOutcome:
    """Render one report (a kernel that does not start or is killed is retried once by
    :func:`~ssdlab.report.render_report`), then its PDF and figures on request.

    Errors a user can act on end up in the outcome; nothing is raised for them.
    """
    from . import chromium, export_figures

    start = time.monotonic()
    try:
        _render_html(job)
        error = None
    except SsdlabError as exc:
        error = str(exc)
    outcome = ReportOutcome(job, error=error)
    if outcome.ok:
        try:
            if pdf:
                outcome.pdf = chromium.print_pdf(job.output, job.output.with_suffix(".pdf"))
            if figures_dir is not None:
                executed = nbformat.read(job.output.with_suffix(".executed.ipynb"), as_version=4)
                outcome.figures = export_figures(executed, figures_dir)
        except SsdlabError as exc:
            outcome.error = str(exc)
    outcome.seconds = time.monotonic() - start
    return outcome


def _render_in_worker(job: ReportJob, pdf: bool, figures_dir: Path | None) -> ReportOutcome:
    """Worker entry point: even an unexpected exception becomes this report's error."""
    try:
        return render(job, pdf=pdf, figures_dir=figures_dir)
    except Exception as exc:  # one broken report must not stop the batch
        return ReportOutcome(job, error=f"internal error: {type(exc).__name__}: {exc}")


def _slug(results_dir: Path, root: Path) -> str:
    relative = results_dir.relative_to(root) if results_dir != root else Path(root.name)
    slug = "-".join(part for part in relative.parts if part) or "results"
    return f"{slug}-run" if slug in (COMPARISON, Path(INDEX).stem) else slug


@dataclass
class BatchResult:
    """Every report of a batch and the index linking them."""

    reports: list[ReportOutcome]
    index: ReportOutcome

    @property
    def failed(self) -> list[ReportOutcome]:
        return [o for o in (*self.reports, self.index) if not o.ok]


def run_batch(
    root: Path,
    out_dir: Path,
    *,
    jobs: int = DEFAULT_JOBS,
    pdf: bool = False,
    figures_dir: Path | None = None,
    title: str | None = None,
    on_done: Callable[[ReportOutcome, int], None] | None = None,
    qos: str | None = None,
) -> BatchResult:
    """Review every results directory under ``root``, compare the ones that rendered, and
    write ``out_dir/index.html``. ``jobs`` bounds the worker processes; ``on_done(outcome,
    total)`` reports progress (``total`` counts the comparison and the index); ``qos``
    judges every review against that QoS profile."""
    if jobs < 1:
        raise InputError("--jobs must be at least 1")
    qos = qos_parameter(qos)  # a bad profile fails here, not in every review
    dirs = find_results(root, exclude=(out_dir,))
    if not dirs:
        raise InputError(f"{root}: no ssdlab results directory found (no {MANIFEST} below it)")
    check_utf8_path(out_dir, "-o")
    check_writable(out_dir, directory=True)  # one error now, not one per report
    if figures_dir is not None:
        check_writable(figures_dir, directory=True)
    unfinished = {d: (name, state) for name, d, state in _fleet_states(root) if state != "complete"}
    states = {d: state for d, (_, state) in unfinished.items()}
    reviews = [
        ReportJob(
            "review",
            (d,),
            out_dir / f"{_slug(d, root)}.html",
            title=_review_title(d, states.get(d, "")),
            qos=qos,
        )
        for d in dirs
    ]
    missing = [  # a fleet's members that left no results: listed in the index as failed
        ReportOutcome(
            ReportJob("review", (d,), out_dir / f"{_slug(d, root)}.html", title=name),
            error=f"no results to review ({state})",
        )
        for d, (name, state) in unfinished.items()
        if d not in dirs
    ]
    total = len(reviews) + (len(reviews) >= 2) + 1

    def figures_for(job: ReportJob) -> Path | None:
        return figures_dir / job.name if figures_dir is not None else None

    done: list[ReportOutcome] = []

    def finished(outcome: ReportOutcome) -> None:
        done.append(outcome)
        if on_done:
            on_done(outcome, total)

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, total - 1), mp_context=context) as pool:

        def submit(job: ReportJob) -> Future[ReportOutcome]:
            return pool.submit(_render_in_worker, job, pdf, figures_for(job))

        # the comparison of every run goes first (the longest report) and overlaps the reviews
        def compare(runs: Sequence[Path]) -> ReportJob:
            return _comparison_job(runs, out_dir, [unfinished[d] for d in runs if d in unfinished])

        comparison = submit(compare(dirs)) if len(dirs) >= 2 else None
        for future in as_completed([submit(job) for job in reviews]):
            finished(future.result())
        if comparison is not None:
            outcome = comparison.result()
            ok = {o.job.inputs[0] for o in done if o.ok}
            rendered = [d for d in dirs if d in ok]
            if not outcome.ok and len(rendered) < len(dirs):  # compare the runs that rendered
                job = compare(rendered)
                outcome = (
                    submit(job).result()
                    if len(rendered) >= 2
                    else ReportOutcome(job, error="fewer than two reviews rendered")
                )
            finished(outcome)
    order = {d: i for i, d in enumerate(dirs)}
    reports = sorted(done, key=lambda o: (o.job.kind != "review", order.get(o.job.inputs[0], 0)))
    index = _render_index(
        reports + missing, out_dir, root, title or f"ssdlab reports: {root.resolve().name}"
    )
    finished(index)
    return BatchResult(reports, index)


def _fleet_states(root: Path) -> list[tuple[str, Path, str]]:
    """The members of the fleet rooted at ``root`` with their states
    (:meth:`~ssdlab.fleet.store.Fleet.states`); none when ``root`` is no fleet's root."""
    from ..fleet import load_fleet
    from ..layout import FLEET_FILE

    if not (root / FLEET_FILE).is_file():
        return []
    try:
        return load_fleet(root).states()
    except SsdlabError:
        return []


def fleet_title(root: Path, dirs: Sequence[Path]) -> str:
    """The index title of a fleet root's reports: the suite, the members, and each member
    that did not complete with its state (``failed: ERROR``)."""
    from ..console import plural
    from ..fleet import load_fleet

    try:
        suite = Manifest.load(dirs[0]).suite if dirs else None
        fleet = load_fleet(root)
        noun, count = ("host" if fleet.mode == "hosts" else "target"), fleet.members.height
        unfinished = [f"{name} {state}" for name, _, state in fleet.states() if state != "complete"]
    except SsdlabError:
        suite, noun, count, unfinished = None, "member", len(dirs), []
    what = f"suite {suite} on " if suite else ""
    status = f" ({len(unfinished)} did not complete: {'; '.join(unfinished)})" if unfinished else ""
    return f"Fleet run {root.resolve().name}: {what}{plural(count, noun)}{status}"


def _review_title(results_dir: Path, state: str = "") -> str | None:
    """A review's title; a fleet member that did not complete says its ``state``."""
    try:
        title = review_title(Manifest.load(results_dir))
    except SsdlabError:
        return None  # the review will fail and say why
    return f"{title} ({state})" if state else title


def _comparison_job(
    dirs: Sequence[Path], out_dir: Path, unfinished: Sequence[tuple[str, str]] = ()
) -> ReportJob:
    """The comparison of ``dirs``; its title names the ``unfinished`` fleet members (name,
    state), whose missing steps are their failure, not a difference between drives."""
    try:
        title = f"Comparison: {comparison_title(display_names([Manifest.load(d) for d in dirs]))}"
    except SsdlabError:
        title = None  # the comparison will fail and say why
    if title and unfinished:
        states = "; ".join(f"{name} {state}" for name, state in unfinished)
        title += f" ({states}: steps missing there are no difference between drives)"
    return ReportJob("comparison", tuple(dirs), out_dir / f"{COMPARISON}.html", title=title)


def _render_index(
    reports: list[ReportOutcome], out_dir: Path, root: Path, title: str
) -> ReportOutcome:
    job = ReportJob("index", (), out_dir / INDEX, title=title)
    start = time.monotonic()
    params = {
        "title": title,
        "reports": [o.entry(out_dir, root) for o in reports],
        "results_dirs": [
            str(o.job.inputs[0].resolve()) for o in reports if o.ok and o.job.kind == "review"
        ],
    }
    outcome = ReportOutcome(job)
    try:
        render_report(notebook_path(index_sections.NOTEBOOK), params, job.output, title=title)
    except SsdlabError as exc:
        outcome.error = str(exc)
    outcome.seconds = time.monotonic() - start
    return outcome
