"""Importing fio output from other tools: a real corpus made with the fio on this machine
(bench-fio-like sweep, clones, status streams, client/server over loopback) and fixtures of
older fio versions written from the documented formats."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import ROOT, ssdlab_cli
from test_fleet import fio_servers

import ssdlab
from ssdlab import read_fio_json
from ssdlab.analysis import fio_percentiles
from ssdlab.errors import InputError
from ssdlab.importer import import_results

FIXTURES = ROOT / "tests" / "fixtures" / "fio"
NULL = ["--ioengine=null", "--size=64m", "--time_based=1", "--runtime=1200ms"]


def fio(cwd: Path, *args: str) -> None:
    subprocess.run(["fio", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<rw>-<iodepth>-<numjobs>.json`` with ``<prefix>_<type>.<n>.log``, as bench-fio writes."""
    root = tmp_path_factory.mktemp("sweep")
    d = root / "drive-a"
    d.mkdir()
    for rw, qd, nj in [("randread", 1, 1), ("randread", 8, 2), ("randwrite", 4, 3)]:
        prefix = f"{rw}-iodepth-{qd}-numjobs-{nj}"
        fio(
            d, "--name=bench", *NULL, f"--rw={rw}", f"--iodepth={qd}", f"--numjobs={nj}",
            "--group_reporting=1", f"--write_bw_log={prefix}", f"--write_iops_log={prefix}",
            f"--write_lat_log={prefix}", "--log_avg_msec=250", "--output-format=json+",
            f"--output={rw}-{qd}-{nj}.json",
        )  # fmt: skip
    (d / "notes.txt").write_text("drive A, firmware 1.0\n")
    (d / "empty.json").write_text("")
    (d / "other.json").write_text('{"name": "not fio"}')
    (d / "binary.dat").write_bytes(bytes(range(256)))
    (d / "truncated.json").write_text((d / "randread-1-1.json").read_text()[:3000])
    (d / "orphan_iops.1.log").write_text("250, 100, 0, 0, 0\n")
    return root


def test_sweep_imports_one_row_per_job_and_direction_with_logs(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "imp"
    proc = ssdlab_cli("import", sweep, "--out", out, "--label", "Drive A")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    skipped = {
        line.split(": ", 1)[0].removeprefix("skipped "): line
        for line in proc.stderr.splitlines()
        if line.startswith("skipped ")
    }
    d = sweep / "drive-a"
    assert set(skipped) == {
        str(d / n)
        for n in (
            "notes.txt",
            "empty.json",
            "other.json",
            "binary.dat",
            "truncated.json",
            "orphan_iops.1.log",
        )
    }
    assert "empty file" in skipped[str(d / "empty.json")]
    assert "not fio output" in skipped[str(d / "other.json")]
    assert "binary" in skipped[str(d / "binary.dat")]
    assert "truncated or malformed" in skipped[str(d / "truncated.json")]
    assert "no imported JSON result names" in skipped[str(d / "orphan_iops.1.log")]
    assert "skipped 6 files" in proc.stderr

    r = ssdlab.load(out)
    s = r.summary.sort("step")
    assert s.select("step", "rw", "iodepth", "numjobs", "direction").rows() == [
        ("drive-a/randread-1-1", "randread", 1, 1, "read"),
        ("drive-a/randread-8-2", "randread", 8, 2, "read"),
        ("drive-a/randwrite-4-3", "randwrite", 4, 3, "write"),
    ]
    assert set(s["label"]) == {"Drive A"}
    for row in s.iter_rows(named=True):
        raw = json.loads((sweep / f"{row['step']}.json").read_text())["jobs"][0][row["direction"]]
        assert row["iops"] == raw["iops"]
        ts = r.timeseries.filter(pl.col("step") == row["step"])
        assert ts.height >= 3 and (ts["t_s"].diff().drop_nulls() == 0.25).all()
        # each window is the sum of the clones' own log values for that window
        expected: dict[float, list[int]] = {}
        prefix = f"{row['rw']}-iodepth-{row['iodepth']}-numjobs-{row['numjobs']}"
        for log in sorted(d.glob(f"{prefix}_iops.*.log")):
            for line in log.read_text().splitlines():
                t_ms, value = (int(x) for x in line.split(",")[:2])
                expected.setdefault(round(t_ms / 250) * 0.25, []).append(value)
        complete = {t: sum(v) for t, v in expected.items() if len(v) == row["numjobs"]}
        assert dict(zip(ts["t_s"], ts["iops"], strict=True)) == complete
    # the summary command and the same frames work as for a native run
    assert "randwrite-4-3" in ssdlab_cli("summary", out).stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"] == "import"
    assert all(Path(src).exists() for step in manifest["steps"] for src in step["sources"])


def test_strict_stops_at_the_first_bad_file(sweep: Path, tmp_path: Path) -> None:
    proc = ssdlab_cli("import", sweep, "--out", tmp_path / "s", "--strict")
    assert (
        proc.returncode == 1
        and proc.stderr.startswith("error: ")
        and "Traceback" not in proc.stderr
    )
    assert not (tmp_path / "s" / "manifest.json").exists()


def test_batches_of_logs_give_the_same_frames(
    sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logs are summed a batch of results at a time by a worker thread: one result per
    batch gives the frames one batch for everything gives."""
    import ssdlab.importer

    import_results([sweep], tmp_path / "one")
    monkeypatch.setattr(ssdlab.importer, "BATCH_BYTES", 1)
    import_results([sweep], tmp_path / "many")
    one, many = ssdlab.load(tmp_path / "one"), ssdlab.load(tmp_path / "many")
    assert one.timeseries.height > 0
    for name in ("summary", "timeseries", "percentiles"):
        a, b = (getattr(r, name).drop("run_id") for r in (one, many))
        assert a.equals(b), name


def test_bad_logs_a_result_names_are_skipped_with_the_reason(sweep: Path, tmp_path: Path) -> None:
    d = tmp_path / "drive"
    d.mkdir()
    for f in (sweep / "drive-a").glob("randread-8-2*"):
        (d / f.name).write_bytes(f.read_bytes())
    prefix = "randread-iodepth-8-numjobs-2"
    for f in (sweep / "drive-a").glob(f"{prefix}_*"):
        (d / f.name).write_bytes(f.read_bytes())
    (d / f"{prefix}_iops.1.log").write_text("garbage\n")
    clat = d / f"{prefix}_clat.2.log"
    clat.write_text(clat.read_text() + "1500, x\n")
    (d / f"{prefix}_slat.1.log").write_bytes(bytes(range(256)))  # nothing is imported from it
    report = import_results([d], tmp_path / "o")
    reasons = {s.path.name: s.reason for s in report.skipped}
    assert reasons == {
        f"{prefix}_iops.1.log": "line 1 is not a fio log row (time, value, ddir, bs, ...)",
        f"{prefix}_clat.2.log": reasons[f"{prefix}_clat.2.log"],
        f"{prefix}_slat.1.log": reasons[f"{prefix}_iops.1.log"],
    }
    assert reasons[f"{prefix}_clat.2.log"].startswith("malformed fio log: ")
    assert report.results == 1 and ssdlab.load(tmp_path / "o").summary.height == 1
    with pytest.raises(InputError, match=r"_slat\.1\.log: line 1 is not a fio log row"):
        import_results([d], tmp_path / "strict", strict=True)
    (d / f"{prefix}_slat.1.log").unlink()  # now the first bad file is found by the worker
    with pytest.raises(InputError, match=r"_iops\.1\.log: line 1 is not a fio log row"):
        import_results([d], tmp_path / "strict", strict=True)
    assert not (tmp_path / "strict").exists()  # nothing half written is left


def test_overlapping_roots_and_results_without_jobs(sweep: Path, tmp_path: Path) -> None:
    once = import_results([sweep], tmp_path / "once")
    twice = import_results([sweep, sweep / "drive-a", sweep], tmp_path / "twice")
    assert (once.results, once.logs, len(once.skipped)) == (
        twice.results,
        twice.logs,
        len(twice.skipped),
    )
    a, b = (ssdlab.load(tmp_path / n).timeseries.drop("run_id", "label") for n in ("once", "twice"))
    assert a.height > 0 and a.equals(b)
    (tmp_path / "nojobs").mkdir()
    (tmp_path / "nojobs" / "r.json").write_text('{"fio version": "fio-3.33", "jobs": []}')
    report = import_results([tmp_path / "nojobs"], tmp_path / "o")
    assert report.results == 1 and ssdlab.load(tmp_path / "o").timeseries.is_empty()


def test_a_result_with_a_log_name_is_still_a_result(sweep: Path, tmp_path: Path) -> None:
    """Files are recognised by content: fio JSON saved under a log-like name imports."""
    (tmp_path / "d").mkdir()
    raw = (sweep / "drive-a" / "randread-1-1.json").read_bytes()
    (tmp_path / "d" / "saved_iops.1.log").write_bytes(raw)
    report = import_results([tmp_path / "d"], tmp_path / "o")
    assert report.results == 1 and report.skipped == []
    assert ssdlab.load(tmp_path / "o").summary["step"].to_list() == ["saved_iops.1"]


def test_nothing_importable_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(InputError, match="no fio JSON result"):
        import_results([tmp_path], tmp_path / "o")


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("variants")
    common = [*NULL, "--rw=randrw", "--rwmixread=60", "--output-format=json+"]
    # numjobs clones without group_reporting: 3 entries, logs .1 .2 .3
    fio(
        d,
        "--name=clones",
        *common,
        "--numjobs=3",
        "--write_iops_log=cl",
        "--log_avg_msec=250",
        "--output=clones.json",
    )
    # per-I/O logs with priorities in hex and offsets
    fio(
        d,
        "--name=perio",
        *common,
        "--write_lat_log=pio",
        "--log_offset=1",
        "--log_prio=1",
        "--rate_iops=2000",
        "--output=perio.json",
    )
    # status-interval stream and normal,json in one file
    fio(d, "--name=stream", *common, "--status-interval=300ms", "--output=stream.json")
    fio(d, "--name=both", *common, "--output-format=normal,json", "--output=both.out")
    # histogram logs at coarseness 2
    fio(
        d,
        "--name=hist",
        *common,
        "--write_hist_log=h",
        "--log_hist_msec=300",
        "--log_hist_coarseness=2",
        "--output=hist.json",
    )
    return d


def test_variants(variants: Path, tmp_path: Path) -> None:
    report = import_results([variants], tmp_path / "o")
    assert report.results == 5 and report.skipped == []
    r = ssdlab.load(tmp_path / "o")
    clones = r.summary.filter(pl.col("step") == "clones")
    assert clones.height == 6 and sorted(set(clones["job_index"])) == [0, 1, 2]
    ts = r.timeseries.filter(pl.col("step") == "clones")
    assert sorted(set(ts["job_index"])) == [0, 1, 2]  # each clone's own log
    perio = r.timeseries.filter(pl.col("step") == "perio")
    assert perio.height >= 2  # per-I/O rows counted into 1 s windows
    assert (perio.group_by("t_s").agg(pl.col("iops").sum())["iops"] > 1000).all()
    stream = r.snapshots.filter(pl.col("step") == "stream")
    assert stream["snapshot"].n_unique() >= 3
    last = stream.filter(
        pl.col("snapshot") == stream["snapshot"].max(), pl.col("direction") == "read"
    )
    final = r.summary.filter(pl.col("step") == "stream", pl.col("direction") == "read")
    assert last["io_bytes"][0] == final["io_bytes"][0]
    assert (stream.drop_nulls("interval_iops")["interval_iops"] > 0).all()
    assert r.summary.filter(pl.col("step") == "both").height == 2


def test_histogram_log_intervals_match_fiologparser_hist(variants: Path) -> None:
    from ssdlab.io.fio_hist import hist_intervals, read_fio_hist_log

    frame, meta = read_fio_hist_log(variants / "h_clat_hist.1.log")
    assert (meta["fio_major"], meta["coarseness"], meta["n_bins"]) == (3, 2, 464)
    tool = Path("/usr/share/doc/fio/fiologparser_hist.py.gz")
    if not tool.exists():
        pytest.skip("fio's fiologparser_hist.py is not installed (Debian's fio ships it)")
    script = variants / "fiologparser_hist.py"
    script.write_text(subprocess.run(["zcat", str(tool)], capture_output=True, text=True).stdout)
    import sys

    args = ["--noweight", "--directions=rw", "-i", "300", "--percentiles", "90:95:99"]
    out = subprocess.run(
        [sys.executable, str(script), *args, str(variants / "h_clat_hist.1.log")],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    theirs = [[x.strip() for x in line.split(",")] for line in out[1:]]
    ours = hist_intervals(frame, meta["n_bins"], 300, (50, 90, 95, 99)).sort("end_ms", "direction")
    assert len(theirs) == ours.height > 0
    for t, o in zip(theirs, ours.iter_rows(named=True), strict=True):
        assert int(t[0]) == o["end_ms"] and t[1] == o["direction"][0] and int(t[2]) == o["samples"]
        expected = [float(x) for x in t[3:]]
        got = [
            o[c]
            for c in (
                "lat_min_ns",
                "lat_mean_ns",
                "lat_p50_ns",
                "lat_p90_ns",
                "lat_p95_ns",
                "lat_p99_ns",
                "lat_max_ns",
            )
        ]
        assert got == pytest.approx(expected, abs=1e-3)


def test_client_server_over_loopback(tmp_path: Path) -> None:
    # a server creates its client's --output file in its cwd; started once it listens, on
    # ports no other test (or pytest-xdist worker) uses
    with fio_servers(tmp_path) as start:
        servers = [start("127.0.0.1"), start("127.0.0.2")]
        (tmp_path / "hosts").write_text("".join(f"{s.ip},{s.port}\n" for s in servers))
        job = tmp_path / "job.fio"
        job.write_text(
            "[global]\nioengine=null\nsize=64m\ntime_based=1\nruntime=1\nwrite_iops_log=c\nlog_avg_msec=250\n[cj]\nrw=randread\nnumjobs=2\n"
        )
        fio(
            tmp_path,
            f"--client={tmp_path / 'hosts'}",
            str(job),
            "--output-format=json",
            "--output=cs.json",
        )
    result = read_fio_json(tmp_path / "cs.json")
    assert set(result.jobs["hostname"]) == {"127.0.0.1", "127.0.0.2"} and result.jobs.height == 4
    assert result.aggregate["jobname"].to_list() == ["All clients"]
    import_results([tmp_path], tmp_path / "o")
    r = ssdlab.load(tmp_path / "o")
    assert set(r.summary["host"]) == {"127.0.0.1", "127.0.0.2"}
    assert r.timeseries["job_index"].n_unique() == 4  # host-suffixed logs paired per host


def test_old_fio_versions_from_documented_layouts() -> None:
    old = read_fio_json(FIXTURES / "fio-2.2.10.json")
    row = old.jobs.row(0, named=True)
    assert row["io_bytes"] == 409600 * 1024  # io_bytes held KiB before 2.21
    assert row["clat_p99_ns"] == 60_000 and row["clat_mean_ns"] == 28_100  # µs -> ns
    assert row["bw_bytes_s"] == 136533 * 1024
    plus = read_fio_json(FIXTURES / "fio-2.19-jsonplus.json")
    bins = plus.bins.filter(pl.col("direction") == "read")
    reported = plus.percentiles.filter(pl.col("direction") == "read", pl.col("stat") == "clat")
    assert (
        fio_percentiles(bins["lat_ns"], bins["count"], reported["percentile"])
        == reported["value_ns"].to_list()
    )


def test_exceedance_counts_the_straddling_bin_as_over(tmp_path: Path) -> None:
    from ssdlab.io.fio_hist import bin_edges, hist_intervals, read_fio_hist_log

    lower, upper = bin_edges(1856)
    below = int(np.flatnonzero(upper <= 1e6)[-1])
    straddle = int(np.flatnonzero((lower < 1e6) & (upper > 1e6))[0])
    above = int(np.flatnonzero(lower >= 2e6)[0])
    counts = np.zeros(1856, dtype=int)
    counts[[below, straddle, above]] = (90, 6, 4)
    log = tmp_path / "x_clat_hist.1.log"
    log.write_text("1000, 0, 4096, " + ", ".join(map(str, counts)) + "\n")
    frame, meta = read_fio_hist_log(log)
    assert frame["count"].sum() == 100 and frame["lat_lo_ns"][1] < 1e6 < frame["lat_hi_ns"][1]
    row = hist_intervals(frame, meta["n_bins"], 1000, (50,), (1e6,)).row(0, named=True)
    assert row["samples"] == 100 and row["frac_over_1e+06ns"] == pytest.approx(0.10)


def test_log_layouts_from_job_options(tmp_path: Path) -> None:
    """3.37+ ``log_window_value=both`` adds a max column after the value; with
    ``log_offset=1`` and ``log_prio=1`` a row is time, value, max, ddir, bs, offset, prio."""
    from ssdlab.io.fio_log import LogBatch

    log = tmp_path / "w_clat.1.log"
    log.write_text("1000, 5000, 9000, 1, 0, 0, 0x0003\n2000, 5200, 8000, 1, 0, 0, 0x0003\n")

    def read(layout: tuple[bool | None, bool]) -> tuple[pl.DataFrame, dict[int, str]]:
        batch = LogBatch()
        batch.add(0, log.read_bytes(), layout)
        return batch.parse(), batch.bad

    frame, bad = read((True, True))
    assert not bad and frame["file"].unique().to_list() == [0]
    assert frame.select("value", "value_max", "direction", "offset_bytes", "prio").rows() == [
        (5000, 9000, "write", 0, 3),
        (5200, 8000, "write", 0, 3),
    ]
    guessed, _ = read((None, False))  # without the job's options the columns are a guess
    assert "value_max" not in guessed.columns


def test_fio2_histogram_logs_are_microseconds(tmp_path: Path) -> None:
    from ssdlab.io.fio_hist import read_fio_hist_log

    counts = np.zeros(1216 // 4, dtype=int)  # fio 2.x bins at log_hist_coarseness=2
    counts[100] = 7
    log = tmp_path / "old_clat_hist.1.log"
    log.write_text("500, 0, 4096, " + ", ".join(map(str, counts)) + "\n")
    frame, meta = read_fio_hist_log(log)
    assert (meta["fio_major"], meta["coarseness"]) == (2, 2)
    # coarse bin 100 spans fine bins 400-403: group (400 >> 6) - 1 = 5, base 2^11 = 2048 µs,
    # 2^5 µs per fine bin, k = 400 % 64 = 16 -> [2048 + 16 x 32, 2048 + 20 x 32) µs
    assert frame.row(0, named=True)["lat_lo_ns"] == (2048 + 16 * 32) * 1000
    assert frame.row(0, named=True)["lat_hi_ns"] == (2048 + 20 * 32) * 1000
