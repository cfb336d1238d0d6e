"""Log time series against a plain-Python reference of the documented rules, on generated
logs: any number of threads, windows a thread did not log, fio's repeated final row, mixed
directions, clock jitter, rows exactly halfway between windows, and logs that do not line
up (the join path, not the positional one)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.logs import JobLog, load_job_logs, timeseries

WINDOW_MS = 1000
START_MS = 1_700_000_000_000
KINDS = ("iops", "bw", "clat")


@st.composite
def job_logs(draw: st.DrawFn) -> dict[tuple[str, int], list[tuple[int, int, int]]]:
    """(kind, thread) -> rows (time_ms, value, ddir) of one job entry's windowed logs."""
    threads = draw(st.integers(1, 3))
    windows = draw(st.integers(1, 5))
    kinds = draw(st.sets(st.sampled_from(KINDS), min_size=1)) if draw(st.booleans()) else KINDS
    ddirs = draw(st.sampled_from([(0,), (1,), (0, 1)]))
    logs = {}
    for kind in kinds:
        for thread in range(1, threads + 1):
            rows = []
            for w in range(1, windows + 1):
                if draw(st.integers(0, 9)) == 0:  # a window this log skipped
                    continue
                late = draw(st.one_of(st.integers(-120, 120), st.just(WINDOW_MS // 2)))
                t = START_MS + w * WINDOW_MS + late  # jitter, or exactly halfway
                rows += [(t, draw(st.integers(0, 10**6)), d) for d in ddirs]
            if rows and draw(st.booleans()):  # fio's final flush repeats the last window
                t = rows[-1][0] + draw(st.integers(0, 200))
                rows += [(t, draw(st.integers(0, 10**6)), d) for d in ddirs]
            logs[(kind, thread)] = rows
    return logs


def reference(logs: dict[tuple[str, int], list[tuple[int, int, int]]]) -> dict:
    """(direction, t_s) -> (iops, bw_bytes_s, clat_mean_ns) by the rules in the docstring of
    :func:`ssdlab.logs.timeseries`, one row at a time."""
    per_thread: dict[tuple, dict[str, int]] = defaultdict(dict)
    for (kind, thread), rows in logs.items():
        seen = set()
        for t, value, ddir in rows:
            w = (2 * (t - START_MS) + WINDOW_MS) // (2 * WINDOW_MS)  # nearest; halfway: later
            if (ddir, w) not in seen:  # the first row of a repeated window
                seen.add((ddir, w))
                per_thread[(ddir, w, thread)][kind] = value
    threads = {thread for (_, thread), rows in logs.items() if rows}
    kinds = {kind for (kind, _), rows in logs.items() if rows}
    primary = "iops" if "iops" in kinds else ("bw" if "bw" in kinds else "clat")
    windows: dict[tuple, list[dict[str, int]]] = defaultdict(list)
    for (ddir, w, _), values in per_thread.items():
        windows[(ddir, w)].append(values)
    out = {}
    for (ddir, w), values in windows.items():
        logged = {k: [v[k] for v in values if k in v] for k in KINDS}
        if len(logged[primary]) != len(threads):
            continue
        iops = sum(logged["iops"]) if len(logged["iops"]) == len(threads) else None
        bw = sum(logged["bw"]) * 1024 if len(logged["bw"]) == len(threads) else None
        pairs = [(v["clat"], v["iops"]) for v in values if "clat" in v and "iops" in v]
        weight = sum(i for _, i in pairs)
        if weight > 0:
            clat = sum(c * i for c, i in pairs) / weight
        else:
            clat = sum(logged["clat"]) / len(logged["clat"]) if logged["clat"] else None
        out[(("read", "write")[ddir], w * WINDOW_MS / 1000)] = (iops, bw, clat)
    return out


def close(a: float | None, b: float | None) -> bool:
    return (a is None) == (b is None) and (a is None or abs(a - b) <= 1e-9 * max(1, abs(b)))


@settings(max_examples=150, deadline=None)
@given(job_logs())
def test_timeseries_follows_the_documented_rules(tmp_path_factory, logs) -> None:
    d = tmp_path_factory.mktemp("logs")
    found = []
    for (kind, thread), rows in logs.items():
        path = d / f"job_{kind}.{thread}.log"
        path.write_text("".join(f"{t}, {v}, {ddir}, 0, 0\n" for t, v, ddir in rows))
        found.append(JobLog(str(path), kind, 0, thread, window_ms=WINDOW_MS))
    rows, bad = load_job_logs(found)
    assert not bad
    params = pl.DataFrame(
        [{"job_index": 0, "window_ms": WINDOW_MS, "start_ms": START_MS, "runtime_s": 9.0}]
    )
    got = {
        (r["direction"], r["t_s"]): (r["iops"], r["bw_bytes_s"], r["clat_mean_ns"])
        for r in timeseries(rows, params).iter_rows(named=True)
    }
    want = reference(logs)
    assert got.keys() == want.keys()
    for key, values in want.items():
        assert all(close(a, b) for a, b in zip(got[key], values, strict=True)), (key, got[key])


@st.composite
def per_io_logs(draw: st.DrawFn) -> dict[int, list[tuple[int, int, int, int]]]:
    """thread -> rows (time_ms, clat_ns, ddir, bs) of one job entry's per-I/O clat logs."""
    logs = {}
    for thread in range(1, draw(st.integers(1, 3)) + 1):
        times = sorted(draw(st.lists(st.integers(0, 4999), max_size=60)))
        logs[thread] = [
            (
                t,
                draw(st.integers(0, 10**9)),
                draw(st.integers(0, 1)),
                draw(st.sampled_from([512, 4096])),
            )
            for t in times
        ]
    return logs


def per_io_reference(logs: dict[int, list[tuple[int, int, int, int]]], runtime_s: float) -> dict:
    """(direction, t_s) -> (iops, bw_bytes_s, clat_mean_ns): I/Os counted into whole seconds
    per thread, summed over threads; a second not every thread logged is dropped, as is one
    past the runtime."""
    per_thread: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for thread, rows in logs.items():
        for t, clat, ddir, bs in rows:
            per_thread[(ddir, t // 1000 + 1, thread)].append((clat, bs))
    threads = sum(1 for rows in logs.values() if rows)
    windows: dict[tuple, list[list[tuple[int, int]]]] = defaultdict(list)
    for (ddir, sec, _), ios in per_thread.items():
        windows[(ddir, sec)].append(ios)
    out = {}
    for (ddir, sec), ios in windows.items():
        if len(ios) != threads or sec > runtime_s + 0.05:
            continue
        n = sum(len(i) for i in ios)
        clat = sum(sum(c for c, _ in i) / len(i) * len(i) for i in ios) / n
        out[(("read", "write")[ddir], float(sec))] = (n, sum(b for i in ios for _, b in i), clat)
    return out


@settings(max_examples=100, deadline=None)
@given(per_io_logs(), st.sampled_from([None, 40, 4096]))
def test_per_io_logs_follow_the_documented_rules(tmp_path_factory, logs, chunk) -> None:
    """Read whole or a chunk at a time (``chunk`` bytes, lines cut at chunk ends), per-I/O
    logs give the per-second numbers of their rows."""
    import ssdlab.io.fio_log
    from ssdlab.logs import JobLogs

    d = tmp_path_factory.mktemp("perio")
    found = []
    for thread, rows in logs.items():
        path = d / f"job_clat.{thread}.log"
        path.write_text("".join(f"{t}, {c}, {ddir}, {bs}, 0\n" for t, c, ddir, bs in rows))
        found.append(JobLog(str(path), "clat", 0, thread))
    params = pl.DataFrame([{"job_index": 0, "window_ms": 0, "start_ms": None, "runtime_s": 4.0}])
    if chunk is None:  # bytes already read: parsed in bulk
        queued = JobLogs()
        for log in found:
            queued.add(log, {}, Path(log.path).read_bytes())
        rows, bad = queued.parse()
    else:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ssdlab.io.fio_log, "CHUNK_BYTES", chunk)
            rows, bad = load_job_logs(found)
    assert not bad
    got = {
        (r["direction"], r["t_s"]): (r["iops"], r["bw_bytes_s"], r["clat_mean_ns"])
        for r in timeseries(rows, params).iter_rows(named=True)
    }
    want = per_io_reference(logs, 4.0)
    assert got.keys() == want.keys()
    for key, values in want.items():
        assert all(close(a, b) for a, b in zip(got[key], values, strict=True)), (key, got[key])
