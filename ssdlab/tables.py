"""Tables for people: frames in display units, as rich tables or HTML, and number formats.

Reports give bandwidth in MB/s (10^6 bytes/s, as reviews and power efficiency do), latency in
µs or ms, sizes as fio writes them (``4K``, ``128K``). Every figure of a unit is written one
way (:data:`UNIT_DECIMALS`): a table column takes the decimals of the unit its heading
names, and the sentence formatters round the same way.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection
from typing import Any

import polars as pl
from rich.table import Table

from .analysis.percentiles import clamp_to_max, samples_beyond
from .manifest import Manifest
from .units import MB, MIXED_BS_LABEL, format_capacity, format_duration, format_size

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
    "(n) after a percentile: the I/Os that lie beyond it by its definition, N x (1 - p) of "
    "the N measured: how much tail it rests on (not counted from the histogram bins)."
)
_PERCENTILE_CELL = r"^[\d.,]+ (?:ns|µs|ms|s)†? \([\d.,]+\)$"
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
    """I/Os beyond a percentile: ``2,149``, ``21``, ``2.1``, ``0.05``."""
    return f"{samples:,.0f}" if samples >= 10 else f"{samples:.2g}"


def format_percentile(ns: float | None, percentile: float, ios: float | None) -> str:
    """A percentile with the I/Os beyond it (:func:`~ssdlab.analysis.percentiles.
    samples_beyond`) in brackets: ``1.12 ms (144)``; with fewer than one, the value is the
    slowest I/O and carries :data:`BEYOND_MARK`: ``8.28 ms† (0.0021)``. Without the I/O
    count, the latency alone. A table's caption says what the brackets hold."""
    text = format_latency(ns)
    if _unknown(ns) or _unknown(ios):
        return text
    beyond = samples_beyond(percentile, ios)
    return f"{text}{BEYOND_MARK if beyond < 1 else ''} ({format_beyond(beyond)})"


def percentile_cells(column: str, percentile: float, ios: pl.Expr) -> pl.Expr:
    """The :func:`format_percentile` texts of a latency column (ns) at ``percentile`` with
    the I/Os of each row (``ios``), for a table: give its heading in ``numeric``."""
    return pl.struct(pl.col(column).alias("ns"), ios.alias("ios")).map_elements(
        lambda r: format_percentile(r["ns"], percentile, r["ios"]), return_dtype=pl.String
    )


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


def _cells(frame: pl.DataFrame) -> list[list[str]]:
    # a "Unit" column names the unit of its row's figures (mix tables: IOPS or MB/s)
    row_units = frame["Unit"].to_list() if "Unit" in frame.columns else None
    columns = []
    for series in frame.iter_columns():
        if series.dtype.is_float():
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
    for name, dtype in frame.schema.items():
        right = dtype.is_numeric() or name in numeric
        table.add_column(name, justify="right" if right else "left")
    for row in _cells(frame):
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
    right-aligned even when they hold text (e.g. formatted values with units).
    """
    if not frame.height:
        what = f"{caption}: no rows" if caption else "No rows"
        return f'<p class="ssdlab-missing">{html.escape(what)}.</p>'
    notes = [CLAMP_NOTE] if _capped(frame) else []
    notes += [BRACKETS_NOTE] if _marked(frame, _PERCENTILE_CELL, literal=False) else []
    notes += [BEYOND_NOTE] if _marked(frame, BEYOND_MARK) else []
    right = [t.is_numeric() or n in numeric for n, t in frame.schema.items()]
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
        for row in _cells(frame)
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


def _marked(frame: pl.DataFrame, mark: str, literal: bool = True) -> bool:
    """Whether a text cell of ``frame`` carries ``mark`` (a regular expression unless
    ``literal``)."""
    texts = [n for n, t in frame.schema.items() if t == pl.String]
    return bool(
        texts
        and frame.select(pl.any_horizontal(pl.col(texts).str.contains(mark, literal=literal)).any())
        .fill_null(False)
        .item()
    )


def facts_table(facts: list[tuple[str, str | None]]) -> pl.DataFrame:
    """Two-column Item/Value table of the facts whose value is known."""
    known = [(item, value) for item, value in facts if value not in (None, "", "–")]
    return pl.DataFrame(known, schema=["Item", "Value"], orient="row")


def drive_facts(manifest: Manifest, summary: pl.DataFrame | None = None) -> pl.DataFrame:
    """What was tested and on which host: drive identity (or file target), host, CPU. What
    the results do not record (an import knows only what fio's JSON holds) is ``unknown``."""
    target, host = manifest.target, manifest.host
    device = (target.device if target is not None else None) or {}
    facts: list[tuple[str, str | None]] = []
    if target is None or target.kind == "block":
        facts += [
            ("Model", device.get("model") or UNKNOWN),
            ("Serial", device.get("serial") or UNKNOWN),
            ("Firmware", device.get("firmware") or UNKNOWN),
            ("Capacity", _capacity(device.get("size_bytes")) or UNKNOWN),
            ("Block size (logical / physical)", _block_sizes(device) or UNKNOWN),
            ("Transport", device.get("transport") or UNKNOWN),
        ]
    if target is not None:
        size = f" ({format_capacity(target.size_bytes)})" if target.size_bytes else ""
        facts.append(("Target", f"{target.kind} {target.path}{size}"))
    else:
        facts.append(("Target", f"{UNKNOWN} (not recorded by {_recorder(manifest)})"))
    if host is not None:
        memory = f", {format_capacity(host.memory_bytes)} memory" if host.memory_bytes else ""
        threads = f" ({host.cpu_count} threads)" if host.cpu_count else ""
        facts += [
            ("Host", host.hostname),
            ("OS / kernel", f"{host.os} / {host.kernel}"),
            ("CPU", f"{host.cpu_model}{threads}{memory}"),
            ("fio clock", _fio_clock(manifest.fio_clocksource, host.clocksource)),
        ]
    else:
        facts += [
            ("Host", _hostnames(summary) or UNKNOWN),
            ("OS / kernel", UNKNOWN),
            ("CPU", UNKNOWN),
        ]
    if manifest.source == "import":
        facts += [
            ("fio", manifest.fio_version or UNKNOWN),
            ("fio jobs", _jobs(summary) or UNKNOWN),
            ("Job options", _job_options(summary) or UNKNOWN),
            ("Measured", _measured_times(manifest) or UNKNOWN),
        ]
    return facts_table(facts)


def _recorder(manifest: Manifest) -> str:
    return "the imported files" if manifest.source == "import" else "this run"


def _hostnames(summary: pl.DataFrame | None) -> str | None:
    """The hosts fio reported (client/server runs) or ssdlab recorded, from the summary."""
    if summary is None:
        return None
    names: set[str] = set()
    for column in ("hostname", "host"):
        if column in summary.columns and summary[column].dtype == pl.String:
            names |= set(summary[column].drop_nulls().to_list())
    return ", ".join(sorted(names)) or None


def _jobs(summary: pl.DataFrame | None) -> str | None:
    """fio's job names, in order, at most eight."""
    if summary is None or "jobname" not in summary.columns or not summary.height:
        return None
    names = summary["jobname"].drop_nulls().unique(maintain_order=True).to_list()
    if not names:
        return None
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return ", ".join(names[:8]) + more


def _job_options(summary: pl.DataFrame | None) -> str | None:
    """The workloads fio's output describes: rw, block size, QD (jobs x iodepth), mix."""
    if summary is None or not summary.height or "rw" not in summary.columns:
        return None
    columns = [c for c in ("rw", "bs_bytes", "iodepth", "numjobs", "rwmixread") if c in summary]
    rows = summary.select(columns).unique(maintain_order=True)
    texts = []
    for row in rows.iter_rows(named=True):
        parts = [f"rw={row['rw']}"] if row.get("rw") else []
        if row.get("bs_bytes"):
            parts.append(f"bs={format_size(row['bs_bytes'])}")
        if row.get("iodepth"):
            parts.append(f"{row.get('numjobs') or 1} × QD{row['iodepth']}")
        if row.get("rwmixread") is not None and "rw" in (row.get("rw") or ""):
            parts.append(f"rwmixread={row['rwmixread']}")
        texts.append(" ".join(parts))
    unique = list(dict.fromkeys(t for t in texts if t))
    more = f"; and {len(unique) - 6} more" if len(unique) > 6 else ""
    return "; ".join(unique[:6]) + more or None


def _measured_times(manifest: Manifest) -> str | None:
    """When the steps ran, from their recorded start and end times."""
    starts = [s.started for s in manifest.steps if s.started]
    ends = [s.ended for s in manifest.steps if s.ended]
    if not starts:
        return None
    first = min(starts)
    last = max(ends) if ends else None
    span = f" to {last:%Y-%m-%d %H:%M:%S %Z}" if last and last > first else ""
    return f"{first:%Y-%m-%d %H:%M:%S %Z}{span}".strip()


def _fio_clock(pinned: str | None, kernel: str | None) -> str | None:
    if pinned:
        return f"clocksource={pinned} for every step (kernel clock: {kernel})"
    return f"chosen by fio (kernel clock: {kernel})" if kernel else None


def _capacity(size_bytes: int | None) -> str | None:
    return f"{format_capacity(size_bytes)} ({size_bytes:,} bytes)" if size_bytes else None


def _block_sizes(device: dict) -> str | None:
    logical, physical = device.get("logical_block_bytes"), device.get("physical_block_bytes")
    return f"{logical} / {physical} bytes" if logical and physical else None


def scale_note(manifest: Manifest) -> str | None:
    """What a scaled run is, in words; None at full scale."""
    if manifest.scale == 1:
        return None
    return (
        f"{manifest.scale:g} × the suite's durations and absolute sizes: a shortened run, "
        "not the full test"
    )


def _span(manifest: Manifest) -> str | None:
    """The LBA span the steps addressed: ``size`` from ``offset``, as the suite gave them."""
    spans = []
    for step in manifest.steps:
        w = step.workload
        if w is None:
            continue
        text = f"{_size_text(w.size)} of the target" if w.size else "the whole target"
        if w.offset:
            text += f" from offset {_size_text(w.offset)}"
        spans.append(text)
    unique = list(dict.fromkeys(spans))
    return ", ".join(unique) if unique else None


def _size_text(value: str) -> str:
    """A suite's size as people read it: ``75%``, ``16g``, or bytes as ``25.6 MiB``."""
    return format_capacity(int(value)) if value.isdigit() else value


def _engines(manifest: Manifest) -> str | None:
    engines = list(dict.fromkeys(s.workload.ioengine for s in manifest.steps if s.workload))
    return ", ".join(engines) if engines else None


def _threads_qd(manifest: Manifest, summary: pl.DataFrame) -> str | None:
    """The jobs x iodepth combinations run, ``1 × 1, 4 × 32`` (QD = their product)."""
    pairs = {(s.workload.numjobs, s.workload.iodepth) for s in manifest.steps if s.workload}
    if not pairs and {"numjobs", "iodepth"} <= set(summary.columns):
        rows = summary.select("numjobs", "iodepth").drop_nulls().unique().iter_rows()
        pairs = {(int(j), int(d)) for j, d in rows}
    return ", ".join(f"{j} × {d}" for j, d in sorted(pairs)) if pairs else None


def _settings(manifest: Manifest) -> str | None:
    """The ``--set`` overrides as given; None when not recorded (imports, older runs)."""
    if manifest.source != "run" or manifest.params is None:
        return None
    if not manifest.params:
        return "none (the suite's own parameters)"
    return ", ".join(f"{name}={value}" for name, value in manifest.params.items())


def run_facts(manifest: Manifest, summary: pl.DataFrame) -> pl.DataFrame:
    """How the test ran: the scale first (when not 1), suite, settings (``--set``, LBA span,
    engine, jobs x iodepth), versions, times and durations, purge, direct I/O."""
    steps_ok = sum(s.status == "ok" for s in manifest.steps)
    direct = {s.direct for s in manifest.steps if s.direct is not None}
    measured = (
        summary.group_by("step_index").agg(pl.col("runtime_s").max())["runtime_s"].sum()
        if "runtime_s" in summary.columns and summary.height
        else None
    )
    native = manifest.source == "run"
    wall = (
        (manifest.ended - manifest.started).total_seconds()
        if native and manifest.ended and manifest.started
        else None
    )
    source = (
        f"imported from {len(manifest.steps)} fio results"
        if manifest.source == "import" and manifest.steps
        else f"imported ({manifest.suite_description})"
        if manifest.source == "import"
        else "ssdlab run"
    )
    started = (
        f"{manifest.started:%Y-%m-%d %H:%M:%S %Z}"
        if native and manifest.started
        else _measured_times(manifest) or UNKNOWN
    )
    fio_steps = bool(summary.height)
    facts = [
        ("Scale", scale_note(manifest)),
        ("Label", manifest.label),
        ("Suite", manifest.suite),
        ("Source", source),
        ("Run id", manifest.run_id),
        (
            "Status",
            f"{manifest.status}, {steps_ok} of {len(manifest.steps)} steps ok"
            if manifest.steps
            else f"{manifest.status}, no fio steps (ACT trials only)",
        ),
        ("Started", started),
        ("Imported", f"{manifest.created:%Y-%m-%d %H:%M:%S %Z}" if not native else None),
        ("Wall time", format_duration(wall) if wall else None),
        ("Measured time", format_duration(measured) if measured else None),
        ("Settings (--set)", _settings(manifest)),
        (
            "fio options opted in",
            ", ".join(manifest.allowed_fio_options) if manifest.allowed_fio_options else None,
        ),
        ("LBA span", _span(manifest) or (UNKNOWN if fio_steps else None)),
        ("I/O engine", _engines(manifest) or (UNKNOWN if fio_steps else None)),
        ("Jobs × iodepth", _threads_qd(manifest, summary)),
        ("Purge", manifest.purge or ("none" if native else None)),
        ("Direct I/O", ", ".join("yes" if d else "no" for d in sorted(direct))),
        ("fio", manifest.fio_version or (UNKNOWN if fio_steps else None)),
        ("ssdlab", manifest.ssdlab_version),
    ]
    return facts_table(facts)
