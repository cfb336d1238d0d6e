"""fio histogram logs as ACT latency tables, on hand-built logs with known latencies."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from ssdlab.act import edge_bin_ns, format_table, hist_log_table, passes
from ssdlab.errors import InputError
from ssdlab.io.fio_hist import bin_edges


def fio_bin(ns: int) -> int:
    """fio's stat.c plat_val_to_idx: the bin fio counts a latency of ``ns`` in."""
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= 6:
        return ns
    error_bits = msb - 6
    return min(((error_bits + 1) << 6) + (63 & (ns >> error_bits)), 1855)


def row(time_ms: int, latencies_ns: dict[int, int], ddir: int = 0, coarseness: int = 0) -> str:
    bins = np.zeros(1856, dtype=np.int64)
    for ns, count in latencies_ns.items():
        bins[fio_bin(ns)] += count
    bins = bins.reshape(-1, 1 << coarseness).sum(axis=1)
    return ", ".join(map(str, [time_ms, ddir, 1536, *bins]))


def write_log(path: Path, rows: list[str], end: str = "\n") -> Path:
    path.write_text("\n".join(rows) + end)
    return path


# 1000 reads: 5.0 % truly at or over 1 ms, 1.0 % over 8 ms, 0.2 % over 64 ms
MIX = {500_000: 900, 999_500: 50, 1_003_000: 10, 2_000_000: 30, 10_000_000: 8, 100_000_000: 2}


def test_bin_edges_hold_fios_bins() -> None:
    # the edges the thresholds are judged by (ssdlab.io.fio_hist) against fio's own binning;
    # fio also puts everything from 2^34 ns (17 s) up into the last bin
    lower, upper = bin_edges(1856)
    assert lower.size == upper.size == 1856
    assert np.array_equal(lower[1:], upper[:-1]) and upper[-1] == 2**34
    values = [0, 1, 127, 128, 129, 255, 256, 999_999, 1_000_000, 2**33, 2**34 - 1]
    values += random.Random(1).sample(range(2**34), 2000)
    for v in values:
        idx = fio_bin(v)
        assert lower[idx] <= v < upper[idx], v


def test_bin_midpoints_are_fios_values() -> None:
    lower, upper = bin_edges(1856)
    for idx in range(1856 - 1):
        if idx < 128:
            assert (lower[idx], upper[idx]) == (idx, idx + 1)
        else:
            eb = (idx >> 6) - 1
            assert (lower[idx] + upper[idx]) / 2 == (1 << (eb + 6)) + (idx % 64 + 0.5) * 2**eb


def test_coarse_bins_sum_adjacent_bins() -> None:
    lower, upper = bin_edges(232)  # log_hist_coarseness=3
    assert lower.size == 232
    assert (lower[119], upper[119]) == (983_040, 1_048_576)  # fine bins 952 ... 959


def test_threshold_edge_bins() -> None:
    assert edge_bin_ns(1) == (999_424, 1_007_616)  # bin 954: 8192 ns wide
    assert edge_bin_ns(8) == (7_995_392, 8_060_928)
    assert edge_bin_ns(64) == (63_963_136, 64_487_424)
    assert edge_bin_ns(1, n_bins=232) == (983_040, 1_048_576)
    assert edge_bin_ns(1.048576) is None  # on a bin edge: nothing straddles


def test_straddling_bin_counts_as_over_and_bounds_the_error(tmp_path: Path) -> None:
    log = write_log(tmp_path / "h.log", [row(1000, MIX)])
    table = hist_log_table([log], hist_msec=1000, slice_s=1)
    first = table.row(0, named=True)
    # the 50 reads at 0.9995 ms share bin 954 with the 10 at 1.003 ms: all 60 count as over
    assert (first["pct_over_1ms"], first["pct_edge_1ms"]) == (10.0, 6.0)
    assert (first["pct_over_8ms"], first["pct_edge_8ms"]) == (1.0, 0.0)
    assert (first["pct_over_64ms"], first["pct_edge_64ms"]) == (0.2, 0.0)
    assert first["rate"] == 1000.0
    truth = 5.0  # percent at or over 1 ms
    assert first["pct_over_1ms"] - first["pct_edge_1ms"] <= truth <= first["pct_over_1ms"]
    assert passes(table)["passed"].to_list() == [False]  # conservative: 10 % is not < 5 %


def test_coarseness_widens_the_edge_bin(tmp_path: Path) -> None:
    reads = {990_000: 40, 500_000: 960}  # 0.99 ms: under 1 ms in fine bins
    fine = hist_log_table(
        [write_log(tmp_path / "f.log", [row(1000, reads)])], hist_msec=1000, slice_s=1
    )
    coarse = hist_log_table(
        [write_log(tmp_path / "c.log", [row(1000, reads, coarseness=3)])],
        hist_msec=1000,
        slice_s=1,
    )
    assert fine["pct_over_1ms"][0] == 0.0
    assert (coarse["pct_over_1ms"][0], coarse["pct_edge_1ms"][0]) == (4.0, 4.0)


def test_fio2_logs_count_in_microseconds(tmp_path: Path) -> None:
    bins = np.zeros(1216, dtype=np.int64)  # fio 2.x: 19 groups of 64 bins, in µs
    bins[fio_bin(500)] += 90
    bins[fio_bin(2_000)] += 9  # 2 ms
    bins[fio_bin(9_000)] += 1  # 9 ms
    log = write_log(tmp_path / "h.log", [", ".join(map(str, [1000, 0, 1536, *bins]))])
    table = hist_log_table([log], hist_msec=1000, slice_s=1)
    assert table.row(0)[:5] == ("reads", "1", 10.0, 1.0, 0.0)


def test_rows_go_to_the_slice_holding_their_window(tmp_path: Path) -> None:
    slow, fast = {2_000_000: 10, 100_000: 90}, {100_000: 100}
    log = write_log(
        tmp_path / "h.log",
        [
            row(1003, slow),
            row(2001, fast),
            row(2001, slow, ddir=1),  # writes are ignored
            row(3002, fast),
            row(4000, fast),
            row(5001, slow),  # slice 3 never completes: dropped, like ACT's last partial slice
        ],
    )
    table = hist_log_table([log], hist_msec=1000, slice_s=2)
    assert table.select("slice", "pct_over_1ms", "rate").rows() == [
        ("1", 5.0, 100.0),
        ("2", 0.0, 100.0),
        ("avg", 2.5, 100.0),
        ("max", 5.0, 100.0),
    ]
    assert format_table(table).splitlines()[4] == "    1     5.00   0.00   0.00"


def test_logs_add_up_over_the_slices_all_of_them_cover(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.log", [row(1000, MIX), row(2000, MIX)])
    b = write_log(tmp_path / "b.log", [row(1000, {100_000: 1000})])
    table = hist_log_table([a, b], hist_msec=1000, slice_s=1)
    assert table["slice"].to_list() == ["1", "avg", "max"]
    assert table.row(0)[:4] == ("reads", "1", 5.0, 0.5)  # 100 of 2000 over 1 ms, 10 over 8


def test_cut_last_line_is_ignored(tmp_path: Path) -> None:
    log = write_log(tmp_path / "h.log", [row(1000, MIX), row(2000, MIX)[:500]], end="")
    assert hist_log_table([log], hist_msec=1000, slice_s=1)["slice"].to_list() == [
        "1",
        "avg",
        "max",
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # read by ssdlab.io.fio_hist, as every histogram log
        (["1000, 0, 4096, 1, 2, 3"], "line 1 is not a fio histogram log row: 3 histogram"),
        ([row(1000, MIX), "garbage", row(3000, MIX)], "malformed histogram log: .*garbage"),
        ([row(1_700_000_000_000, MIX)], "epoch timestamps"),
        ([], "could not find 1 seconds of reads"),
    ],
)
def test_bad_logs(tmp_path: Path, lines: list[str], message: str) -> None:
    path = write_log(tmp_path / "h.log", lines, end="\n" if lines else "")
    with pytest.raises(InputError, match=message) as info:
        hist_log_table([path], hist_msec=1000, slice_s=1)
    assert str(info.value).startswith(str(path))


def test_slice_must_be_a_multiple_of_the_log_window(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a multiple of log_hist_msec 3000"):
        hist_log_table([tmp_path / "x.log"], hist_msec=3000, slice_s=10)
