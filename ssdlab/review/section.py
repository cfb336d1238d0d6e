"""What a report section shows, and the registry of each report notebook's sections.

Altair is never imported here (a part is a chart only once its maker loaded it), so a
command printing a section's table (``ssdlab qos check``) starts without it."""

from __future__ import annotations

import html
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from ..tables import html_table

if TYPE_CHECKING:
    import altair as alt

T = TypeVar("T")


def findings_html(sentences: Sequence[str]) -> str:
    """The findings list of a section as HTML."""
    items = "".join(f"<li>{html.escape(s)}</li>" for s in sentences)
    return f'<div class="ssdlab-findings"><ul>{items}</ul></div>'


#: what a section whose every chart and table is empty says instead
NO_ROWS = "No data: the run has no measured fio step for these charts and tables."
#: the output metadata key marking a section shown as missing: an exported report drops its
#: cell and heading (:func:`ssdlab.report.export.hide_missing`)
MISSING_KEY = "ssdlab_missing"
#: display metadata key of a section not shown because nobody asked for it (a QoS section
#: without a profile), not for want of data
UNASKED_KEY = "ssdlab_unasked"


def table(frame: pl.DataFrame, caption: str | None = None, **options: Any) -> Any:
    """An HTML table for a notebook output (``rows``: how many rows it shows)."""
    from IPython.display import HTML

    shown = HTML(html_table(frame, caption=caption, **options))
    shown.rows = frame.height
    return shown


def _chart_rows(chart: Any) -> int | None:
    """Rows of data a chart and its layers or panels draw; None when unknown."""
    import altair as alt  # loaded already: a chart was made

    counts = []
    data = getattr(chart, "data", alt.Undefined)
    if isinstance(data, pl.DataFrame):
        counts.append(data.height)
    elif data is not alt.Undefined:
        return None
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in getattr(chart, key, None) or []:
            rows = _chart_rows(sub)
            if rows is None:
                return None
            counts.append(rows)
    return sum(counts) if counts else None


def _is_chart(part: Any) -> bool:
    """Whether ``part`` is an altair chart; without altair loaded, nothing is."""
    alt = sys.modules.get("altair")
    return alt is not None and isinstance(part, alt.TopLevelMixin)


def is_empty(part: Any) -> bool:
    """Whether a section part shows nothing: a table without rows, a chart without data."""
    if _is_chart(part):
        return _chart_rows(part) == 0
    return getattr(part, "rows", None) == 0


@dataclass
class Section:
    """What one report section shows: findings, then charts and tables, or what is missing.

    ``key``: the findings a report's key findings repeat (None: its first ones);
    ``asked``: False for a section that is missing because it was not asked for (its
    ``missing`` says how to ask), not for want of data."""

    findings: list[str] = field(default_factory=list)
    parts: list[Any] = field(default_factory=list)
    missing: str | None = None
    key: list[str] | None = None
    asked: bool = True

    def __post_init__(self) -> None:
        given = bool(self.parts)
        self.parts = [p for p in self.parts if not is_empty(p)]  # no empty chart or table
        if self.missing is None and not self.findings and given and not self.parts:
            self.missing = NO_ROWS

    @property
    def charts(self) -> list[alt.TopLevelMixin]:
        return [p for p in self.parts if _is_chart(p)]

    def _ipython_display_(self) -> None:
        from IPython.display import HTML, display

        if self.missing is not None:
            shown = HTML(f'<p class="ssdlab-missing">{html.escape(self.missing)}</p>')
            unasked = {} if self.asked else {UNASKED_KEY: True}
            display(shown, metadata={MISSING_KEY: self.missing, **unasked})
            return
        if self.findings:
            display(HTML(findings_html(self.findings)))
        for part in self.parts:
            display(part)


class Registry:
    """The sections one report notebook shows, by function name, in notebook order.

    With ``once``, a section is built once per subject (held weakly): a report's key findings
    and its section cell share the same :class:`Section`.
    """

    def __init__(self, notebook: str, *, once: bool = False) -> None:
        self.notebook = notebook
        self.once = once
        self._sections: dict[str, Callable[..., Section]] = {}

    def __call__(self, build: Callable[[T], Section]) -> Callable[[T], Section]:
        """Register ``build`` (a decorator)."""
        registered = _once(build) if self.once else build
        self._sections[build.__name__] = registered
        return registered

    def __iter__(self) -> Iterator[Callable[..., Section]]:
        return iter(self._sections.values())

    @property
    def names(self) -> list[str]:
        return list(self._sections)


def _once(build: Callable[[T], Section]) -> Callable[[T], Section]:
    built: weakref.WeakKeyDictionary[Any, Section] = weakref.WeakKeyDictionary()

    @wraps(build)
    def cached(subject: T) -> Section:
        if subject not in built:
            built[subject] = build(subject)
        return built[subject]

    return cached
