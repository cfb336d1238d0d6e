"""The histogram-log parser (``ssdlab.io.fio_hist``): fio's text read by arithmetic over the
few non-zero fields, anything else parsed whole, both checked against a plain parse of
each line; and the statistics independent of the order of the rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ssdlab.errors import InputError
from ssdlab.io.fio_hist import interval_stats, read_fio_hist_log

N_BINS = 232  # fio 3.x at log_hist_coarseness=3
COUNT = st.one_of(
    st.just(0), st.integers(1, 99), st.integers(100, 2**53 - 1), st.sampled_from([10, 1000])
)


def plain(text: str) -> pl.DataFrame:
    """The non-zero bins of every line, parsed a field at a time with ``int``."""
    rows = [[int(x) for x in line.split(",")] for line in text.splitlines()]
    cells = [(r[0], r[1], r[2], b, c) for r in rows for b, c in enumerate(r[3:]) if c]
    columns = ["time_ms", "ddir", "bs_bytes", "bin", "count"]
    frame = pl.DataFrame(cells, schema=dict.fromkeys(columns, pl.Int64), orient="row")
    direction = pl.col("ddir").replace_strict({0: "read", 1: "write", 2: "trim"})
    return frame.select("time_ms", direction.alias("direction"), "bs_bytes", "bin", "count")


def check(path: Path, text: str) -> None:
    path.write_text(text)
    frame, meta = read_fio_hist_log(path)
    assert meta["intervals"] == text.count("\n") and meta["n_bins"] == N_BINS
    assert_frame_equal(
        frame.select("time_ms", "direction", "bs_bytes", "bin", "count"), plain(text)
    )


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 10**13), st.integers(0, 2), st.lists(COUNT, min_size=6, max_size=6)
        ),
        min_size=1,
        max_size=4,
    ),
    at=st.lists(st.integers(0, N_BINS - 1), min_size=6, max_size=6),
    sep=st.sampled_from([", ", ",", " , ", ",\t"]),
    zeros=st.sampled_from(["", "0", "00"]),
)
def test_rows_read_as_a_plain_parse_of_each_line(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, int, list[int]]],
    at: list[int],
    sep: str,
    zeros: str,
) -> None:
    """fio's ``, `` and other spacing, leading zeros, numbers of up to 16 digits."""
    lines = []
    for time_ms, ddir, counts in rows:
        bins = [0] * N_BINS
        for b, c in zip(at, counts, strict=True):
            bins[b] = c
        fields = [str(time_ms), str(ddir), "4096"] + [f"{zeros}{c}" if c else "0" for c in bins]
        lines.append(sep.join(fields) + "\n")
    check(tmp_path_factory.mktemp("h") / "x_clat_hist.1.log", "".join(lines))


def test_a_log_of_many_chunks_reads_as_a_plain_parse(tmp_path: Path) -> None:
    """Rows over several chunks; a bad row in a later chunk is named by its line."""
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 3000, (900, N_BINS)) * (rng.random((900, N_BINS)) < 0.05)
    text = "".join(
        f"{100 * (n // 2)}, {n % 2}, 4096, " + ", ".join(map(str, row)) + "\n"
        for n, row in enumerate(counts)
    )
    check(tmp_path / "x_clat_hist.1.log", text)
    lines = text.splitlines(keepends=True)
    lines[700] = "35000, 7, " + lines[700].split(", ", 2)[2]
    (tmp_path / "bad_clat_hist.1.log").write_text("".join(lines))
    with pytest.raises(InputError, match=r"bad_clat_hist\.1\.log: line 701: a direction other"):
        read_fio_hist_log(tmp_path / "bad_clat_hist.1.log")


@pytest.mark.parametrize(
    ("field", "reason"),
    [
        ("12x", "line 2: malformed histogram log"),
        ("1 2", "line 2: malformed histogram log"),
        ("x", "line 2: malformed histogram log"),
        ("", "line 2: a missing field"),
        ("9" * 19, r"line 2: a bin count of 2\*\*53 or more"),
        ("-3", "line 2: a negative bin count"),
    ],
)
def test_a_field_no_fio_writes_is_an_error_naming_the_file(
    tmp_path: Path, field: str, reason: str
) -> None:
    row = ", ".join(["100", "0", "4096"] + ["0"] * N_BINS)
    bad = row.rsplit(", ", 2)[0] + f", {field}, 0"
    log = tmp_path / "x_clat_hist.1.log"
    log.write_text(f"{row}\n{bad}\n{row}\n")
    with pytest.raises(InputError, match=rf"^{log}: {reason}"):
        read_fio_hist_log(log)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_interval_stats_do_not_depend_on_the_order_of_the_rows(seed: int) -> None:
    """Rows of several files interleave: summed per group whatever their order."""
    rng = np.random.default_rng(seed)
    n = 200
    hist = pl.DataFrame(
        {
            "end_ms": rng.integers(1, 4, n) * 100,
            "direction": rng.choice(["read", "write"], n),
            "bin": rng.integers(0, N_BINS, n),
            "count": rng.integers(0, 50, n),
        }
    )
    by = ["end_ms", "direction"]
    ordered = interval_stats(hist.sort(*by, "bin"), N_BINS, by, (50.0, 99.0), (1e5,))
    shuffled = interval_stats(hist.sample(fraction=1.0, shuffle=True, seed=seed), N_BINS, by,
                              (50.0, 99.0), (1e5,))  # fmt: skip
    assert_frame_equal(shuffled, ordered)
    assert ordered["samples"].sum() == hist["count"].sum()
