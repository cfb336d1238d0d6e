"""ACT latency tables against Aerospike's act_latency.py output for the same logs.

Expected tables were printed by act_latency.py (ACT 6.x, ``-n 3 -e 3``, with ``-s 10`` for
microsecond histograms); a few values are also worked out by hand in the comments.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ssdlab.act import format_table, latency_table, passes, read_act_log
from ssdlab.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = read_act_log(FIXTURES / "act_storage_1x_30s.log")
PCT = ["pct_over_1ms", "pct_over_8ms", "pct_over_64ms"]


def rows(df: pl.DataFrame) -> list[tuple]:
    return df.select("slice", *PCT, "rate").rows()


def test_reads_10s_slices() -> None:
    # slice 1: 20000 reads, 19789 in bucket 0 -> 211 / 20000 = 1.055 % -> round() gives 1.05
    # (1.055 is 1.05499... in binary); >= 8 ms: 20000 - 19949 = 51 -> 0.255 -> 0.26
    assert rows(latency_table(SAMPLE, slice_s=10)) == [
        ("1", 1.05, 0.26, 0.0, 2000.0),
        ("2", 1.35, 0.27, 0.0, 2000.0),
        ("3", 0.81, 0.05, 0.0, 2000.0),
        ("avg", 1.07, 0.19, 0.0, 2000.0),
        ("max", 1.35, 0.27, 0.0, 2000.0),
    ]


def test_one_30s_slice() -> None:
    # 60000 reads: 643 at >= 1 ms (1.0717 %), 115 at >= 8 ms (0.1917 %), none >= 64 ms
    assert rows(latency_table(SAMPLE, slice_s=30)) == [
        ("1", 1.07, 0.19, 0.0, 2000.0),
        ("avg", 1.07, 0.19, 0.0, 2000.0),
        ("max", 1.07, 0.19, 0.0, 2000.0),
    ]


def test_1s_slices() -> None:
    table = latency_table(SAMPLE, slice_s=1)
    assert table.height == 32
    got = {r[0]: r[1:] for r in rows(table)}
    # 12 -> 13 s: 1998 reads, 1871 in bucket 0 (127 over: 6.356 %), 1984 under 8 ms (14: 0.70 %)
    assert got["13"] == (6.36, 0.7, 0.0, 1998.0)
    assert got["19"] == (3.38, 1.99, 0.0, 2009.0)
    assert got["6"] == (0.0, 0.0, 0.0, 2000.0)
    assert got["avg"] == (1.07, 0.19, 0.0, 2000.0)
    assert got["max"] == (6.36, 1.99, 0.0, 2009.0)


@pytest.mark.parametrize(
    ("histogram", "expected"),
    [
        ("/dev/loop0-reads", [(1.05, 0.26, 0.0, 2000.0), (1.35, 0.27, 0.0, 2000.0),
                              (0.81, 0.05, 0.0, 2000.0), (1.07, 0.19, 0.0, 2000.0),
                              (1.35, 0.27, 0.0, 2000.0)]),
        ("large-block-reads", [(0.42, 0.42, 0.0, 23.6), (2.13, 0.43, 0.0, 23.5),
                               (0.85, 0.0, 0.0, 23.5), (1.13, 0.28, 0.0, 23.5),
                               (2.13, 0.43, 0.0, 23.6)]),
        # 236 writes in 0-10 s, 226 in bucket 0: 10 over 1 ms = 4.237 %; 2 over 8 ms = 0.847 %
        ("large-block-writes", [(4.24, 0.85, 0.0, 23.6), (5.11, 2.13, 0.0, 23.5),
                                (5.53, 0.85, 0.0, 23.5), (4.96, 1.28, 0.0, 23.5),
                                (5.53, 2.13, 0.0, 23.6)]),
    ],
)  # fmt: skip
def test_every_histogram(histogram: str, expected: list[tuple]) -> None:
    table = latency_table(SAMPLE, histogram, slice_s=10)
    assert table["histogram"].unique().to_list() == [histogram]
    assert [r[1:] for r in rows(table)] == expected


# act_latency.py's own output for these logs (-s 10 -h reads large-block-writes
# /dev/loop0-reads; and -s 4 -x -h reads large-block-reads on the microsecond log)
SAMPLE_TEXT = (FIXTURES / "act_latency_1x_30s_s10.txt").read_text()
US_TEXT = (FIXTURES / "act_latency_us_2x_20s_s4_x.txt").read_text()


def test_format_table_side_by_side() -> None:
    names = ["reads", "large-block-writes", "/dev/loop0-reads"]
    table = pl.concat([latency_table(SAMPLE, h, slice_s=10) for h in names])
    assert format_table(table) == SAMPLE_TEXT


def test_microsecond_histograms_use_the_1024_8192_65536_us_buckets() -> None:
    log = read_act_log(FIXTURES / "act_storage_us_2x_20s.log")
    table = pl.concat([latency_table(log, h, slice_s=4) for h in ("reads", "large-block-reads")])
    assert format_table(table, microseconds=True, rate=True) == US_TEXT


def test_error_log_is_analysed_despite_the_interleaved_error() -> None:
    # act_latency.py misreads this report (the ERROR line sits between 'reads (..)' and its
    # buckets) and prints 280.93 % for slice 3; these are its figures on the log without it.
    log = read_act_log(FIXTURES / "act_storage_3x_2d_error.log")
    assert rows(latency_table(log, slice_s=4)) == [
        ("1", 9.81, 0.68, 0.0, 12000.0),
        ("2", 9.25, 0.67, 0.0, 12000.0),
        ("3", 40.11, 4.84, 0.3, 12000.0),
        ("avg", 19.72, 2.06, 0.1, 12000.0),
        ("max", 40.11, 4.84, 0.3, 12000.0),
    ]
    assert log.status == "failed"
    verdict = passes(latency_table(log, slice_s=4))
    assert verdict["passed"].to_list() == [False, False, False]


def test_passes_by_slice() -> None:
    verdict = passes(latency_table(SAMPLE, slice_s=1))
    assert verdict.columns == ["histogram", "slice", "pass_1ms", "pass_8ms", "pass_64ms", "passed"]
    failed = verdict.filter(~pl.col("passed"))
    # slice 2 shows exactly 1.00 % at >= 8 ms: not strictly below the 1 % limit
    assert failed.rows() == [
        ("reads", "2", True, False, True, False),
        ("reads", "13", False, True, True, False),
        ("reads", "19", True, False, True, False),
    ]
    assert verdict.height == 30


def test_pass_limits_are_strict() -> None:
    table = pl.DataFrame(
        {"histogram": ["reads"] * 2, "slice": ["1", "2"], "pct_over_1ms": [4.99, 5.0]}
    )
    assert passes(table, {1: 5.0})["passed"].to_list() == [True, False]
    with pytest.raises(ValueError, match="table has no pct_over_8ms, pct_over_64ms column"):
        passes(table)


def test_slice_must_be_a_multiple_of_the_report_interval() -> None:
    log = read_act_log(FIXTURES / "act_storage_us_2x_20s.log")
    with pytest.raises(ValueError, match="slice 5 s is not a multiple of report-interval-sec 2"):
        latency_table(log, slice_s=5)


def test_unknown_histogram_threshold_or_too_long_slice() -> None:
    with pytest.raises(InputError, match="no histogram 'writes'; it has reads, "):
        latency_table(SAMPLE, "writes")
    with pytest.raises(InputError, match=r"could not find 3600 seconds of data \(reports end"):
        latency_table(SAMPLE)  # act_latency.py's default 1-hour slice
    with pytest.raises(ValueError, match="threshold 10 ms is not an ACT bucket edge"):
        latency_table(SAMPLE, slice_s=10, thresholds_ms=(10,))


def test_other_thresholds() -> None:
    table = latency_table(SAMPLE, slice_s=30, thresholds_ms=(2, 32))
    # 60000 reads, 59655 under 2 ms (345: 0.575 %), 59990 under 32 ms (10: 0.0167 %)
    assert table.row(0) == ("reads", "1", 0.57, 0.02, 2000.0)
