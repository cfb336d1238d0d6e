"""Tables for people: frames in display units, as rich tables or HTML, and number formats.

Reports give bandwidth in MB/s (10^6 bytes/s, as reviews and power efficiency do), latency in
µs or ms, sizes as fio writes them (``4K``, ``128K``).
"""

from __future__ import annotations

import html
from collections.abc import Collection

import polars as pl
from rich.table import Table

from .manifest import Manifest
from .units import MB, format_size

#: (column, heading, expression turning canonical units into display units)
SUMMARY_VIEW: list[tuple[str, str, pl.Expr]] = [
    ("step", "Step", pl.col("step")),
    ("direction", "Dir", pl.col("direction")),
    ("bs_bytes", "Block", pl.col("bs_bytes").map_elements(format_size, return_dtype=pl.String)),
    ("iodepth", "QD", pl.col("iodepth")),
    ("numjobs", "Jobs", pl.col("numjobs")),
    ("iops", "IOPS", pl.col("iops").round(0).cast(pl.Int64)),
    ("bw_bytes_s", "MB/s", (pl.col("bw_bytes_s") / MB).round(1)),
    ("clat_mean_ns", "Mean µs", (pl.col("clat_mean_ns") / 1e3).round(1)),
    ("clat_p99_ns", "p99 µs", (pl.col("clat_p99_ns") / 1e3).round(1)),
    ("clat_p99_9_ns", "p99.9 µs", (pl.col("clat_p99_9_ns") / 1e3).round(1)),
    ("clat_p99_99_ns", "p99.99 µs", (pl.col("clat_p99_99_ns") / 1e3).round(1)),
    ("clat_max_ns", "Max µs", (pl.col("clat_max_ns") / 1e3).round(1)),
]


def summary_view(summary: pl.DataFrame) -> pl.DataFrame:
    """The headline columns of a summary in display units (IOPS, MB/s, µs)."""
    return summary.select(
        expr.alias(heading) for col, heading, expr in SUMMARY_VIEW if col in summary.columns
    )


def format_iops(iops: float) -> str:
    return f"{iops:,.0f} IOPS"


def format_bw(bytes_s: float) -> str:
    mb = bytes_s / MB
    return f"{mb:,.1f} MB/s" if mb < 100 else f"{mb:,.0f} MB/s"


def format_latency(ns: float) -> str:
    """``850 ns``, ``45.8 µs``, ``3.82 ms``, ``1.25 s``."""
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs" if ns < 1e5 else f"{ns / 1e3:.0f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"


def format_number(value: float | None) -> str:
    """A figure for a key/value table: thousands separated, three significant digits below."""
    if value is None or value != value:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_bytes(n_bytes: float) -> str:
    """Decimal units as drive capacities are given: ``3.84 TB``, ``512 GB``, ``16.8 MB``."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.0f} B"


def format_duration(seconds: float) -> str:
    """``0.6 s``, ``18 s``, ``30 min``, ``2 h 05 min``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def _decimals(values: pl.Series) -> int:
    """Decimals for a float column, one choice per column so figures line up: enough for
    three significant digits of its smallest non-zero value (at most three decimals)."""
    low = values.abs().filter(values.abs() > 0).min()
    if low is None or low >= 100:
        return 0
    return 1 if low >= 10 else 2 if low >= 1 else 3


def _cells(frame: pl.DataFrame) -> list[list[str]]:
    columns = []
    for series in frame.iter_columns():
        if series.dtype.is_float():
            decimals = _decimals(series.drop_nans())
            column = [
                "–" if v is None or v != v else f"{v:,.{decimals}f}" for v in series.to_list()
            ]
        elif series.dtype.is_integer():
            column = ["–" if v is None else f"{v:,}" for v in series.to_list()]
        else:
            column = ["–" if v is None else str(v) for v in series.to_list()]
        columns.append(column)
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def summary_table(summary: pl.DataFrame) -> Table:
    """A rich table of :func:`summary_view`."""
    view = summary_view(summary)
    table = Table(show_lines=False, header_style="bold")
    for name, dtype in view.schema.items():
        table.add_column(name, justify="right" if dtype.is_numeric() else "left")
    for row in _cells(view):
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
    return (
        f'{cap}<table class="ssdlab-table"><thead><tr>{heads}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def facts_table(facts: list[tuple[str, str | None]]) -> pl.DataFrame:
    """Two-column Item/Value table of the facts whose value is known."""
    known = [(item, value) for item, value in facts if value not in (None, "", "–")]
    return pl.DataFrame(known, schema=["Item", "Value"], orient="row")


def drive_facts(manifest: Manifest, summary: pl.DataFrame | None = None) -> pl.DataFrame:
    """What was tested and on which host: drive identity (or file target), host, CPU."""
    target, host, device = manifest.target, manifest.host, {}
    if target is not None and target.device:
        device = target.device
    facts = [
        ("Model", device.get("model")),
        ("Serial", device.get("serial")),
        ("Firmware", device.get("firmware")),
        ("Capacity", _capacity(device.get("size_bytes"))),
        ("Block size (logical / physical)", _block_sizes(device)),
        ("Transport", device.get("transport")),
    ]
    if target is not None:
        size = f" ({format_bytes(target.size_bytes)})" if target.size_bytes else ""
        facts.append(("Target", f"{target.kind} {target.path}{size}"))
    if host is not None:
        memory = f", {format_bytes(host.memory_bytes)} memory" if host.memory_bytes else ""
        threads = f" ({host.cpu_count} threads)" if host.cpu_count else ""
        facts += [
            ("Host", host.hostname),
            ("OS / kernel", f"{host.os} / {host.kernel}"),
            ("CPU", f"{host.cpu_model}{threads}{memory}"),
            ("fio clock", _fio_clock(manifest.fio_clocksource, host.clocksource)),
        ]
    elif summary is not None and "hostname" in summary.columns:
        hosts = summary["hostname"].drop_nulls().unique().sort().to_list()
        facts.append(("Host", ", ".join(hosts)))
    return facts_table(facts)


def _fio_clock(pinned: str | None, kernel: str | None) -> str | None:
    if pinned:
        return f"clocksource={pinned} for every step (kernel clock: {kernel})"
    return f"chosen by fio (kernel clock: {kernel})" if kernel else None


def _capacity(size_bytes: int | None) -> str | None:
    return f"{format_bytes(size_bytes)} ({size_bytes:,} bytes)" if size_bytes else None


def _block_sizes(device: dict) -> str | None:
    logical, physical = device.get("logical_block_bytes"), device.get("physical_block_bytes")
    return f"{logical} / {physical} bytes" if logical and physical else None


def run_facts(manifest: Manifest, summary: pl.DataFrame) -> pl.DataFrame:
    """How the test ran: suite, versions, times and durations, scale, purge, direct I/O."""
    steps_ok = sum(s.status == "ok" for s in manifest.steps)
    direct = {s.direct for s in manifest.steps if s.direct is not None}
    measured = (
        summary.group_by("step_index").agg(pl.col("runtime_s").max())["runtime_s"].sum()
        if "runtime_s" in summary.columns
        else None
    )
    wall = (manifest.ended - manifest.started).total_seconds() if manifest.ended else None
    source = (
        f"imported from {len(manifest.steps)} fio results"
        if manifest.source == "import"
        else "ssdlab run"
    )
    facts = [
        ("Label", manifest.label),
        ("Suite", manifest.suite),
        ("Source", source),
        ("Run id", manifest.run_id),
        ("Status", f"{manifest.status}, {steps_ok} of {len(manifest.steps)} steps ok"),
        ("Started", f"{manifest.started:%Y-%m-%d %H:%M:%S %Z}" if manifest.started else None),
        ("Wall time", format_duration(wall) if wall else None),
        ("Measured time", format_duration(measured) if measured else None),
        ("Duration scale", f"{manifest.scale:g} × the suite's" if manifest.scale != 1 else None),
        ("Purge", manifest.purge or ("none" if manifest.source == "run" else None)),
        ("Direct I/O", ", ".join("yes" if d else "no" for d in sorted(direct))),
        ("fio", manifest.fio_version),
        ("ssdlab", manifest.ssdlab_version),
    ]
    return facts_table(facts)
