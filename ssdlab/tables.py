"""Tables for people: frames in display units, as rich tables or HTML, and number formats.

Reports give bandwidth in MB/s (10^6 bytes/s, as reviews and power efficiency do), latency in
µs or ms, sizes as fio writes them (``4K``, ``128K``). Every figure of a unit is written one
way (:data:`UNIT_DECIMALS`): a table column takes the decimals of the unit its heading
names, and the sentence formatters round the same way.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Collection
from typing import Any

import polars as pl
from rich.table import Table

from .analysis.percentiles import clamp_to_max, samples_beyond
from .units import MB, MIXED_BS_LABEL, format_size

UNKNOWN = "unknown"
#: decimals of each display unit, found in a column's heading (``p99 µs``, ``MB/s``...)
UNIT_DECIMALS = {"IOPS": 0, "MB/s": 1, "µs": 1, "ms": 2, "W": 2, "%": 2, "GB": 2, "°C": 0}
#: units a heading can name, longest first (``MB/s/W`` before ``MB/s`` before ``W``)
_UNIT_RE = re.compile(r"(IOPS/W|MB/s/W|MB/s|IOPS|µs|ms|GB|°C|\bW\b)")
_PER_WATT = {"IOPS/W": 0, "MB/s/W": 1}
#: a table of percentiles beside a maximum says how they were capped
CLAMP_NOTE = (
    "Percentiles are fio's histogram values, exact to about 1.6 %; where such a value lay "
    "above the slowest I/O measured, the maximum is shown."
)
#: marks a percentile with fewer than one I/O beyond it (:func:`format_percentile`); a table
#: showing one carries :data:`BEYOND_NOTE`
BEYOND_MARK = "†"
BEYOND_NOTE = (
    f"{BEYOND_MARK} Fewer than 1 I/O beyond: not a settled percentile but the histogram "
    "value of the slowest I/Os (within about 1.6 %; the exact maximum fio measured may differ)."
)
#: what the brackets of a percentile cell (:func:`format_percentile`) hold
BRACKETS_NOTE = (
    "(n) after a percentile: the whole I/Os that lie beyond it by its definition, N x (1 - p) "
    "of the N measured rounded down: how much tail it rests on (not counted from the "
    "histogram bins)."
)
_PERCENTILE_CELL = re.compile(r"^[\d.,]+(?: (?:ns|µs|ms|s))?†? \([\d.,]+\)$")
#: nanoseconds per latency unit a table writes; one table writes every latency in one of them
LATENCY_UNITS = {"µs": 1e3, "ms": 1e6}
#: tables of this many columns or more are set compact (class ``ssdlab-wide``)
WIDE_COLUMNS = 10

#: (column, heading, expression turning canonical units into display units)
SUMMARY_VIEW: list[tuple[str, str, pl.Expr]] = [
    ("step", "Step", pl.col("step")),
    ("direction", "Dir", pl.col("direction")),
    (
        "bs_bytes",
        "Block",
        pl.col("bs_bytes")
        .map_elements(format_size, return_dtype=pl.String)
        .fill_null(MIXED_BS_LABEL),  # a job mixing sizes (bssplit, bsrange)
    ),
    ("iodepth", "QD", pl.col("iodepth")),
    ("numjobs", "Jobs", pl.col("numjobs")),
    ("job_index", "Job", pl.col("job_index")),
    ("iops", "IOPS", pl.col("iops").round(0).cast(pl.Int64)),
    ("bw_bytes_s", "MB/s", (pl.col("bw_bytes_s") / MB).round(1)),
]
#: the summary's completion latencies (ns) and their headings
SUMMARY_LATENCIES = {
    "clat_mean_ns": "Mean",
    "clat_p99_ns": "p99",
    "clat_p99_9_ns": "p99.9",
    "clat_p99_99_ns": "p99.99",
    "clat_max_ns": "Max",
}


def summary_view(summary: pl.DataFrame, *, latency_text: bool = False) -> pl.DataFrame:
    """The headline columns of a summary in display units (IOPS, MB/s, µs), a step stopped
    before its end marked ``(interrupted)``, percentiles capped at the maximum
    (:func:`~ssdlab.analysis.percentiles.clamp_to_max`). ``Job`` (fio's job index) shows only
    when a step has several job rows: clones reported separately (no ``group_reporting``)
    are then told apart. ``latency_text``: each latency written in the unit that suits it
    (:func:`format_latency`: ``850 ns``, ``3.88 ms``) under a heading naming none."""
    summary = clamp_to_max(summary)
    if "status" in summary.columns:  # a step stopped before its end says so
        stopped = pl.col("status") == "interrupted"
        summary = summary.with_columns(
            step=pl.when(stopped).then(pl.col("step") + " (interrupted)").otherwise("step")
        )
    keys = [c for c in ("run_id", "step_index", "direction") if c in summary.columns]
    per_job = (
        "job_index" in summary.columns
        and keys
        and summary.height
        and summary.group_by(keys).len()["len"].max() > 1
    )
    latencies = [
        (col, heading, pl.col(col).map_elements(format_latency, return_dtype=pl.String))
        if latency_text
        else (col, f"{heading} µs", (pl.col(col) / 1e3).round(1))
        for col, heading in SUMMARY_LATENCIES.items()
    ]
    return summary.select(
        expr.alias(heading)
        for col, heading, expr in [*SUMMARY_VIEW, *latencies]
        if col in summary.columns and (col != "job_index" or per_job)
    )


def _unknown(value: float | None) -> bool:
    return value is None or value != value


def format_iops(iops: float | None) -> str:
    """``12,345 IOPS``; ``–`` when unknown."""
    return "–" if _unknown(iops) else f"{iops:,.0f} IOPS"


def _rounded(value: float, unit: str) -> str:
    """``value`` rounded as the tables round ``unit``, trailing zeros dropped (a sentence
    says ``2,000 MB/s`` where a table column lines up ``2,000.0``)."""
    text = f"{value:,.{UNIT_DECIMALS[unit]}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_bw(bytes_s: float | None) -> str:
    """``3,633.6 MB/s``, ``2,000 MB/s``: rounded as every table rounds MB/s; ``–`` when
    unknown."""
    return "–" if _unknown(bytes_s) else f"{_rounded(bytes_s / MB, 'MB/s')} MB/s"


def format_latency(ns: float | None) -> str:
    """``850 ns``, ``45.8 µs``, ``934.8 µs``, ``3.82 ms``, ``1.25 s``: µs to one decimal and
    ms to two, as the tables round them, so a value reads the same everywhere; ``–`` when
    unknown (an old fio's output without that percentile)."""
    if _unknown(ns):
        return "–"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{_rounded(ns / 1e3, 'µs')} µs"
    if ns < 1e9:
        return f"{_rounded(ns / 1e6, 'ms')} ms"
    return f"{ns / 1e9:,.2f} s".replace(".00 s", " s")


def format_unit(value: float | None, unit: str) -> str:
    """``7.25 W``, ``1,234 IOPS/W``: ``value`` with the decimals a table gives ``unit``
    (:func:`unit_decimals`; else three significant digits), ``–`` when unknown."""
    if _unknown(value):
        return "–"
    decimals = unit_decimals(unit)
    return f"{value:,.{decimals}f} {unit}" if decimals is not None else f"{value:.3g} {unit}"


def format_interval(
    value: float | None, lo: float | None, hi: float | None, show: Callable[[Any], str]
) -> str:
    """``46.3 µs (44.1 µs – 48.6 µs)``: a figure and its 95 % interval, each written by
    ``show``; the figure alone when the interval is unknown (a step run once)."""
    text = show(value)
    if _unknown(lo) or _unknown(hi):
        return text
    return f"{text} ({show(lo)} – {show(hi)})"


def format_beyond(samples: float) -> str:
    """Whole I/Os beyond a percentile: ``2,149``, ``21``, ``2`` (2.8 by the definition),
    ``0``: an I/O count is an integer."""
    return f"{math.floor(samples + 1e-9):,}"


def format_percentile(
    ns: float | None,
    percentile: float,
    ios: float | None,
    show: Callable[[float | None], str] = format_latency,
) -> str:
    """A percentile with the I/Os beyond it (:func:`~ssdlab.analysis.percentiles.
    samples_beyond`) in brackets: ``1.12 ms (144)``; with fewer than one, the value is the
    slowest I/O and carries :data:`BEYOND_MARK`: ``8.28 ms† (0)``. Without the I/O
    count, the latency alone, written by ``show``. A table's caption says what the brackets
    hold."""
    text = show(ns)
    if _unknown(ns) or _unknown(ios):
        return text
    beyond = samples_beyond(percentile, ios)
    return f"{text}{BEYOND_MARK if beyond < 1 else ''} ({format_beyond(beyond)})"


def latency_in(ns: float | None, unit: str | None, *, named: bool = True) -> str:
    """A latency written in ``unit`` (a :data:`LATENCY_UNITS` key) with the decimals tables
    give it, the unit after it when ``named``, ``–`` when unknown; without a unit, in the
    unit that suits it (:func:`format_latency`)."""
    if unit is None or _unknown(ns):
        return format_latency(ns)
    return f"{ns / LATENCY_UNITS[unit]:,.{UNIT_DECIMALS[unit]}f}" + (f" {unit}" if named else "")


def latency_cells(
    column: str,
    *,
    percentile: float | None = None,
    ios: pl.Expr | None = None,
    low: str | None = None,
    high: str | None = None,
) -> pl.Expr:
    """A table column of latencies (``column``, ns) that :func:`html_table` writes in the
    one unit it picks for the whole table (:func:`table_latency_unit`): with ``percentile``
    and ``ios``, as :func:`format_percentile` (give its heading in ``numeric``); with
    ``low`` and ``high`` (ns), with that 95 % interval (:func:`format_interval`)."""
    fields = [pl.col(column).cast(pl.Float64).alias("ns")]
    if percentile is not None and ios is not None:
        fields += [pl.lit(percentile).alias("percentile"), ios.cast(pl.Float64).alias("ios")]
    if low is not None and high is not None:
        fields += [
            pl.col(low).cast(pl.Float64).alias("low"),
            pl.col(high).cast(pl.Float64).alias("high"),
        ]
    return pl.struct(fields)


def percentile_cells(column: str, percentile: float, ios: pl.Expr) -> pl.Expr:
    """The :func:`format_percentile` cells of a latency column (ns) at ``percentile`` with
    the I/Os of each row (``ios``), for a table: give its heading in ``numeric``."""
    return latency_cells(column, percentile=percentile, ios=ios)


def _latency_text(cell: dict[str, Any] | None, unit: str | None) -> str:
    """A :func:`latency_cells` cell written in ``unit``, which its heading names."""
    if cell is None:
        return "–"

    def show(ns: float | None) -> str:
        return latency_in(ns, unit, named=False)

    if cell.get("percentile") is not None:
        return format_percentile(cell["ns"], cell["percentile"], cell.get("ios"), show)
    return format_interval(cell["ns"], cell.get("low"), cell.get("high"), show)


def _is_latency(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.Struct) and "ns" in {f.name for f in dtype.fields}


def table_latency_unit(frame: pl.DataFrame) -> str | None:
    """The one latency unit a table writes, from its data: ``ms`` when every latency it
    shows (columns headed in µs or ms, :func:`latency_cells`) is 1 ms or more, else ``µs``;
    None for a table without latencies."""
    found: list[pl.Series] = []
    for name, dtype in frame.schema.items():
        unit = unit_of(name)
        if dtype.is_numeric() and unit in LATENCY_UNITS:
            found.append(frame[name].cast(pl.Float64) * LATENCY_UNITS[unit])
        elif _is_latency(dtype):
            found.append(frame[name].struct.field("ns"))
    return latency_unit(pl.concat(found)) if found else None


def latency_unit(ns: pl.Series) -> str:
    """The one unit latencies ``ns`` are written in: ``ms`` when every one (above 0) is 1 ms
    or more, else ``µs``."""
    values = ns.cast(pl.Float64).drop_nulls().drop_nans()
    low = values.filter(values > 0).min()
    return "ms" if low is not None and low >= LATENCY_UNITS["ms"] else "µs"


def _one_latency_unit(frame: pl.DataFrame, unit: str | None) -> pl.DataFrame:
    """``frame`` with its numeric µs and ms columns in ``unit``, headings renamed, and the
    headings of its :func:`latency_cells` columns naming ``unit``."""
    if unit is None:
        return frame
    moved, scale = {}, {}
    for name, dtype in frame.schema.items():
        old = unit_of(name)
        if dtype.is_numeric() and old in LATENCY_UNITS and old != unit:
            moved[name] = _UNIT_RE.sub(unit, name, count=1)
            scale[name] = LATENCY_UNITS[old] / LATENCY_UNITS[unit]
        elif _is_latency(dtype) and old is None:
            moved[name] = f"{name} {unit}"
    return frame.with_columns(pl.col(n) * f for n, f in scale.items()).rename(moved)


def unit_of(heading: str) -> str | None:
    """The display unit a column heading names (``p99 µs`` -> ``µs``, ``> 1 ms (%)`` ->
    ``%``), if any."""
    if heading.endswith("(%)") or heading.startswith("%"):
        return "%"
    found = _UNIT_RE.search(heading)
    return found.group(1) if found else None


def unit_decimals(unit: str | None) -> int | None:
    """Decimals every figure in ``unit`` is written with; None for an unknown unit."""
    if unit is None:
        return None
    return _PER_WATT.get(unit, UNIT_DECIMALS.get(unit))


def format_number(value: float | None) -> str:
    """A figure for a key/value table: thousands separated, three significant digits below."""
    if value is None or value != value:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_bytes(n_bytes: float) -> str:
    """Bytes written or read in decimal units, as MB/s and endurance ratings (TBW) count them:
    ``3.84 TB``, ``512 GB``, ``16.8 MB`` (capacities: :func:`~ssdlab.units.format_capacity`)."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.0f} B"


def _decimals(values: pl.Series) -> int:
    """Decimals for a float column, one choice per column so figures line up: enough for
    three significant digits of its smallest non-zero value (at most three decimals)."""
    low = values.abs().filter(values.abs() > 0).min()
    if low is None or low >= 100:
        return 0
    return 1 if low >= 10 else 2 if low >= 1 else 3


def _cells(frame: pl.DataFrame, latency_unit: str | None = None) -> list[list[str]]:
    # a "Unit" column names the unit of its row's figures (mix tables: IOPS or MB/s)
    row_units = frame["Unit"].to_list() if "Unit" in frame.columns else None
    columns = []
    for series in frame.iter_columns():
        if _is_latency(series.dtype):
            column = [_latency_text(v, latency_unit) for v in series.to_list()]
        elif series.dtype.is_float():
            decimals = unit_decimals(unit_of(series.name))
            if decimals is None:
                decimals = _decimals(series.drop_nans())
            places = [decimals] * series.len()
            if row_units is not None and unit_of(series.name) is None:
                places = [
                    d
                    if (d := unit_decimals(u if isinstance(u, str) else None)) is not None
                    else decimals
                    for u in row_units
                ]
            column = [
                "–" if v is None or v != v else f"{v:,.{d}f}"
                for v, d in zip(series.to_list(), places, strict=True)
            ]
        elif series.dtype.is_integer():
            column = ["–" if v is None else f"{v:,}" for v in series.to_list()]
        else:
            column = ["–" if v is None else str(v) for v in series.to_list()]
        columns.append(column)
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def summary_table(summary: pl.DataFrame, leave_out: Collection[str] = ()) -> Table:
    """A rich table of :func:`summary_view` for a terminal, latencies in the unit that suits
    each, but the columns ``leave_out`` names; a summary without fio steps (an ACT-only run)
    gives one line saying so."""
    if not summary.height:
        note = Table(show_header=False, box=None, padding=0)
        note.add_column("note")
        note.add_row("No fio step results (ssdlab report shows them).")
        return note
    view = summary_view(summary, latency_text=True)
    return rich_table(view.drop(leave_out, strict=False), numeric=SUMMARY_LATENCIES.values())


def rich_table(frame: pl.DataFrame, numeric: Collection[str] = ()) -> Table:
    """``frame`` as a rich table, each figure formatted as :func:`html_table` formats it
    (``numeric`` text columns right-aligned too)."""
    table = Table(show_lines=False, header_style="bold")
    unit = table_latency_unit(frame)
    frame = _one_latency_unit(frame, unit)
    for name, dtype in frame.schema.items():
        right = dtype.is_numeric() or name in numeric or _is_latency(dtype)
        table.add_column(name, justify="right" if right else "left")
    for row in _cells(frame, unit):
        table.add_row(*row)
    return table


def html_table(
    frame: pl.DataFrame,
    *,
    caption: str | None = None,
    markup: Collection[str] = (),
    numeric: Collection[str] = (),
) -> str:
    """A plain HTML table (numbers right-aligned, thousands separated) for reports.

    Cells of the ``markup`` columns are HTML the caller has escaped; ``numeric`` columns are
    right-aligned even when they hold text (e.g. formatted values with units). Every latency
    is written in one unit (:func:`table_latency_unit`), its headings renamed to match.
    """
    if not frame.height:
        what = f"{caption}: no rows" if caption else "No rows"
        return f'<p class="ssdlab-missing">{html.escape(what)}.</p>'
    notes = [CLAMP_NOTE] if _capped(frame) else []
    unit = table_latency_unit(frame)
    frame = _one_latency_unit(frame, unit)
    rows = _cells(frame, unit)
    texts = [v for row in rows for v in row]
    notes += [BRACKETS_NOTE] if any(_PERCENTILE_CELL.match(v) for v in texts) else []
    notes += [BEYOND_NOTE] if any(BEYOND_MARK in v for v in texts) else []
    right = [t.is_numeric() or n in numeric or _is_latency(t) for n, t in frame.schema.items()]
    heads = "".join(
        f'<th class="{"num" if r else "txt"}">{html.escape(n)}</th>'
        for n, r in zip(frame.columns, right, strict=True)
    )
    raw = [n in markup for n in frame.columns]
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if r else "txt"}">{v if m else html.escape(v)}</td>'
            for v, r, m in zip(row, right, raw, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    # a paragraph rather than <caption>: a caption wraps at the width of a narrow table
    cap = f'<p class="ssdlab-caption">{html.escape(caption)}</p>' if caption else ""
    wide = " ssdlab-wide" if frame.width >= WIDE_COLUMNS else ""
    foot = "".join(f'<p class="ssdlab-note">{html.escape(n)}</p>' for n in notes)
    # the wrapper scrolls sideways when a table is wider than the column
    return (
        f'{cap}<div class="ssdlab-table-wrap{wide}"><table class="ssdlab-table">'
        f"<thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table></div>{foot}"
    )


def _capped(frame: pl.DataFrame) -> bool:
    """Whether a table shows a percentile (``p99.99 µs``) equal to its row's ``Max µs``: the
    value fio's bins gave was above the maximum and was capped, or lies in the maximum's bin."""
    numbers = {n for n, t in frame.schema.items() if t.is_float()}
    percentiles = [n for n in numbers if n.startswith("p") and unit_of(n) == "µs"]
    if "Max µs" not in numbers or not percentiles:
        return False
    return bool(
        frame.select(pl.any_horizontal(pl.col(percentiles) == pl.col("Max µs")).any()).item()
    )
