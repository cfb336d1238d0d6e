"""The report notebooks: a drive review or a comparison rendered to one offline HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..manifest import Manifest
from ..resources import notebook_path
from ..review import compare, drive
from . import render_report
from ._files import remove


def review_title(manifest: Manifest) -> str:
    """The default title of a run's review; a scaled run says so in it (at the top of the
    page, before any figure is read)."""
    title = f"{manifest.label}: {manifest.suite} suite"
    if manifest.scale != 1:
        title += f" (scaled run: {manifest.scale:g} × durations and sizes)"
    return title


def executed_notebook(output_html: Path) -> Path:
    """Where :func:`~ssdlab.report.render_report` keeps a report's executed notebook."""
    return output_html.with_suffix(".executed.ipynb")


def discard_notebooks(*outputs_html: Path) -> None:
    """Remove the executed notebooks (about 1 MB each) kept beside these HTML reports: a
    report is one HTML file; ``ssdlab report --keep-notebook`` keeps them. Run after
    anything that reads them (``--figures``)."""
    for output in outputs_html:
        remove(executed_notebook(output))


def comparison_title(names: Sequence[str]) -> str:
    """The compared drives, for a comparison's default title."""
    return " vs ".join(names) if len(names) <= 3 else f"{len(names)} drives compared"


def qos_parameter(qos: str | Path | None) -> str | None:
    """A review's ``qos`` parameter: a built-in profile's name, or a profile file's absolute
    path (the notebook runs in another directory); checked before a kernel starts."""
    if qos is None:
        return None
    from ..qos import load_profile

    load_profile(qos)  # InputError naming the file and key
    path = Path(qos)
    return str(path.resolve()) if path.is_file() else str(qos)


def render_review(
    results_dir: Path, output: Path, *, title: str | None = None, qos: str | Path | None = None
) -> Path:
    """Execute the review notebook on ``results_dir`` and write one offline HTML file;
    ``qos`` (a built-in QoS profile or a profile file) adds the QoS-targets verdicts."""
    manifest = Manifest.load(results_dir)  # fail fast, before a kernel starts
    title = title or review_title(manifest)
    params = {"results_dir": str(results_dir.resolve()), "title": title, "qos": qos_parameter(qos)}
    return render_report(notebook_path(drive.NOTEBOOK), params, output, title=title)


def render_comparison(
    results_dirs: Sequence[Path],
    output: Path,
    *,
    title: str | None = None,
    subject: str | None = None,
    like_for_like: bool = True,
) -> Path:
    """Execute the comparison notebook on several results directories; one offline HTML.
    ``like_for_like=False`` also compares cells whose workload parameters differ."""
    if len(results_dirs) < 2:
        raise InputError("a comparison needs two or more results directories")
    names = compare.display_names([Manifest.load(d) for d in results_dirs])  # fail fast
    compare.check_subject(names, subject)
    title = title or f"Comparison: {comparison_title(names)}"
    params = {
        "results_dirs": [str(d.resolve()) for d in results_dirs],
        "title": title,
        "subject": subject,
        "like_for_like": like_for_like,
    }
    return render_report(notebook_path(compare.NOTEBOOK), params, output, title=title)
