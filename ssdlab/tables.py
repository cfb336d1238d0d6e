"""Tables for people: summary frames in display units, as rich tables or HTML."""

from __future__ import annotations

import html

import polars as pl
from rich.table import Table

from .manifest import Manifest
from .units import format_size

#: (column, heading, expression turning canonical units into display units)
SUMMARY_VIEW: list[tuple[str, str, pl.Expr]] = [
    ("step", "Step", pl.col("step")),
    ("direction", "Dir", pl.col("direction")),
    ("bs_bytes", "Block", pl.col("bs_bytes").map_elements(format_size, return_dtype=pl.String)),
    ("iodepth", "QD", pl.col("iodepth")),
    ("numjobs", "Jobs", pl.col("numjobs")),
    ("iops", "IOPS", pl.col("iops").round(0).cast(pl.Int64)),
    ("bw_bytes_s", "MiB/s", (pl.col("bw_bytes_s") / 2**20).round(1)),
    ("clat_mean_ns", "Mean µs", (pl.col("clat_mean_ns") / 1e3).round(1)),
    ("clat_p99_ns", "p99 µs", (pl.col("clat_p99_ns") / 1e3).round(1)),
    ("clat_p99_9_ns", "p99.9 µs", (pl.col("clat_p99_9_ns") / 1e3).round(1)),
    ("clat_p99_99_ns", "p99.99 µs", (pl.col("clat_p99_99_ns") / 1e3).round(1)),
    ("clat_max_ns", "Max µs", (pl.col("clat_max_ns") / 1e3).round(1)),
]


def summary_view(summary: pl.DataFrame) -> pl.DataFrame:
    """The headline columns of a summary in display units (IOPS, MiB/s, µs)."""
    return summary.select(
        expr.alias(heading) for col, heading, expr in SUMMARY_VIEW if col in summary.columns
    )


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def summary_table(summary: pl.DataFrame) -> Table:
    """A rich table of :func:`summary_view`."""
    view = summary_view(summary)
    table = Table(show_lines=False, header_style="bold")
    for name, dtype in view.schema.items():
        table.add_column(name, justify="right" if dtype.is_numeric() else "left")
    for row in view.iter_rows():
        table.add_row(*(_cell(v) for v in row))
    return table


def html_table(frame: pl.DataFrame, *, caption: str | None = None) -> str:
    """A plain HTML table (numbers right-aligned, thousands separated) for reports."""
    heads = "".join(
        f'<th class="{"num" if t.is_numeric() else "txt"}">{html.escape(n)}</th>'
        for n, t in frame.schema.items()
    )
    numeric = [t.is_numeric() for t in frame.schema.values()]
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if num else "txt"}">{html.escape(_cell(v))}</td>'
            for v, num in zip(row, numeric, strict=True)
        )
        + "</tr>"
        for row in frame.iter_rows()
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="ssdlab-table">{cap}<thead><tr>{heads}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def run_facts(manifest: Manifest) -> pl.DataFrame:
    """Two-column table of what was tested, where and with what."""
    host, target = manifest.host, manifest.target
    steps_ok = sum(s.status == "ok" for s in manifest.steps)
    direct = {s.direct for s in manifest.steps if s.direct is not None}
    facts = [
        ("Label", manifest.label),
        ("Suite", manifest.suite),
        ("Run id", manifest.run_id),
        ("Status", f"{manifest.status}, {steps_ok} of {len(manifest.steps)} steps ok"),
        ("Started", f"{manifest.started:%Y-%m-%d %H:%M:%S %Z}" if manifest.started else "–"),
        ("Ended", f"{manifest.ended:%Y-%m-%d %H:%M:%S %Z}" if manifest.ended else "–"),
        ("Target", f"{target.kind} {target.path}" if target else "–"),
        ("Direct I/O", ", ".join("yes" if d else "no" for d in sorted(direct)) or "–"),
        ("Host", host.hostname if host else "–"),
        ("OS / kernel", f"{host.os} / {host.kernel}" if host else "–"),
        ("CPU", f"{host.cpu_model} ({host.cpu_count} threads)" if host else "–"),
        ("fio", manifest.fio_version or "–"),
        ("ssdlab", manifest.ssdlab_version or "–"),
    ]
    return pl.DataFrame(facts, schema=["Item", "Value"], orient="row")
