"""Reports: execute a notebook with papermill, export it as one offline HTML file.

:mod:`.notebooks` renders a drive review or a comparison, :mod:`.batch` renders many reports
and their index in worker processes; :mod:`.execute`, :mod:`.export`, :mod:`.chromium` and
:mod:`.renderer` are the machinery. In a report notebook call :func:`enable_renderer` once;
altair charts then carry their Vega-Lite spec and a static SVG, and the ``ssdlab`` nbconvert
template draws them with an inlined vega bundle, so the HTML makes no network request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ReportError, SsdlabError
from ..lazy import lazy_exports
from .renderer import enable as enable_renderer

if TYPE_CHECKING:
    import nbformat

    from .batch import run_batch
    from .execute import execute_notebook
    from .export import export_figures, export_html
    from .notebooks import render_comparison, render_review

__all__ = [
    "enable_renderer",
    "execute_notebook",
    "export_figures",
    "export_html",
    "render_comparison",
    "render_report",
    "render_review",
    "run_batch",
]

#: loaded on first use: a notebook kernel needs only the renderer, not papermill or nbconvert
_LAZY = {
    "execute_notebook": ".execute",
    "export_figures": ".export",
    "export_html": ".export",
    "render_comparison": ".notebooks",
    "render_review": ".notebooks",
    "run_batch": ".batch",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


def _title(nb: nbformat.NotebookNode, notebook_path: Path) -> str:
    from .export import notebook_headings

    headings = notebook_headings(nb)
    return headings[0].text if headings else notebook_path.stem.replace("_", " ")


def render_report(
    notebook_path: Path | str,
    parameters: dict[str, Any],
    output_html: Path | str,
    *,
    title: str | None = None,
    cwd: Path | str | None = None,
) -> Path:
    """Execute ``notebook_path`` with ``parameters`` and write the report to ``output_html``.

    The kernel starts in ``cwd`` (default: a private directory) and imports nothing from it
    (:mod:`ssdlab.report.kernel`). The executed notebook is kept beside the report as
    ``<name>.executed.ipynb``. If a cell fails, the report so far is written to
    ``<name>.partial.html`` (notebook ``<name>.partial.ipynb``) and :class:`ReportError` names
    the section, the error and both files. A kernel that does not start or is killed from
    outside (the out-of-memory killer on a loaded machine) is tried once more, then raises
    :class:`~ssdlab.report.execute.KernelStartError`. An output that cannot be written is an
    error naming it, before the kernel starts.
    """
    import nbformat

    from ..atomic import write_error
    from ._files import check_writable, remove
    from .execute import KernelStartError, execute_notebook
    from .export import export_html

    notebook_path, output_html = Path(notebook_path), Path(output_html)
    executed = output_html.with_suffix(".executed.ipynb")
    partial_ipynb = output_html.with_suffix(".partial.ipynb")
    partial_html = output_html.with_suffix(".partial.html")
    check_writable(output_html)
    remove(partial_ipynb)
    try:
        try:
            nb = execute_notebook(notebook_path, partial_ipynb, parameters, cwd=cwd)
        except KernelStartError:  # a loaded machine, not the notebook: once more
            nb = execute_notebook(notebook_path, partial_ipynb, parameters, cwd=cwd)
    except KernelStartError:
        remove(partial_ipynb)  # the notebook did not fail: nothing to show
        raise
    except ReportError as exc:
        if not partial_ipynb.is_file():
            raise
        partial = nbformat.read(partial_ipynb, as_version=4)
        partial_title = f"{title or _title(partial, notebook_path)} (partial)"
        try:
            export_html(partial, partial_html, title=partial_title)
        except SsdlabError as export_exc:
            raise ReportError(f"{exc}; no partial report: {export_exc}") from exc.__cause__
        raise ReportError(f"{exc}; partial report: {partial_html}") from exc.__cause__
    try:
        partial_ipynb.replace(executed)
    except OSError as exc:
        raise write_error(executed, exc) from None
    remove(partial_html)
    return export_html(nb, output_html, title=title or _title(nb, notebook_path))
