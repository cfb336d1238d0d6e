"""Log time series against a plain-Python reference of the documented rules, on generated
logs: any number of threads, threads that start late or end early, windows a thread did not
log, fio's repeated final row, mixed directions, clock jitter, rows exactly halfway between
windows, and logs that do not line up (the join path, not the positional one)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
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
    """(kind, thread) -> rows (time_ms, value, ddir) of one job entry's windowed logs; its
    threads may start late and end early, and do one direction of a mixed job's."""
    threads = draw(st.integers(1, 3))
    windows = draw(st.integers(1, 5))
    kinds = draw(st.sets(st.sampled_from(KINDS), min_size=1)) if draw(st.booleans()) else KINDS
    job_ddirs = draw(st.sampled_from([(0,), (1,), (0, 1)]))
    spans = {}  # thread -> (first window, last window, its directions)
    for thread in range(1, threads + 1):
        first, last = sorted(draw(st.lists(st.integers(1, windows), min_size=2, max_size=2)))
        if draw(st.booleans()):
            first, last = 1, windows
        one = draw(st.sampled_from([job_ddirs, *((d,) for d in job_ddirs)]))
        spans[thread] = (first, last, one)
    logs = {}
    for kind in kinds:
        for thread in range(1, threads + 1):
            first, last, ddirs = spans[thread]
            rows = []
            for w in range(first, last + 1):
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
    :func:`ssdlab.logs.timeseries`, one row at a time: each thread's first log (iops, else bw,
    else clat) sets its windows, its other logs pair row by row or with the nearest row."""
    W = WINDOW_MS
    threads = {thread for (_, thread), rows in logs.items() if rows}
    kinds = {kind for (kind, _), rows in logs.items() if rows}
    per_thread = defaultdict(dict)
    for thread in threads:
        present = [k for k in KINDS if logs.get((k, thread))]
        ref = present[0]

        def clean(kind: str, ddir: int, thread: int = thread) -> list[tuple[int, int]]:
            out, prev = [], None
            for t, v, d in logs.get((kind, thread), []):
                if d != ddir:
                    continue
                if prev is not None and 2 * (t - prev) <= W:
                    prev = t
                    continue
                prev = t
                out.append((t, v))
            return out

        for ddir in (0, 1):
            refs = clean(ref, ddir)
            ws, last = [], None
            for t, v in refs:
                w = (2 * (t - START_MS) + W) // (2 * W)
                if last is not None and w <= last:
                    w = last + 1
                ws.append(w)
                last = w
                per_thread[(ddir, w, thread)][ref] = v
            for kind in present[1:]:
                rows = clean(kind, ddir)
                if all(
                    4 * abs(rows[n][0] - refs[n][0]) <= W for n in range(min(len(rows), len(refs)))
                ):
                    for n, (_, v) in enumerate(rows[: len(refs)]):
                        per_thread[(ddir, ws[n], thread)][kind] = v
                else:
                    cands = []
                    for i, (t, v) in enumerate(rows):
                        best = None
                        for n, (rt, _) in enumerate(refs):
                            d = abs(2 * (t - rt) + 1)
                            if d <= W and (best is None or d < best[0]):
                                best = (d, n)
                        if best:
                            cands.append((best[0], i, best[1], v))
                    used = set()
                    for _, _, n, v in sorted(cands):
                        if n in used:
                            continue
                        used.add(n)
                        per_thread[(ddir, ws[n], thread)][kind] = v
    primary = "iops" if "iops" in kinds else ("bw" if "bw" in kinds else "clat")
    windows = defaultdict(list)
    for (ddir, w, _), values in per_thread.items():
        windows[(ddir, w)].append(values)
    out = {}
    for (ddir, w), values in windows.items():
        logged = {k: [v[k] for v in values if k in v] for k in KINDS}
        n = running(per_thread, ddir, w)
        if len(logged[primary]) != n:
            continue
        iops = sum(logged["iops"]) if len(logged["iops"]) == n else None
        bw = sum(logged["bw"]) * 1024 if len(logged["bw"]) == n else None
        pairs = [(v["clat"], v["iops"]) for v in values if "clat" in v and "iops" in v]
        weight = sum(i for _, i in pairs)
        if weight > 0:
            clat = sum(c * i for c, i in pairs) / weight
        else:
            clat = sum(logged["clat"]) / len(logged["clat"]) if logged["clat"] else None
        out[(("read", "write")[ddir], w * WINDOW_MS / 1000)] = (iops, bw, clat)
    return out


def running(windows: Iterable[tuple[int, float, int]], ddir: int, w: float) -> int:
    """Threads running in window ``w`` of direction ``ddir``: with a window (of ``windows``:
    (ddir, window, thread)) at or before it and one at or after it."""
    spans: dict[int, list[float]] = {}
    for d, at, thread in windows:
        if d == ddir:
            span = spans.setdefault(thread, [at, at])
            span[:] = [min(span[0], at), max(span[1], at)]
    return sum(1 for start, end in spans.values() if start <= w <= end)


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
        start, end = sorted(draw(st.lists(st.integers(0, 4999), min_size=2, max_size=2)))
        if draw(st.booleans()):  # else the thread starts late or ends early
            start, end = 0, 4999
        times = sorted(draw(st.lists(st.integers(start, end), max_size=60)))
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
    per thread (a second past the runtime dropped), summed over threads; a second a running
    thread did not log is dropped."""
    per_thread: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for thread, rows in logs.items():
        for t, clat, ddir, bs in rows:
            if t // 1000 + 1 <= runtime_s + 0.05:
                per_thread[(ddir, t // 1000 + 1, thread)].append((clat, bs))
    windows: dict[tuple, list[list[tuple[int, int]]]] = defaultdict(list)
    for (ddir, sec, _), ios in per_thread.items():
        windows[(ddir, sec)].append(ios)
    out = {}
    for (ddir, sec), ios in windows.items():
        if len(ios) != running(per_thread, ddir, sec):
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
