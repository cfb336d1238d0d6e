"""Comparison scoring: the tests two or more drives ran, one value per test and drive.

Only like-for-like measurements are compared. A **cell** is one workload point: access
pattern, block size, read share, iodepth and numjobs. A drive's cell is compared with
another's only when their workload parameters (:data:`CONDITIONS`: ioengine, LBA span and
offset, runtime, ramp, direct I/O, further fio options) are equal; a parameter a run did not
record (imported results) matches any value. Cells that differ are left out (with
``like_for_like=False`` they are kept) and :attr:`ComparisonAnalysis.differences` says what
differs, as do the run-level differences (suite, duration scale, suite parameters) that only
warn. ACT trials are compared by their scores and slice exceedances, never by the IOPS their
fio steps ran at (fixed by the requested load).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import polars as pl

from ..act.frames import act_score
from ..act.latency import ACT_LIMITS
from ..phrases import rephrase, workload_phrase
from ..results import Results
from ..units import format_duration, parse_size
from .drive import DriveAnalysis
from .figures import quoted_mix
from .repeats import direction_repeats, score_repeats
from .tails import ConsistencyRun
from .workloads import BANDWIDTH_BS, Mixes, latest, mix_points, qd_points, throughput

SCORE_COLUMNS = ["group", "test", "metric", "higher_is_better", "drive", "value"]
#: what identifies a cell (a workload point) across drives
CELL_KEYS = ["pattern", "bs_bytes", "read_pct", "iodepth", "numjobs"]
#: workload parameters two drives' cells must share to be compared: column -> name
CONDITIONS = {
    "ioengine": "ioengine",
    "span_bytes": "LBA span",
    "offset_bytes": "offset",
    "planned_runtime_s": "runtime",
    "planned_ramp_s": "ramp time",
    "direct": "direct I/O",
    "fio_options": "fio options",
}
CONDITION_TYPES = {
    "ioengine": pl.String,
    "span_bytes": pl.Int64,
    "offset_bytes": pl.Int64,
    "planned_runtime_s": pl.Float64,
    "planned_ramp_s": pl.Float64,
    "direct": pl.Boolean,
    "fio_options": pl.String,
}
#: the ACT thresholds compared, ms -> the limit in % of reads
ACT_THRESHOLDS = dict(ACT_LIMITS)


def _share(size: str | None, target_bytes: int | None) -> int | None:
    """Bytes of a step's ``size``/``offset``: a share of the target or an absolute size."""
    if size is None:
        return None
    text = size.strip()
    if text.endswith("%"):
        return int(float(text[:-1]) / 100 * target_bytes) if target_bytes else None
    return parse_size(text)


def step_conditions(results: Results) -> pl.DataFrame:
    """Per native step (``step_index``), its :data:`CONDITIONS`; imported steps and ACT
    trials, which record no workload, have none (every condition unknown)."""
    manifest = results.manifest
    target = manifest.target.size_bytes if manifest.target else None
    rows = []
    for record in manifest.steps:
        w = record.workload
        if w is None:
            continue
        offset = _share(w.offset, target) or 0
        span = _share(w.size, target)
        if span is None and target:
            span = target - offset  # fio's default: the file or device from the offset on
        rows.append(
            {
                "step_index": record.index,
                "ioengine": w.ioengine,
                "span_bytes": span,
                "offset_bytes": offset,
                "planned_runtime_s": w.runtime_s if w.loops is None else None,
                "planned_ramp_s": w.ramp_s,
                "direct": w.direct,
                "fio_options": ", ".join(f"{k}={v}" for k, v in sorted(w.options.items()))
                or "none",
            }
        )
    return pl.DataFrame(rows, schema={"step_index": pl.Int64, **CONDITION_TYPES}, orient="row")


def act_steps(results: Results) -> set[int]:
    """Step indexes of ACT's fio trials (their IOPS are fixed by the requested load)."""
    trials = results.act_trials
    if not trials.height:
        return set()
    blocks = {f"trial-{t}" for t in trials["trial"].to_list()}
    return {s.index for s in results.manifest.steps if s.block in blocks and s.workload is None}


def _binary(n_bytes: int) -> str:
    """An LBA span as suites give it: ``256 MiB``, ``16 GiB``, ``1.5 TiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.4g} {unit}"
    return f"{n_bytes} B"


def show_condition(column: str, value: Any) -> str:
    """A condition's value as a warning shows it."""
    if value is None:
        return "not recorded"
    if column in ("span_bytes", "offset_bytes"):
        return _binary(value)
    if column in ("planned_runtime_s", "planned_ramp_s"):
        return format_duration(value)
    if column == "direct":
        return "yes" if value else "no"
    return str(value)


def _compatible(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The conditions in which ``a`` and ``b`` differ (unknown matches anything)."""
    return [c for c in CONDITIONS if a[c] is not None and b[c] is not None and a[c] != b[c]]


@dataclass(frozen=True)
class Difference:
    """A parameter the compared runs differ in: what each drive ran and how many of their
    measurements were left out for it (0: the runs differ, the cells compared do not)."""

    parameter: str
    values: dict[str, str]
    excluded: int = 0
    note: str = ""
    listed: bool = True  # False: too long for a sentence (settings, fio options)

    def as_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "values": self.values,
            "excluded": self.excluded,
            "note": self.note,
            "listed": self.listed,
        }


def _peak_test(row: dict[str, Any], qds: list[int]) -> str:
    return (
        f"{workload_phrase(row['pattern'], row['bs_bytes'], row['read_pct'])} peak over "
        f"QD{min(qds)} to QD{max(qds)}"
    )


def _scores(
    frame: pl.DataFrame,
    group: str,
    test: pl.Expr,
    *,
    metric: pl.Expr | None = None,
    higher_is_better: bool = True,
    value: pl.Expr | None = None,
    step_index: pl.Expr | None = None,
    workload: pl.Expr | None = None,
) -> pl.DataFrame:
    """Score rows of ``frame`` (a row per drive ``label``): :data:`SCORE_COLUMNS` with the
    ``step_index`` the value comes from (null for a figure of several steps) and the
    ``workload`` (sweep) it belongs to; ``metric`` and ``value`` default to the columns."""
    return frame.select(
        group=pl.lit(group),
        test=test,
        metric=pl.col("metric") if metric is None else metric,
        higher_is_better=pl.lit(higher_is_better),
        drive="label",
        value=pl.col("value") if value is None else value,
        step_index=pl.lit(None, pl.Int64) if step_index is None else step_index,
        workload=pl.lit(None, pl.String) if workload is None else workload,
    )


def qd_scores(qd: pl.DataFrame) -> pl.DataFrame:
    """Each QD sweep's peak over the queue depths every drive measured it at, and small-block
    p99.99 latency at the lowest QD two drives share."""
    if not qd.height:
        return pl.DataFrame()
    frames = []
    for (workload,), rows in qd.group_by("workload", maintain_order=True):
        per_drive = rows.group_by("label", maintain_order=True).agg(pl.col("qd").unique())
        if per_drive.height < 2:
            continue
        common = set.intersection(*(set(q) for q in per_drive["qd"].to_list()))
        if len(common) < 2:
            continue
        shared = rows.filter(pl.col("qd").is_in(list(common)))
        test = _peak_test(shared.row(0, named=True), sorted(common))
        peaks = shared.group_by("label", "metric", maintain_order=True).agg(pl.col("value").max())
        frames.append(_scores(peaks, "qd", pl.lit(test), workload=pl.lit(workload)))
    small = qd.filter(pl.col("bs_bytes") < BANDWIDTH_BS)
    if small.height:
        common = small.group_by("workload", "qd").agg(pl.col("label").n_unique().alias("n"))
        lowest = common.filter(pl.col("n") >= 2).group_by("workload").agg(pl.col("qd").min())
        at = small.join(lowest, on=["workload", "qd"])
        if at.height:
            frames.append(
                _scores(
                    at,
                    "latency",
                    pl.lit("p99.99 latency of ") + _phrase_column(),
                    metric=pl.lit("ns"),
                    higher_is_better=False,
                    value=pl.col("clat_p99_99_ns"),
                    step_index=pl.col("step_index"),
                    workload=pl.col("workload"),
                )
            )
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def mix_scores(steps: pl.DataFrame) -> pl.DataFrame:
    """Per mix sweep two or more drives ran: the mixed point nearest 70/30 that they all
    measured, and the average over the read shares they all measured (when those are three or
    more, one of them mixed)."""
    if not steps.height:
        return pl.DataFrame()
    frames = []
    for (sweep,), rows in steps.group_by("sweep", maintain_order=True):
        shares = rows.group_by("label", maintain_order=True).agg(pl.col("read_pct").unique())
        if shares.height < 2:
            continue
        common = sorted(set.intersection(*(set(s) for s in shares["read_pct"].to_list())))
        nearest = quoted_mix(common)
        if nearest is None:
            continue
        first = rows.row(0, named=True)
        point = workload_phrase(
            first["pattern"], first["bs_bytes"], nearest, first["iodepth"], first["numjobs"]
        )
        at = rows.filter(pl.col("read_pct") == nearest)
        frames.append(
            _scores(
                at, "mix", pl.lit(point), step_index=pl.col("step_index"), workload=pl.lit(sweep)
            )
        )
        if len(common) >= 3:
            phrase = workload_phrase(
                first["pattern"], first["bs_bytes"], None, first["iodepth"], first["numjobs"]
            )
            average = (
                rows.filter(pl.col("read_pct").is_in(common))
                .group_by("label", "metric", maintain_order=True)
                .agg(pl.col("value").mean())
            )
            test = f"{phrase} (average of {len(common)} mixes)"
            frames.append(_scores(average, "mix", pl.lit(test), workload=pl.lit(sweep)))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def _phrase_column() -> pl.Expr:
    return pl.struct(*CELL_KEYS).map_elements(
        lambda r: workload_phrase(*(r[k] for k in CELL_KEYS)), return_dtype=pl.String
    )


def point_scores(classified: pl.DataFrame, qd: pl.DataFrame, mixes: Mixes) -> pl.DataFrame:
    """Steps in no QD or mix sweep: throughput of each workload and QD."""
    swept = pl.concat(
        [
            qd.select("label", "step_index"),
            mixes.steps.select("label", "step_index")
            if mixes.steps.height
            else pl.DataFrame(schema={"label": pl.String, "step_index": pl.Int64}),
        ]
    )
    points = classified.join(swept, on=["label", "step_index"], how="anti")
    if not points.height:
        return pl.DataFrame()
    per_step = latest(
        points.group_by(
            "label", "step_index", *CELL_KEYS, "workload", "qd_label", "metric",
            maintain_order=True,
        ).agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum()),
        ["label", *CELL_KEYS],
    )  # fmt: skip
    return _scores(
        per_step, "point", _phrase_column(), value=throughput(), step_index=pl.col("step_index")
    ).drop("workload")


@dataclass(eq=False)
class ComparisonAnalysis:
    """The analyses of several runs side by side, each run under its display name; the
    ``subject`` (default: the first) is the reference the others' cells are matched to."""

    drives: list[DriveAnalysis]
    names: list[str]
    subject: str | None = None
    like_for_like: bool = True

    def __post_init__(self) -> None:
        if self.subject is None:
            self.subject = self.names[0] if self.names else None

    # -- what ran -------------------------------------------------------------------------

    @cached_property
    def all_cells(self) -> pl.DataFrame:
        """Classified steps of every run (ACT trials left out) with their conditions;
        ``label`` is the run's display name."""
        frames = []
        for drive, name in zip(self.drives, self.names, strict=True):
            results = drive.results
            steps = drive.classified.filter(~pl.col("step_index").is_in(list(act_steps(results))))
            steps = steps.with_columns(drive.charted)  # a cell is its sweep's own step
            steps = steps.join(step_conditions(results), on="step_index", how="left")
            frames.append(
                steps.with_columns(label=pl.lit(name), run_id=pl.lit(results.manifest.run_id))
            )
        if not frames:
            return pl.DataFrame()
        return pl.concat(frames, how="diagonal_relaxed")

    @cached_property
    def _matching(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(kept, excluded): per drive and cell, the latest step and whether it is compared;
        ``excluded`` has ``label``, ``cell`` and ``differs`` (the conditions)."""
        cells = self.all_cells
        schema = {"label": pl.String, "step_index": pl.Int64}
        if not cells.height:
            return pl.DataFrame(schema=schema), pl.DataFrame()
        steps = latest(
            cells.unique(["label", "step_index"], keep="first", maintain_order=True),
            ["label", *CELL_KEYS],
        )
        order = {n: i for i, n in enumerate(self.names)}
        kept, excluded = [], []
        for _, rows in steps.group_by(CELL_KEYS, maintain_order=True):
            rows = rows.sort(pl.col("label").replace_strict(order, return_dtype=pl.Int64))
            named = list(rows.iter_rows(named=True))
            first = next((r for r in named if r["label"] == self.subject), named[0])
            named = [first, *(r for r in named if r is not first)]
            # what the cells kept so far ran: a setting one of them did not record is taken
            # from the next that did, so drives are matched with each other, not only with
            # the reference
            ref = dict(first)
            matched = []
            for r in named:
                differs = _compatible(ref, r)
                if differs and self.like_for_like:
                    excluded.append(
                        {
                            "label": r["label"],
                            "step_index": r["step_index"],
                            "cell": workload_phrase(*(r[k] for k in CELL_KEYS)),
                            "differs": differs,
                            "reference": first["label"],
                        }
                    )
                else:
                    matched.append(r)
                    ref |= {c: r[c] for c in CONDITIONS if ref[c] is None}
            if len(matched) >= 2:
                kept += [(r["label"], r["step_index"]) for r in matched]
        return (
            pl.DataFrame(kept, schema=schema, orient="row"),
            pl.DataFrame(excluded) if excluded else pl.DataFrame(),
        )

    @cached_property
    def classified(self) -> pl.DataFrame:
        """Classified steps of every run that are compared like for like: the latest step of
        each cell two or more drives measured with equal workload parameters."""
        kept, _ = self._matching
        cells = self.all_cells
        if not cells.height or not kept.height:
            return cells.clear() if cells.height or cells.width else cells
        return cells.join(kept, on=["label", "step_index"])

    @cached_property
    def excluded(self) -> pl.DataFrame:
        """Measurements left out: ``label``, ``cell``, ``differs`` (list of conditions) and
        the ``reference`` drive they were matched to."""
        return self._matching[1]

    @cached_property
    def qd(self) -> pl.DataFrame:
        """QD sweep points of every run; ``series`` is the run's display name."""
        if not self.classified.height:
            return pl.DataFrame()
        return qd_points(self.classified).with_columns(series=pl.col("label"))

    @cached_property
    def mixes(self) -> Mixes:
        if not self.classified.height:
            empty = pl.DataFrame(schema={"sweep": pl.String, "pattern": pl.String})
            return Mixes(empty, empty)
        return mix_points(self.classified)

    # -- run-level parameters -------------------------------------------------------------

    @cached_property
    def parameters(self) -> pl.DataFrame:
        """What each run ran with, as shown: ``drive``, ``suite``, ``scale``, ``settings``
        (``--set``), ``target`` and, over its measured cells, each of :data:`CONDITIONS`."""
        rows = []
        cells = self.all_cells
        for drive, name in zip(self.drives, self.names, strict=True):
            m = drive.results.manifest
            row: dict[str, str] = {
                "drive": name,
                "suite": m.suite,
                "scale": f"{m.scale:g}x",
                "settings": ", ".join(f"{k}={v}" for k, v in sorted((m.params or {}).items()))
                or "none",
                "target": m.target.kind if m.target else "not recorded",
            }
            mine = cells.filter(pl.col("label") == name) if cells.height else cells
            for column in CONDITIONS:
                values = (
                    sorted(set(mine[column].to_list()), key=lambda v: (v is None, str(v)))
                    if mine.height and column in mine.columns
                    else []
                )
                shown = dict.fromkeys(show_condition(column, v) for v in values)
                row[column] = ", ".join(shown) or "–"
            rows.append(row)
        return pl.DataFrame(rows)

    @cached_property
    def unknown(self) -> dict[str, list[str]]:
        """Per drive, the conditions it did not record (imported results)."""
        cells = self.all_cells
        found = {}
        for name in self.names:
            mine = cells.filter(pl.col("label") == name) if cells.height else cells
            if mine.height:
                found[name] = [
                    CONDITIONS[c]
                    for c in CONDITIONS
                    if c in mine.columns and mine[c].null_count() == mine.height
                ]
        return found

    @cached_property
    def differences(self) -> list[Difference]:
        """The parameters the runs differ in, run-level ones first (see the module)."""
        params = self.parameters
        if params.height < 2:
            return []
        found = []
        run_level = {
            "suite": "suite",
            "scale": "duration scale",
            "settings": "suite settings (--set)",
            "target": "target kind",
        }
        for column, name in run_level.items():
            values = dict(zip(params["drive"], params[column], strict=True))
            if len(set(values.values()) - {"not recorded"}) > 1:
                found.append(
                    Difference(
                        name, values, note=self._run_note(column), listed=column != "settings"
                    )
                )
        excluded = self.excluded
        for column, name in CONDITIONS.items():
            values = dict(zip(params["drive"], params[column], strict=True))
            known = {v for v in values.values() if v not in ("not recorded", "–")}
            left_out = (
                excluded.filter(pl.col("differs").list.contains(column)).height
                if excluded.height
                else 0
            )
            if len(known) > 1 or left_out:
                found.append(
                    Difference(name, values, excluded=left_out, listed=column != "fio_options")
                )
        found += self.act_differences
        return found

    def _run_note(self, column: str) -> str:
        if column == "scale":
            return "scaled runs measure for a shorter time and over smaller absolute spans"
        if column == "suite":
            return (
                "the suites precondition differently, so even equal cells start from "
                "different states"
            )
        return ""

    # -- scores ---------------------------------------------------------------------------

    @cached_property
    def consistency(self) -> dict[str, ConsistencyRun]:
        """The longest consistency run of each drive that has one, where it matches the
        subject's (or the first drive's) workload and parameters."""
        runs = {
            name: max(drive.consistency, key=lambda r: r.figures.windows)
            for drive, name in zip(self.drives, self.names, strict=True)
            if drive.consistency
        }
        if len(runs) < 2:
            return runs
        cells = self.all_cells
        conditions = {}
        for name, run in runs.items():
            rows = cells.filter(
                (pl.col("label") == name) & (pl.col("step_index") == run.step_index)
            )
            conditions[name] = rows.row(0, named=True) if rows.height else dict.fromkeys(CONDITIONS)
        ref = self.subject if self.subject in runs else next(iter(runs))
        return {
            name: run
            for name, run in runs.items()
            if run.workload == runs[ref].workload
            and (not self.like_for_like or not _compatible(conditions[ref], conditions[name]))
        }

    @cached_property
    def act(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(scores, exceedances) of the drives with ACT trials on their own device (another
        device's trials left out): per drive its score (:func:`~ssdlab.act.frames.act_score`:
        ``load``, ``reads_s`` asked at that load, ``base_reads_s`` at 1x, trial ``duration_s``
        and ``slice_s``, ``lower_bound``: no load above it failed); per drive, load run by two
        or more drives and threshold, the worst slice's share of reads at or over it (``pct``,
        ``limit_pct``)."""
        scores, exceed = [], []
        for drive, name in zip(self.drives, self.names, strict=True):
            trials = drive.results.act_trials.filter(~pl.col("other_device"))
            slices = drive.results.act_slices
            if not trials.height:
                continue
            rates = (
                slices.group_by("trial").agg(pl.col("requested_read_rate").max())
                if slices.height
                else pl.DataFrame(schema={"trial": pl.Int64, "requested_read_rate": pl.Float64})
            )
            trials = trials.join(rates, on="trial", how="left").with_columns(
                reads_s=pl.col("requested_read_rate").fill_null(pl.col("load") * 2000.0)
            )
            score = act_score(trials)
            if (best := score.best) is not None:
                scores.append(
                    {
                        "drive": name,
                        "load": best["load"],
                        "reads_s": best["reads_s"],
                        "base_reads_s": best["reads_s"] / best["load"],
                        "duration_s": best["duration_s"],
                        "slice_s": best["slice_s"],
                        "lower_bound": score.lower_bound,
                    }
                )
            for row in latest(trials.rename({"trial": "step_index"}), ["load"]).iter_rows(
                named=True
            ):
                for threshold, limit in ACT_THRESHOLDS.items():
                    exceed.append(
                        {
                            "drive": name,
                            "load": row["load"],
                            "threshold_ms": float(threshold),
                            "limit_pct": float(limit),
                            "pct": row[f"max_pct_over_{threshold:g}ms"],
                            "base_reads_s": row["reads_s"] / row["load"] if row["load"] else None,
                        }
                    )
        score_frame = pl.DataFrame(
            scores,
            schema={
                "drive": pl.String,
                "load": pl.Float64,
                "reads_s": pl.Float64,
                "base_reads_s": pl.Float64,
                "duration_s": pl.Int64,
                "slice_s": pl.Int64,
                "lower_bound": pl.Boolean,
            },
        )
        exceed_frame = pl.DataFrame(
            exceed,
            schema={
                "drive": pl.String,
                "load": pl.Float64,
                "threshold_ms": pl.Float64,
                "limit_pct": pl.Float64,
                "pct": pl.Float64,
                "base_reads_s": pl.Float64,
            },
        )
        # only loads asked at the same rates by two or more drives compare like for like
        exceed_frame = exceed_frame.filter(
            pl.col("drive").n_unique().over("load", "threshold_ms", "base_reads_s") >= 2
        )
        return score_frame, exceed_frame

    @cached_property
    def act_differences(self) -> list[Difference]:
        scores, _ = self.act
        found = []
        if scores.height < 2:
            return found
        for column, name, show in (
            ("base_reads_s", "ACT 1x read rate", lambda v: f"{v:,.0f} reads/s"),
            ("duration_s", "ACT trial duration", format_duration),
            ("slice_s", "ACT slice length", format_duration),
        ):
            values = {r["drive"]: show(r[column]) for r in scores.iter_rows(named=True)}
            if len(set(values.values())) > 1:
                note = (
                    "the scores are compared in reads/s, not as multiples of 1x"
                    if column == "base_reads_s"
                    else "a longer trial is a harder test"
                )
                found.append(Difference(name, values, note=note))
        return found

    def _act_scores(self) -> pl.DataFrame:
        scores, exceed = self.act
        rows = []
        # a lower bound supports no order or tie: act_comparison states such scores
        if scores.height >= 2 and not scores["lower_bound"].any():
            same_base = scores["base_reads_s"].n_unique() == 1
            for r in scores.iter_rows(named=True):
                if same_base:
                    rows.append(("act", "ACT score", "x", True, r["drive"], float(r["load"])))
                else:
                    rows.append(
                        ("act", "ACT score (reads/s)", "reads/s", True, r["drive"], r["reads_s"])
                    )
        for r in exceed.drop_nulls("pct").iter_rows(named=True):
            test = f"ACT at {r['load']:g}x: worst slice, reads at or over {r['threshold_ms']:g} ms"
            rows.append(("act", test, "%", False, r["drive"], float(r["pct"])))
        frame = pl.DataFrame(rows, schema=SCORE_COLUMNS, orient="row")
        # thresholds no drive exceeded say nothing
        return frame.filter(pl.col("value").max().over("test") > 0)

    def _other_scores(self) -> pl.DataFrame:
        """Consistency tail averages and whole-run write amplification."""
        rows = [
            (
                "consistency",
                f"{rephrase(run.workload)} consistency (tail average)",
                "IOPS",
                True,
                name,
                run.figures.iops_mean,
            )
            for name, run in self.consistency.items()
        ]
        for drive, name in zip(self.drives, self.names, strict=True):
            waf = drive.results.waf
            if waf.height:
                last = waf.sort("step_index").row(-1, named=True)
                if last["cumulative_waf"] is not None:
                    rows.append(
                        (
                            "endurance",
                            "Write amplification (whole run)",
                            "",
                            False,
                            name,
                            float(last["cumulative_waf"]),
                        )
                    )
        return pl.DataFrame(rows, schema=SCORE_COLUMNS, orient="row")

    @cached_property
    def scores(self) -> pl.DataFrame:
        """One row per test and drive: ``group``, ``test``, ``metric``, ``higher_is_better``,
        ``drive``, ``value``; only tests that two or more drives ran like for like."""
        parts = [self._other_scores(), self._act_scores()]
        if self.classified.height:
            parts = [
                qd_scores(self.qd),
                mix_scores(self.mixes.steps),
                point_scores(self.classified, self.qd, self.mixes),
                *parts,
            ]
        present = [p for p in parts if p.height]
        if not present:
            return pl.DataFrame(
                schema={
                    "group": pl.String,
                    "test": pl.String,
                    "metric": pl.String,
                    "higher_is_better": pl.Boolean,
                    "drive": pl.String,
                    "value": pl.Float64,
                }
            )
        frame = pl.concat(present, how="diagonal_relaxed")
        frame = frame.unique(["test", "drive"], keep="first", maintain_order=True)
        return self._with_repeats(frame.filter(pl.len().over("test") >= 2))

    @cached_property
    def _repeats(self) -> dict[str, tuple[dict, dict]]:
        """Per drive: its steps' repeats per score metric (:func:`score_repeats`) and its
        p99.99 latencies' repeats per direction (:func:`direction_repeats`)."""
        return {
            name: (
                score_repeats(drive.every_repeat),
                direction_repeats(drive.every_repeat, "clat_p99_99_ns"),
            )
            for drive, name in zip(self.drives, self.names, strict=True)
        }

    def _with_repeats(self, scores: pl.DataFrame) -> pl.DataFrame:
        """``scores`` with ``repeats``: each value's repeats (for a step run with
        ``--repeat``), when any run has repeats."""
        found = {name: per_metric for name, (per_metric, _) in self._repeats.items()}
        if not any(found.values()) or "step_index" not in scores.columns:
            return scores
        repeats = [
            found[drive].get((index, metric)) if index is not None else None
            for drive, index, metric in scores.select("drive", "step_index", "metric").rows()
        ]
        return scores.with_columns(repeats=pl.Series(repeats, dtype=pl.List(pl.Float64)))

    # -- the subject against each rival --------------------------------------------------

    @cached_property
    def measurements(self) -> pl.DataFrame:
        """Every compared cell's figures per drive: ``drive``, ``item`` (the workload
        phrase), ``measure`` (``IOPS``, ``MB/s``, ``p99.99 latency``, ``read p99.99
        latency``...), ``metric``, ``higher_is_better``, ``value``; with ``repeats`` (each
        value's repeats, null for a step run once) when any run has repeats."""
        cells = self.classified
        schema = {
            "drive": pl.String,
            "item": pl.String,
            "measure": pl.String,
            "metric": pl.String,
            "higher_is_better": pl.Boolean,
            "value": pl.Float64,
        }
        if not cells.height:
            return pl.DataFrame(schema=schema)
        item = _phrase_column().alias("item")
        rate = (
            cells.group_by("label", "step_index", *CELL_KEYS, "metric", maintain_order=True)
            .agg(pl.col("iops").sum(), pl.col("bw_bytes_s").sum())
            .select(
                drive="label",
                item=item,
                measure="metric",
                metric="metric",
                higher_is_better=pl.lit(True),
                value=throughput(),
                step_index="step_index",
                direction=pl.lit(None, pl.String),
            )
        )
        mixed = (pl.col("read_pct") > 0) & (pl.col("read_pct") < 100)
        tail = cells.select(
            drive="label",
            item=item,
            measure=pl.when(mixed)
            .then(pl.col("direction") + pl.lit(" p99.99 latency"))
            .otherwise(pl.lit("p99.99 latency")),
            metric=pl.lit("ns"),
            higher_is_better=pl.lit(False),
            value=pl.col("clat_p99_99_ns").cast(pl.Float64),
            step_index="step_index",
            direction="direction",
        )
        keyed = schema | {"step_index": pl.Int64, "direction": pl.String}
        frame = pl.concat([rate.cast(keyed), tail.cast(keyed)])  # type: ignore[arg-type]
        if not any(a or b for a, b in self._repeats.values()):
            return frame.drop("step_index", "direction")
        repeats = [
            self._repeats[drive][1].get((index, direction))
            if metric == "ns"
            else self._repeats[drive][0].get((index, metric))
            for drive, index, metric, direction in frame.select(
                "drive", "step_index", "metric", "direction"
            ).rows()
        ]
        return frame.drop("step_index", "direction").with_columns(
            repeats=pl.Series(repeats, dtype=pl.List(pl.Float64))
        )

    def rivals(self) -> pl.DataFrame:
        """The subject's figures beside each rival's, per compared item: ``rival``, ``item``,
        ``measure``, ``metric``, ``higher_is_better``, ``value`` (the subject's),
        ``rival_value`` (cells, then consistency, ACT and endurance tests); with ``repeats``
        and ``rival_repeats`` when any run has repeats (:attr:`measurements`)."""
        tests = self.scores.filter(pl.col("group").is_in(["consistency", "act", "endurance"]))
        others = tests.select(
            "drive",
            item="test",
            measure=pl.col("metric").replace({"x": "load", "": "value", "%": "share"}),
            metric="metric",
            higher_is_better="higher_is_better",
            value=pl.col("value").cast(pl.Float64),
        )
        every = pl.concat([self.measurements, others], how="diagonal_relaxed").drop_nulls("value")
        keys = ["item", "measure", "metric", "higher_is_better"]
        mine = every.filter(pl.col("drive") == self.subject).drop("drive")
        repeats = ["repeats"] if "repeats" in every.columns else []
        theirs = every.filter(pl.col("drive") != self.subject).rename(
            {"drive": "rival", "value": "rival_value"} | {r: f"rival_{r}" for r in repeats}
        )
        return theirs.join(mine, on=keys).select(
            "rival", *keys, "value", "rival_value", *repeats, *(f"rival_{r}" for r in repeats)
        )


def same_runs(results: Sequence[Results]) -> list[str]:
    """Run ids that appear more than once among ``results`` (a run compared with itself)."""
    ids = [r.manifest.run_id for r in results]
    return sorted({i for i in ids if ids.count(i) > 1})
