"""Review figures on hand-built frames whose answers follow by arithmetic."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

from ssdlab.analysis import consistency, mix_sweep, qd_scaling
from ssdlab.errors import InputError

MB = 1_000_000


def summary(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A summary frame: defaults for what a row leaves out, step_index in row order."""
    full = [
        {
            "run_id": "r1",
            "label": "drive",
            "step_index": i,
            "step": f"s{i}",
            "rwmixread": None,
            "numjobs": 1,
            "lat_mean_ns": 1000.0 * (i + 1),
            "clat_p99_ns": 5000.0 * (i + 1),
            **row,
        }
        for i, row in enumerate(rows)
    ]
    return pl.DataFrame(full, schema_overrides={"rwmixread": pl.Int64})


def rate(rw: str, direction: str, bs: int, iops: float, **extra: Any) -> dict[str, Any]:
    return {"rw": rw, "direction": direction, "bs_bytes": bs, "iops": iops,
            "bw_bytes_s": iops * bs, **extra}  # fmt: skip


def test_qd_scaling_lowest_qd_within_95_percent() -> None:
    frame = summary(
        [
            # 4k random read: best 400 MB/s at QD16; 380/400 = 95 % exactly -> QD8
            *(
                rate("randread", "read", 4096, bw * MB / 4096, iodepth=qd)
                for qd, bw in ((1, 100), (4, 300), (8, 380), (16, 400), (32, 390))
            ),
            # 4k random write: best 200; QD4 twice (4x1 at 200, 1x4 at 190) -> the faster
            rate("randwrite", "write", 4096, 50 * MB / 4096, iodepth=1),
            rate("randwrite", "write", 4096, 190 * MB / 4096, iodepth=1, numjobs=4),
            rate("randwrite", "write", 4096, 200 * MB / 4096, iodepth=4),
            rate("randwrite", "write", 4096, 200 * MB / 4096, iodepth=2, numjobs=8),
        ]
    )
    out = qd_scaling(frame)
    assert out.columns == [
        "run_id", "label", "rw", "bs_bytes", "rwmixread", "direction", "qd", "iodepth",
        "numjobs", "step", "iops", "bw_bytes_s", "best_bw_bytes_s", "share_of_best",
        "lat_mean_ns", "clat_p99_ns",
    ]  # fmt: skip
    rows = {r["rw"]: r for r in out.iter_rows(named=True)}
    read = rows["randread"]
    assert (read["qd"], read["iodepth"], read["numjobs"], read["step"]) == (8, 8, 1, "s2")
    assert read["bw_bytes_s"] == 380 * MB
    assert read["iops"] == pytest.approx(380 * MB / 4096)
    assert read["best_bw_bytes_s"] == 400 * MB
    assert read["share_of_best"] == pytest.approx(0.95)
    assert (read["lat_mean_ns"], read["clat_p99_ns"]) == (3000.0, 15000.0)
    write = rows["randwrite"]
    assert (write["qd"], write["iodepth"], write["numjobs"]) == (4, 4, 1)
    assert write["bw_bytes_s"] == 200 * MB
    # a stricter threshold moves the read answer to QD16 (390/400 = 97.5 %)
    strict = qd_scaling(frame, threshold=0.98).filter(pl.col("rw") == "randread")
    assert strict["qd"].to_list() == [16]


def test_qd_scaling_keeps_directions_mixes_and_runs_apart() -> None:
    rows = []
    for run in ("a", "b"):
        for qd, scale in ((1, 1), (4, 3), (16, 3.1)):
            for mix in (70, 30):
                base = {"run_id": run, "iodepth": qd, "rw": "randrw", "rwmixread": mix}
                rows.append({**base, **rate("randrw", "read", 8192, scale * mix)})
                rows.append({**base, **rate("randrw", "write", 8192, scale * (100 - mix))})
    rows = [{**r, "step_index": i // 2} for i, r in enumerate(summary(rows).to_dicts())]
    out = qd_scaling(pl.DataFrame(rows))
    # 8 workloads (2 runs x 2 mixes x 2 directions); QD4 gives 3/3.1 = 96.8 % of the best
    assert out.height == 8
    assert out["qd"].unique().to_list() == [4]
    first = out.row(0, named=True)
    assert (first["run_id"], first["rwmixread"], first["direction"]) == ("a", 30, "read")
    assert first["iops"] == 90


def test_qd_scaling_combines_the_job_rows_of_a_step() -> None:
    """Without group_reporting fio reports each job: a step's rows count as one step."""
    jobs = [
        rate("randread", "read", 4096, iops, iodepth=4, numjobs=2, clat_p99_ns=p99)
        for iops, p99 in ((100.0, 7000.0), (140.0, 9000.0))
    ]
    frame = summary([rate("randread", "read", 4096, 200.0, iodepth=1), *jobs])
    frame = frame.with_columns(
        step_index=pl.Series([0, 1, 1]), step=pl.Series(["qd1", "qd8", "qd8"])
    )
    (best,) = qd_scaling(frame).iter_rows(named=True)
    assert (best["step"], best["qd"], best["iodepth"], best["numjobs"]) == ("qd8", 8, 4, 2)
    assert best["iops"] == 240.0 and best["bw_bytes_s"] == 240.0 * 4096
    assert best["clat_p99_ns"] == 9000.0  # the worst job
    assert best["lat_mean_ns"] == pytest.approx((100 * 2000.0 + 140 * 3000.0) / 240)


def test_qd_scaling_refuses_unclear_frames() -> None:
    frame = summary([rate("randread", "read", 4096, 10.0, iodepth=1)])
    with pytest.raises(InputError, match=r"lacks column\(s\) iodepth"):
        qd_scaling(frame.drop("iodepth"))
    with pytest.raises(ValueError, match="threshold"):
        qd_scaling(frame, threshold=1.5)


def timeseries(iops: list[float], **extra: Any) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "step_index": 3,
            "direction": "write",
            "t_s": [float(t) for t in range(1, 11)],
            "iops": iops,
            **extra,
        }
    )


IOPS = [100, 100, 100, 100, 100, 90, 110, 95, 105, 100]


def test_consistency_tail() -> None:
    # last 5 s: 90, 110, 95, 105, 100 -> mean 100; deviations -10, 10, -5, 5, 0 ->
    # sample variance 250 / 4 = 62.5. Linear percentiles over the sorted values
    # 90, 95, 100, 105, 110 sit at rank p x 4: p1 -> 90.2, p5 -> 91, p90 -> 108, p99 -> 109.8
    c = consistency(timeseries(IOPS), tail_s=5)
    assert (c.start_s, c.end_s, c.windows) == (6.0, 10.0, 5)
    assert c.iops_mean == 100
    assert c.iops_stddev == pytest.approx(math.sqrt(62.5))
    assert c.mean_over_stddev == pytest.approx(100 / math.sqrt(62.5))
    assert (c.iops_min, c.iops_max) == (90, 110)
    assert c.iops_p1 == pytest.approx(90.2)
    assert c.iops_p5 == pytest.approx(91)
    assert c.iops_p10 == pytest.approx(92)
    assert c.iops_p50 == 100
    assert c.iops_p90 == pytest.approx(108)
    assert c.iops_p95 == pytest.approx(109)
    assert c.iops_p99 == pytest.approx(109.8)


def test_consistency_whole_series_and_flat_line() -> None:
    c = consistency(timeseries(IOPS))
    assert (c.start_s, c.end_s, c.windows, c.iops_mean) == (1.0, 10.0, 10, 100)
    assert c.iops_stddev == pytest.approx(math.sqrt(250 / 9))
    flat = consistency(timeseries([50.0] * 10), tail_s=3)
    assert (flat.windows, flat.iops_stddev, flat.mean_over_stddev) == (3, 0, math.inf)


def test_consistency_refuses_mixed_or_short_series() -> None:
    both = pl.concat([timeseries(IOPS), timeseries(IOPS).with_columns(direction=pl.lit("read"))])
    with pytest.raises(InputError, match=r"several direction values \['read', 'write'\]"):
        consistency(both)
    with pytest.raises(InputError, match="at least 2 IOPS windows, got 1"):
        consistency(timeseries(IOPS), tail_s=1)
    with pytest.raises(ValueError, match="tail_s"):
        consistency(timeseries(IOPS), tail_s=0)


def sweep_frame() -> pl.DataFrame:
    mix = {"iodepth": 32}
    return summary(
        [
            rate("randread", "read", 4096, 1000, iodepth=32),
            {**rate("randrw", "read", 4096, 700, **mix), "rwmixread": 70, "step_index": 1},
            {**rate("randrw", "write", 4096, 300, **mix), "rwmixread": 70, "step_index": 1},
            {**rate("randrw", "read", 4096, 150, **mix), "rwmixread": 30, "step_index": 2},
            {**rate("randrw", "write", 4096, 350, **mix), "rwmixread": 30, "step_index": 2},
            {**rate("randwrite", "write", 4096, 600, iodepth=32), "step_index": 3},
            {**rate("read", "read", 131072, 100, iodepth=1), "step_index": 4},
            {**rate("write", "write", 131072, 80, iodepth=1), "step_index": 5},
        ]
    ).with_columns(step=pl.format("s{}", "step_index"))


def test_mix_sweep_steps_and_averages() -> None:
    result = mix_sweep(sweep_frame())
    steps = result.steps
    rand = steps.filter(pl.col("pattern") == "random")
    assert rand["read_pct"].to_list() == [100, 70, 30, 0]
    assert rand["step"].to_list() == ["s0", "s1", "s2", "s3"]
    assert rand["iops"].to_list() == [1000, 1000, 500, 600]
    assert rand["read_iops"].to_list() == [1000, 700, 150, 0]
    assert rand["write_iops"].to_list() == [0, 300, 350, 600]
    assert rand["measured_read_pct"].to_list() == [100, 70, 30, 0]
    assert rand["bw_bytes_s"].to_list() == [i * 4096 for i in (1000, 1000, 500, 600)]
    sweeps = {r["pattern"]: r for r in result.sweeps.iter_rows(named=True)}
    # random: (1000 + 1000 + 500 + 600) / 4 = 775, 70/30 at 1000 IOPS
    assert sweeps["random"]["steps"] == 4
    assert sweeps["random"]["avg_iops"] == 775
    assert sweeps["random"]["avg_bw_bytes_s"] == 775 * 4096
    assert sweeps["random"]["iops_70_30"] == 1000
    assert sweeps["random"]["bw_bytes_s_70_30"] == 1000 * 4096
    # sequential 128k: (100 + 80) / 2 = 90, no 70/30 step
    assert (sweeps["sequential"]["avg_iops"], sweeps["sequential"]["iops_70_30"]) == (90, None)
    assert sweeps["sequential"]["bs_bytes"] == 131072


def test_mix_sweep_refuses_other_steps() -> None:
    frame = sweep_frame()
    trim = summary([rate("randtrim", "trim", 4096, 10, iodepth=1)])
    with pytest.raises(InputError, match=r"'s0' \(rw=randtrim\) is not part of a read/write mix"):
        mix_sweep(trim)
    again = frame.filter(pl.col("step_index") == 0).with_columns(
        step_index=pl.lit(9, dtype=pl.Int64)
    )
    with pytest.raises(InputError, match="2 steps of one sweep have read share 100 %"):
        mix_sweep(pl.concat([frame, again]))
