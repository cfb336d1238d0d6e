"""SNIA PTS report pages in the drive review: what each PTS test's report carries.

:func:`steady_state` shows, per round block, the steady-state pages: the convergence plot
(every cell per round), the measurement-window plot (bands and least-squares fit) and the
determination table. :func:`results` shows the result pages: the IOPS matrix (block size x
R/W mix) with its 2D plot and heatmap, the throughput table and bars, the average, 99.999 %
and maximum response-time tables with their bars, and write saturation against time and
data written. :mod:`.drive` registers both as sections (the notebook shows them after each
other). The figures come from :mod:`ssdlab.analysis.pts`; this module only lays them out.
"""

from __future__ import annotations

import html
import weakref
from dataclasses import dataclass
from typing import Any

import polars as pl

from .. import charts, findings
from ..analysis.drive import DriveAnalysis
from ..analysis.pts import (
    FIVE_NINES_MIN_IOS,
    PTS_BLOCK_SIZES,
    PTS_MIXES,
    RoundBlock,
    WriteSaturation,
    mix_label,
    round_blocks,
    saturation_spans,
    write_saturation,
)
from ..analysis.steady_state import SteadyState
from ..console import plural
from ..phrases import parse_qd, qd_phrase, rephrase, workload_phrase
from ..tables import format_bw, format_bytes, format_iops, format_latency, format_number
from ..units import MB, bs_label, format_capacity, format_duration
from .section import Section, table

#: per tracked metric: the factor to display units, the unit, and what it is
DISPLAY = {
    "iops": (1.0, "IOPS", "IOPS"),
    "bw_bytes_s": (1 / MB, "MB/s", "throughput (MB/s)"),
    "lat_mean_ns": (1e-3, "µs", "average response time (µs)"),
    "clat_mean_ns": (1e-3, "µs", "average completion latency (µs)"),
    "clat_p99_ns": (1e-3, "µs", "p99 completion latency (µs)"),
}
#: the PTS tests in report order
TESTS = ("IOPS", "Throughput", "Latency")
#: the response-time panels share this width (px); a panel spanning more than LOG_SPREAD
#: times its smallest figure uses a log axis
LATENCY_PANELS_PX, LOG_SPREAD = 600, 20


@dataclass(frozen=True, eq=False)
class PtsRun:
    """A run's PTS figures: its round blocks and write-saturation steps."""

    blocks: list[RoundBlock]
    saturation: list[WriteSaturation]


_RUNS: weakref.WeakKeyDictionary[DriveAnalysis, PtsRun] = weakref.WeakKeyDictionary()


def pts_run(drive: DriveAnalysis) -> PtsRun:
    """The PTS figures of ``drive``, computed once per analysis."""
    if drive not in _RUNS:
        results = drive.results
        _RUNS[drive] = PtsRun(
            blocks=round_blocks(results),
            saturation=write_saturation(drive.steps, results.timeseries, results.manifest),
        )
    return _RUNS[drive]


def _display(metric: str) -> tuple[float, str, str]:
    return DISPLAY.get(metric, (1.0, metric, metric))


def _tracked_what(block: RoundBlock) -> str:
    """``4K random write QD1 IOPS``: the tracked cell and what is tracked."""
    _, _, what = _display(block.metric)
    cell = block.tracked_cell
    if cell is None:
        return f"{block.track} {what}"
    direction = f" ({block.direction}s)" if block.direction else ""
    return f"{cell['workload']} {cell['qd_label']}{direction} {what}"


def _window_text(state: SteadyState) -> str:
    return f"rounds {state.rounds[0]}-{state.rounds[-1]}" if state.rounds else "no rounds"


def _verdict(block: RoundBlock) -> str:
    return "steady" if block.state.steady else "not steady"


# -- steady state ------------------------------------------------------------------------------


def _convergence(block: RoundBlock, factor: float, unit: str) -> Any:
    cells = block.cells.filter(pl.col("value").is_not_null())
    if not cells.height:
        return None
    several_sizes = cells["bs_bytes"].n_unique() > 1
    data = cells.sort("bs_bytes", pl.col("read_pct"), descending=[False, True]).select(
        "round",
        value=pl.col("value") * factor,
        series=pl.col("bs_bytes").map_elements(bs_label, return_dtype=pl.String)
        if several_sizes
        else pl.col("workload"),
        group=pl.col("read_pct").map_elements(mix_label, return_dtype=pl.String)
        if several_sizes
        else pl.lit("all"),
        tracked=pl.col("cell") == block.track,
    )
    tracked = block.tracked_cell
    state = block.state
    _, _, what = _display(block.metric)
    return charts.convergence(
        data,
        f"{block.test} test, block {block.name}: {what} per round"
        + (", every block size" if several_sizes else ""),
        unit,
        window=(state.rounds[0], state.rounds[-1]) if state.rounds else None,
        default_group=mix_label(tracked["read_pct"]) if tracked else None,
    )


def _determination_sentence(block: RoundBlock, state: SteadyState) -> str:
    """The steady-state finding of a block (figures in display units, verdict as shares)."""
    determination = {
        "metric": block.metric,
        "rounds_run": block.rounds_run,
        "steady": state.steady,
        "reason": state.verdict,
        "mean": state.mean,
        "data_excursion": state.data_excursion,
        "slope_excursion": state.slope_excursion,
    }
    return findings.steady_state(determination, list(state.rounds), _tracked_what(block))


def steady_state(drive: DriveAnalysis) -> Section:
    """Per round block: convergence plot, measurement-window plot, determination table."""
    run = pts_run(drive)
    if not run.blocks:
        if run.saturation:
            return Section(
                missing="No steady-state rounds: write saturation runs without rounds; its "
                "IOPS against time and data written follow in the SNIA PTS results."
            )
        return Section(
            missing="No steady-state rounds: this run has no round blocks (the SNIA PTS "
            "suites repeat their test matrix until the tracked variable is steady)."
        )
    sentences, parts = [], []
    for block in run.blocks:
        factor, unit, _ = _display(block.metric)
        state = block.state.scaled(factor)
        sentences.append(_determination_sentence(block, state))
        chart = _convergence(block, factor, unit)
        if chart is not None:
            parts.append(chart)
        if state.rounds and state.mean is not None:
            parts.append(
                charts.steady_state(
                    state,
                    f"Measurement window, block {block.name}: {_tracked_what(block)}",
                    unit,
                )
            )
        parts.append(
            table(
                state.to_table(unit, block.rounds_run).rename(
                    {"item": "Determination", "value": "Value"}
                ),
                f"Steady-state determination, block {block.name} (tracked: {_tracked_what(block)})",
            )
        )
    return Section(sentences, parts)


# -- results ------------------------------------------------------------------------------------


def _long(block: RoundBlock, column: str, factor: float) -> pl.DataFrame:
    """A block's window results as ``block``, ``bs_bytes``, ``series`` (R/W mix),
    ``read_pct``, ``value`` (``column`` x ``factor``), block sizes small first."""
    return block.results.sort("bs_bytes", "read_pct").select(
        block=pl.col("bs_bytes").map_elements(bs_label, return_dtype=pl.String),
        bs_bytes="bs_bytes",
        series=pl.col("read_pct").map_elements(mix_label, return_dtype=pl.String),
        read_pct="read_pct",
        value=pl.col(column) * factor,
    )


def _matrix(block: RoundBlock, column: str, factor: float, unit: str) -> pl.DataFrame:
    """Block size (rows, small first) x R/W mix (columns, writes first), as the PTS tables."""
    long = _long(block, column, factor).sort("read_pct")
    wide = long.pivot(on="series", index=["bs_bytes", "block"], values="value").sort("bs_bytes")
    mixes = long["series"].unique(maintain_order=True).to_list()
    return wide.select(
        pl.col("block").alias("Block size"), *(pl.col(m).alias(f"{m} {unit}") for m in mixes)
    )


def _subset(block: RoundBlock) -> str:
    """`` (3 block sizes x 1 R/W mix of the PTS matrix)`` when a run measured part of it."""
    sizes = block.results["bs_bytes"].n_unique()
    mixes = block.results["read_pct"].n_unique()
    full = set(block.results["bs_bytes"]) >= set(PTS_BLOCK_SIZES) and set(
        block.results["read_pct"]
    ) >= set(PTS_MIXES)
    if block.test != "IOPS" or full:
        return ""
    return (
        f" ({sizes} block size{'s' * (sizes != 1)} x {mixes} R/W mix{'es' * (mixes != 1)}; "
        f"the PTS matrix is {len(PTS_BLOCK_SIZES)} x {len(PTS_MIXES)})"
    )


def _window_caption(block: RoundBlock) -> str:
    state = block.state
    return f"{_window_text(state)}, {_verdict(block)}"


def _cell_name(row: dict[str, Any]) -> str:
    """``4K random 70/30``: a cell of a PTS matrix as a workload phrase."""
    return workload_phrase(row["pattern"], row["bs_bytes"], row["read_pct"])


def _qd(results: pl.DataFrame) -> str:
    """The queue depth of a block's cells as a phrase (``QD128 (4 jobs x QD32)``)."""
    label = results["qd_label"][0]
    return qd_phrase(*qd) if (qd := parse_qd(label)) else label


def _iops(block: RoundBlock) -> tuple[list[str], list[Any]]:
    results = block.results
    qd = results["qd_label"][0]
    caption = (
        f"IOPS test, block {block.name} ({qd}): IOPS by block size and R/W mix, the average "
        f"of the measurement window ({_window_caption(block)}){_subset(block)}"
    )
    parts: list[Any] = [table(_matrix(block, "iops", 1.0, "IOPS"), caption)]
    long = _long(block, "iops", 1.0)
    if long["bs_bytes"].n_unique() > 1:
        parts.append(
            charts.by_block_size(long, f"IOPS test, block {block.name}: IOPS by block size", "IOPS")
        )
    if long["bs_bytes"].n_unique() > 1 or long["read_pct"].n_unique() > 1:
        parts.append(
            charts.matrix_heatmap(
                long, f"IOPS test, block {block.name}: block size x R/W mix", "IOPS"
            )
        )
    else:
        parts.append(_note("One cell only: the 2D and 3D plots need more block sizes or mixes."))
    return [_iops_sentence(block)], parts


def _iops_sentence(block: RoundBlock) -> str:
    results = block.results
    tracked = block.tracked_cell
    head = f"IOPS test at {_qd(results)} ({_window_caption(block)})"
    figures = []
    if tracked is not None:
        bs = tracked["bs_bytes"]
        for pct in (0, 100):
            row = results.filter(pl.col("bs_bytes").eq_missing(bs) & (pl.col("read_pct") == pct))
            if row.height:
                phrase = workload_phrase(tracked["pattern"], bs, pct)
                figures.append(f"{phrase} averages {format_iops(row['iops'][0])}")
    sentence = f"{head}: {' and '.join(figures)}" if figures else head
    if results.height > 1:
        low = results.sort("iops").row(0, named=True)
        high = results.sort("iops").row(-1, named=True)
        joint = "; the" if figures else ": the"
        sentence += (
            f"{joint} matrix ranges from {format_iops(low['iops'])} ({_cell_name(low)}) to "
            f"{format_iops(high['iops'])} ({_cell_name(high)})"
        )
    return sentence + "."


def _throughput(blocks: list[RoundBlock]) -> tuple[list[str], list[Any]]:
    rows = []
    for block in blocks:
        for row in block.results.iter_rows(named=True):
            rows.append(
                {
                    "block": bs_label(row["bs_bytes"]),
                    "bs_bytes": row["bs_bytes"],
                    "read_pct": row["read_pct"],
                    "series": {100: "Read (100/0)", 0: "Write (0/100)"}.get(
                        row["read_pct"], f"R/W {mix_label(row['read_pct'])}"
                    ),
                    "value": row["bw_bytes_s"] / MB,
                    "window": f"{block.name}: {_window_caption(block)}",
                    "qd": row["qd_label"],
                    "pattern": row["pattern"],
                }
            )
    long = pl.DataFrame(rows).sort("bs_bytes", "read_pct", descending=[False, True])
    wide = long.pivot(on="series", index=["bs_bytes", "block", "window", "qd"], values="value")
    series = long["series"].unique(maintain_order=True).to_list()
    view = wide.sort("bs_bytes").select(
        pl.col("block").alias("Block size"),
        pl.col("qd").alias("QD"),
        *(pl.col(s).alias(f"{s} MB/s") for s in series),
        pl.col("window").alias("Measurement window"),
    )
    caption = "Throughput test: MB/s by block size, the average of each block's measurement window"
    chart = charts.grouped_bars(
        long, "Throughput test: MB/s by block size", "MB/s", series_title="Direction"
    )
    sentences = []
    for (size,), group in long.group_by("bs_bytes", maintain_order=True):
        pattern = group["pattern"][0]
        figures = ", ".join(
            f"{workload_phrase(pattern, size, r['read_pct'])} {format_bw(r['value'] * MB)}"
            for r in group.iter_rows(named=True)
        )
        window = group["window"][0].split(": ", 1)[1]
        qd = group["qd"][0]
        qd = qd_phrase(*parsed) if (parsed := parse_qd(qd)) else qd
        sentences.append(f"Throughput test at {qd} ({window}): {figures}.")
    return sentences, [table(view, caption), chart]


LATENCY_STATS = (
    ("lat_mean_ns", "Average response time"),
    ("clat_p99_999_ns", "99.999 % response time"),
    ("lat_max_ns", "Maximum response time"),
)


def _latency_unit(values: pl.Series) -> tuple[float, str]:
    """µs, or ms when the typical (median) figure reaches 1 ms: (factor from ns, unit)."""
    typical = values.drop_nulls().median()
    return (1e-6, "ms") if typical is not None and typical >= 1e6 else (1e-3, "µs")


def _latency(block: RoundBlock) -> tuple[list[str], list[Any]]:
    results = block.results
    qd = results["qd_label"][0]
    window = _window_caption(block)
    parts: list[Any] = []
    panels = []
    for column, name in LATENCY_STATS:
        if column not in results.columns or results[column].is_null().all():
            why = (
                "fio reported no 99.999 % percentile (run fio with json+ output or a "
                "percentile_list including 99.999)"
                if "p99_999" in column
                else "fio reported no figure for it"
            )
            parts.append(_note(f"No {name.lower()}: {why}."))
            continue
        how = {
            "lat_mean_ns": "the average of the window's rounds",
            "clat_p99_999_ns": "of every I/O in the window (completion latency)",
            "lat_max_ns": "the slowest I/O in the window",
        }[column]
        factor, unit = _latency_unit(results[column])
        parts.append(
            table(
                _matrix(block, column, factor, unit),
                f"Latency test, block {block.name} ({qd}): {name.lower()} by block size and "
                f"R/W mix, {how} ({window})",
            )
        )
        panels.append((name, unit, _long(block, column, factor)))
    if panels:
        parts.append(_latency_chart(block, panels))
    notes = _five_nines_notes(results)
    if notes:
        parts.append(_note(" ".join(notes)))
    return [_latency_sentence(block)], parts


def _latency_chart(block: RoundBlock, panels: list[tuple[str, str, pl.DataFrame]]) -> Any:
    import altair as alt

    width = LATENCY_PANELS_PX // len(panels)
    charts_ = []
    for name, unit, frame in panels:
        positive = frame.filter(pl.col("value") > 0)["value"]
        log = positive.len() > 0 and positive.max() / positive.min() > LOG_SPREAD
        charts_.append(charts.grouped_bars(frame, name, unit, panel_width=width, log=log))
    return alt.hconcat(*charts_).properties(
        title=f"Latency test, block {block.name}: response times by block size and R/W mix"
    )


def _five_nines_notes(results: pl.DataFrame) -> list[str]:
    notes = []
    if "total_ios" in results.columns and results["total_ios"].drop_nulls().len():
        few = results.filter(pl.col("total_ios") < FIVE_NINES_MIN_IOS)
        if few.height:
            least = few.sort("total_ios").row(0, named=True)
            notes.append(
                f"{few.height} of {results.height} cells did fewer than "
                f"{FIVE_NINES_MIN_IOS:,} I/Os over the window (fewest: {least['total_ios']:,}, "
                f"{_cell_name(least)}), so their 99.999 % figure is at or near the slowest I/O."
            )
    capped = results.filter(pl.col("p99_999_capped"))
    if capped.height:
        notes.append(
            "fio's histogram bins lie up to 1.6 % above their samples, so where the 99.999 % "
            f"figure lay above the slowest completion ({plural(capped.height, 'cell')}), the "
            "slowest completion is shown."
        )
    if (results["p99_999_from"] == "fio").any():
        notes.append("Without json+ bins, a 99.999 % figure is the highest of the window's rounds.")
    return notes


def _latency_sentence(block: RoundBlock) -> str:
    results = block.results
    head = f"Latency test at {_qd(results)} ({_window_caption(block)})"
    tracked = block.tracked_cell
    sentence = head
    if tracked is not None:
        row = results.filter(pl.col("cell") == tracked["cell"])
        if row.height:
            r = row.row(0, named=True)
            sentence += (
                f": {_cell_name(r)} responds in {format_latency(r['lat_mean_ns'])} on average"
            )
            if r.get("clat_p99_999_ns") is not None:
                sentence += f", 99.999 % of I/Os within {format_latency(r['clat_p99_999_ns'])}"
            if r.get("lat_max_ns") is not None:
                sentence += f", the slowest in {format_latency(r['lat_max_ns'])}"
    if "lat_max_ns" in results.columns and results["lat_max_ns"].drop_nulls().len():
        worst = results.sort("lat_max_ns", nulls_last=True, descending=True).row(0, named=True)
        joint = "; the" if sentence != head else ": the"
        sentence += (
            f"{joint} slowest I/O of the matrix took {format_latency(worst['lat_max_ns'])} "
            f"({_cell_name(worst)})"
        )
    return sentence + "."


def _time_unit(seconds: float) -> tuple[str, float]:
    return ("h", 3600.0) if seconds >= 7200 else ("min", 60.0) if seconds >= 600 else ("s", 1.0)


def _saturation(ws: WriteSaturation) -> tuple[list[str], list[Any]]:
    spans = saturation_spans(ws)
    unit, seconds = _time_unit(ws.series["t_s"].max() or 0)
    in_tb = (spans["to_bytes"].max() or 0) >= 2e12
    size_unit, size_scale = ("TB", 1e12) if in_tb else ("GB", 1e9)
    spans_view = spans.select(
        pl.when(pl.col("unit") == "fill")
        .then(pl.format("{}-{}x capacity", pl.col("span") - 1, pl.col("span")))
        .otherwise(pl.format("quarter {} of the data", pl.col("span")))
        .alias("Data written"),
        (pl.col("from_bytes") / size_scale).alias(f"From ({size_unit})"),
        (pl.col("to_bytes") / size_scale).alias(f"To ({size_unit})"),
        (pl.col("from_s") / seconds).alias(f"From ({unit})"),
        (pl.col("to_s") / seconds).alias(f"To ({unit})"),
        pl.col("iops").alias("Avg IOPS"),
        pl.col("windows").alias("Log windows"),
    )
    capacity = f" (capacity {format_capacity(ws.capacity_bytes)})" if ws.capacity_bytes else ""
    parts: list[Any] = [
        charts.write_saturation(ws.series, f"Write saturation: {ws.workload}", ws.capacity_bytes),
        table(
            spans_view,
            f"Write saturation, step {ws.step}: IOPS by data written{capacity}",
        ),
    ]
    written = format_bytes(ws.io_bytes)
    times = f" ({format_number(ws.written_fills)}x the capacity)" if ws.written_fills else ""
    done = f"Write saturation, {rephrase(ws.workload)}: {written}{times} written in "
    if spans.is_empty():  # too short for one whole log window
        return [f"{done}{format_duration(ws.runtime_s)}; no log window to average."], parts
    first, last = spans.row(0, named=True), spans.row(-1, named=True)
    what = "capacity written" if first["unit"] == "fill" else "quarter of the data written"
    sentence = (
        f"{done}{format_duration(ws.runtime_s)}; it averaged {format_iops(first['iops'])} over "
        f"the first {what}"
    )
    if spans.height > 1 and last["iops"] is not None:
        sentence += f" and {format_iops(last['iops'])} over the last"
    logged = ws.series["written_bytes"].max() or 0.0
    if ws.io_bytes and logged < 0.99 * ws.io_bytes:  # each job's last partial interval
        sentence += (
            f". The chart and table cover {format_bytes(logged)} of it "
            f"({logged / ws.io_bytes * 100:.0f} %): fio does not log a job's last partial "
            "interval"
        )
    return [sentence + "."], parts


def _note(text: str) -> Any:
    """A footnote under a table or chart."""
    from IPython.display import HTML

    return HTML(f"<small>{html.escape(text)}</small>")


def results(drive: DriveAnalysis) -> Section:
    """The PTS result pages of every round block and write-saturation step of the run."""
    run = pts_run(drive)
    if not run.blocks and not run.saturation:
        return Section(
            missing="No SNIA PTS test: this run has no round blocks (snia-iops, "
            "snia-throughput, snia-latency) and no write-saturation step (snia-wsat)."
        )
    sentences: list[str] = []
    parts: list[Any] = []
    measured = [b for b in run.blocks if b.results.height]
    for block in run.blocks:
        if not block.results.height:
            sentences.append(
                f"{block.test} test, block {block.name}: no results, its measurement window "
                f"was not measured ({block.state.verdict or 'no rounds'})."
            )
    for test in TESTS:
        blocks = [b for b in measured if b.test == test]
        if not blocks:
            continue
        if test == "Throughput":
            found, shown = _throughput(blocks)
            sentences += found
            parts += shown
            continue
        for block in blocks:
            found, shown = (_iops if test == "IOPS" else _latency)(block)
            sentences += found
            parts += shown
    for ws in run.saturation:
        found, shown = _saturation(ws)
        sentences += found
        parts += shown
    return Section(sentences, parts)
