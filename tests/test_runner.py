"""Running suites with real fio: raw results on disk, manifest, errors, interruption."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli
from test_trust_run import wait_measuring

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.errors import InputError
from ssdlab.fio import pinned_clocksource
from ssdlab.review.drive import setup_section
from ssdlab.sysinfo import CLOCKSOURCE, HostInfo


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_run_keeps_every_raw_result_and_a_complete_manifest(tiny_run: Path) -> None:
    m = manifest(tiny_run)
    assert m["status"] == "complete" and m["suite"] == "tiny" and m["label"] == "test file"
    assert m["fio_version"].startswith("fio-") and m["ssdlab_version"]
    assert {"hostname", "kernel", "cpu_model", "os"} <= m["host"].keys()
    assert m["target"]["temporary"] and not Path(m["target"]["path"]).exists()
    for step in m["steps"]:
        assert step["status"] == "ok" and step["started"] < step["ended"]
        d = tiny_run / "steps" / step["dir"]
        names = {p.name for p in d.iterdir()}
        assert {"job.fio", "fio.json", "fio.stderr"} <= names
        assert all(
            re.fullmatch(r"job\.fio|fio\.json|fio\.stderr|fio_\w+\.\d+\.log", n) for n in names
        )
        clones = step["workload"]["numjobs"]
        for kind in ("bw", "iops", "clat", "lat", "clat_hist"):
            assert {f"fio_{kind}.{i}.log" for i in range(1, clones + 1)} <= names
        assert f"[{step['name']}]" in (d / "job.fio").read_text()
    assert not list((tiny_run / "steps").glob("*.partial"))


def test_step_headline_is_in_report_units(tiny_run: Path) -> None:
    from ssdlab.runner import step_headline
    from ssdlab.tables import format_bw

    step = tiny_run / "steps" / manifest(tiny_run)["steps"][0]["dir"]
    fio = ssdlab.read_fio_json(step / "fio.json")
    line = step_headline(step, fio)
    assert format_bw(fio.jobs["bw_bytes_s"].sum()) in line and "MiB" not in line


def test_load_gives_tidy_frames_consistent_with_fio(tiny_run: Path) -> None:
    r = ssdlab.load(tiny_run)
    s = r.summary
    required = [
        "run_id",
        "label",
        "host",
        "step",
        "rw",
        "bs_bytes",
        "iodepth",
        "numjobs",
        "rwmixread",
        "direction",
        "iops",
        "bw_bytes_s",
        "io_bytes",
        "runtime_s",
        "lat_mean_ns",
        "clat_mean_ns",
        "clat_p50_ns",
        "clat_p99_ns",
        "clat_p99_9_ns",
        "clat_p99_99_ns",
        "clat_max_ns",
        "usr_cpu_pct",
        "sys_cpu_pct",
    ]
    assert set(required) <= set(s.columns)
    assert s.select("step", "direction").rows() == [
        ("randread-4k-2jobs", "read"),
        ("randrw70-8k-qd4", "read"),
        ("randrw70-8k-qd4", "write"),
    ]
    for row in s.iter_rows(named=True):
        raw = json.loads(
            (tiny_run / "steps" / f"{row['step_index']:03d}-{row['step']}" / "fio.json").read_text()
        )
        d = raw["jobs"][0][row["direction"]]
        assert (
            row["iops"] == d["iops"]
            and row["clat_p99_ns"] == d["clat_ns"]["percentile"]["99.000000"]
        )
        assert row["bw_bytes_s"] / row["iops"] == pytest.approx(row["bs_bytes"], rel=0.01)

    ts = r.timeseries
    assert set(ts.select("step", "direction").unique().rows()) == set(
        s.select("step", "direction").rows()
    )
    both = ts.join(
        s.select("step", "direction", "bs_bytes", pl.col("iops").alias("fio_iops")),
        on=["step", "direction"],
    )
    # every window: bandwidth / IOPS is the block size, and rates are of fio's order of
    # magnitude (a unit slip would be 1000x off; how far one window strays from fio's average
    # depends on how loaded the machine is, so that is not checked here)
    assert (both["bw_bytes_s"] / both["iops"] / both["bs_bytes"] - 1).abs().max() < 0.01
    assert ((both["iops"] / both["fio_iops"]).is_between(0.1, 10)).all()
    assert (ts["clat_mean_ns"] > 0).all() and (ts["t_s"] > 0).all()

    sums = r.latency_hist.group_by("step", "direction").agg(pl.col("count").sum())
    assert (
        sums.join(s, on=["step", "direction"])
        .filter(pl.col("count") != pl.col("clat_samples"))
        .is_empty()
    )
    pandas = r.to_pandas()
    assert list(pandas.summary.columns) == s.columns and len(pandas.timeseries) == ts.height
    assert list(pandas.waf.columns) == r.waf.columns and {"power", "waf"} <= set(dir(pandas))


def test_summary_command_formats(tiny_run: Path, tmp_path: Path) -> None:
    frame = ssdlab.load(tiny_run).summary
    table = ssdlab_cli("summary", tiny_run)
    assert table.returncode == 0 and "randrw70-8k-qd4" in table.stdout and "IOPS" in table.stdout
    csv = ssdlab_cli("summary", tiny_run, "--format", "csv")
    assert pl.read_csv(csv.stdout.encode())["iops"].to_list() == frame["iops"].to_list()
    js = json.loads(ssdlab_cli("summary", tiny_run, "-f", "json").stdout)
    assert [row["clat_p99_ns"] for row in js] == frame["clat_p99_ns"].to_list()
    pq = tmp_path / "s.parquet"
    assert ssdlab_cli("summary", tiny_run, "-f", "parquet", "-o", pq).returncode == 0
    assert pl.read_parquet(pq).equals(frame)


def write_suite(tmp_path: Path, second: str, runtime_s: float = 1) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "t"\n[defaults]\nsize = "16m"\nioengine = "psync"\nruntime_s = {runtime_s}\n'
        '[[steps]]\nname = "first"\nrw = "randread"\nruntime_s = 1\n'
        f'[[steps]]\nname = "second"\nrw = "randwrite"\n{second}\n'
    )
    return path


def test_fio_failure_is_one_line_naming_the_step_and_keeps_earlier_steps(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "options = { no_such_fio_option = 1 }")
    out = tmp_path / "out"
    proc = ssdlab_cli("run", suite, "--out", out, "--allow-fio-option", "no_such_fio_option")
    assert proc.returncode == 1  # fio --parse-only refuses it before any step runs
    error = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "step 'second': fio --parse-only refuses" in error[0]
    assert "no_such_fio_option" in error[0] and "Traceback" not in proc.stderr
    assert not out.exists()  # refused before anything was written: no empty directory left
    out.mkdir()
    proc = ssdlab_cli("run", suite, "--out", out, "--allow-fio-option", "no_such_fio_option")
    assert proc.returncode == 1 and out.is_dir()  # a directory the user made stays

    # an engine fio parses but cannot load fails when the step runs
    suite = write_suite(tmp_path, 'ioengine = "no_such_engine"')
    out = tmp_path / "engine"
    proc = ssdlab_cli("run", suite, "--out", out, "--allow-fio-option", "ioengine")
    assert proc.returncode == 1
    error = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "step 'second' failed" in error[0], proc.stderr
    assert "no_such_engine" in error[0] and "Traceback" not in proc.stderr
    m = manifest(out)
    assert m["status"] == "failed" and [s["status"] for s in m["steps"]] == ["ok", "failed"]
    assert ssdlab.load(out).summary["step"].to_list() == ["first"]


def test_bad_targets_are_refused_clearly(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "")
    missing = ssdlab_cli("run", suite, "--out", tmp_path / "o1", "--target", tmp_path / "no" / "f")
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    a_dir = ssdlab_cli("run", suite, "--out", tmp_path / "o2", "--target", tmp_path)
    assert a_dir.returncode == 1 and "regular file" in a_dir.stderr
    assert not (tmp_path / "no").exists()


def start_run(suite: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ssdlab", "run", str(suite), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ctrl_c_stops_fio_keeps_results_and_rerun_continues(tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path, "", runtime_s=6), tmp_path / "out"
    proc = start_run(suite, out)
    wait_measuring(out, "second", proc)  # Ctrl-C about 1 s into the step's 6 s
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    m = manifest(out)
    assert m["status"] == "interrupted"
    assert [s["status"] for s in m["steps"]] == ["ok", "interrupted"]
    partial = ssdlab.load(out).summary
    assert partial["status"].to_list() == ["ok", "interrupted"] and partial["io_bytes"][1] > 0
    assert partial["runtime_s"][1] < 6
    shown = ssdlab_cli("summary", out)  # partial figures never pass for complete ones
    assert shown.returncode == 0 and "(interrupted)" in shown.stdout, shown.stdout
    setup = setup_section(DriveAnalysis(ssdlab.load(out)))
    assert any(s.startswith("1 step stopped before the end (second after") for s in setup.findings)

    first_json = out / "steps" / "001-first" / "fio.json"
    before = first_json.stat().st_mtime_ns
    again = ssdlab_cli("run", suite, "--out", out)
    assert again.returncode == 0, again.stderr
    m2 = manifest(out)
    assert [s["status"] for s in m2["steps"]] == ["ok", "ok"]
    assert m2["run_id"] == m["run_id"] and m2["steps"][0] == m["steps"][0]
    assert first_json.stat().st_mtime_ns == before
    # the rerun ran the whole 6 s step (fio's time-based runtime is at least its runtime),
    # not the 1 s or so the interrupted one had
    assert ssdlab.load(out).summary["runtime_s"][1] >= 5.99


def test_sigkill_never_leaves_a_result_that_looks_complete(tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path, "", runtime_s=6), tmp_path / "out"
    proc = start_run(suite, out)
    wait_measuring(out, "second", proc)
    proc.kill()
    proc.wait()
    subprocess.run(["pkill", "-f", str(out / "steps")], check=False)  # the orphaned fio
    m = manifest(out)
    assert [s["status"] for s in m["steps"]] == ["ok", "running"]
    assert (out / "steps" / "002-second.partial").is_dir()
    assert not (out / "steps" / "002-second").exists()
    assert ssdlab.load(out).summary["step"].to_list() == ["first"]


def test_load_refuses_what_is_not_a_results_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not an ssdlab results directory"):
        ssdlab.load(tmp_path)
    (tmp_path / "manifest.json").write_text("{")
    with pytest.raises(InputError, match="unreadable manifest"):
        ssdlab.load(tmp_path)


def test_file_targets_hold_written_data(tmp_path: Path) -> None:
    """A new file target is written through, so reads hit the medium: neither sparse nor
    merely allocated (both read back zeros without I/O and inflate read results)."""
    from ssdlab.target import prepare_target

    info = prepare_target(None, tmp_path, size_bytes=32 * 2**20, writes=False)
    path = Path(info.path)
    assert info.temporary and info.size_bytes == path.stat().st_size == 32 * 2**20
    assert path.stat().st_blocks * 512 >= 32 * 2**20
    with path.open("rb") as fh:
        fh.seek(17 * 2**20)
        assert fh.read(4096).count(0) < 4096 // 2


@pytest.mark.parametrize(
    ("line", "percent", "iops", "bw", "eta"),
    [
        ("Jobs: 1 (f=1): [r(1)][60.0%][r=300MiB/s][r=76.8k IOPS][eta 00m:02s]",
         60.0, 76_800, 300 * 2**20, 2),
        ("Jobs: 1 (f=1): [m(1)][40.0%][r=150MiB/s,w=64.2MiB/s][r=38.4k,w=16.4k IOPS]"
         "[eta 01h:00m:03s]", 40.0, 54_800, (150 + 64.2) * 2**20, 3603),
        ("Jobs: 4 (f=4): [W(4)][1.2%][w=2000KiB/s][w=500 IOPS][eta 1d:02h:03m:04s]",
         1.2, 500, 2000 * 1024, ((24 + 2) * 60 + 3) * 60 + 4),
    ],
)  # fmt: skip
def test_fio_status_lines(line: str, percent: float, iops: float, bw: float, eta: int) -> None:
    from ssdlab.fio import parse_status_line

    status = parse_status_line(line)
    assert status is not None and status.percent == percent and status.eta_s == eta
    assert status.iops == pytest.approx(iops) and status.bw_bytes_s == pytest.approx(bw)
    assert parse_status_line("fio: some note") is None


def test_every_step_of_a_run_times_itself_with_the_clock_the_manifest_records(
    tiny_run: Path,
) -> None:
    m = manifest(tiny_run)
    host = HostInfo(**m["host"])
    assert host.clocksource == Path(CLOCKSOURCE).read_text().strip()
    assert m["fio_clocksource"] == pinned_clocksource(host)
    for step in m["steps"]:
        d = tiny_run / "steps" / step["dir"]
        lines = (d / "job.fio").read_text().splitlines()
        pinned = [line.split("=", 1)[1] for line in lines if line.startswith("clocksource=")]
        assert pinned == ([m["fio_clocksource"]] if m["fio_clocksource"] else [])
        assert "may not be reliable" not in (d / "fio.stderr").read_text() + str(step["notes"])


@pytest.mark.parametrize(
    ("kernel_clock", "invariant", "expected"),
    [("tsc", True, "cpu"), ("tsc", False, None), ("kvm-clock", True, None), (None, None, None)],
)
def test_fio_clock_is_pinned_only_where_the_kernel_itself_trusts_the_tsc(
    kernel_clock: str | None, invariant: bool | None, expected: str | None
) -> None:
    host = HostInfo(
        hostname="h", kernel="k", os="o", cpu_model="c", cpu_count=1, python="3",
        clocksource=kernel_clock, invariant_tsc=invariant,
    )  # fmt: skip
    assert pinned_clocksource(host) == expected


def test_a_block_larger_than_the_span_it_works_on_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "big.toml"
    suite.write_text(
        'name = "big"\n[[steps]]\nname = "first"\nrw = "write"\nsize = "1m"\nloops = 1\n'
        '[[steps]]\nname = "big"\nrw = "write"\nbs = "32m"\nsize = "16m"\nruntime_s = 1\n'
    )
    target, out = tmp_path / "t.bin", tmp_path / "out"
    for command in ("plan", "run"):
        done = ssdlab_cli(command, suite, "--target", target, "--target-size", "64m", "-o", out)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert "step 'big': its block (32m) is larger than the 16m it works on" in done.stderr
    assert not out.exists() and not target.exists()  # refused before the first step ran


def test_one_unreadable_file_leaves_out_only_what_depends_on_it(tmp_path: Path) -> None:
    """A step's missing fio.json leaves out that step; a garbage line in a log leaves out
    that step's time series; each is one warning, and the rest shows (summary, load)."""
    out = tmp_path / "out"
    done = ssdlab_cli("run", write_suite(tmp_path, ""), "--out", out, "--target-size", "16m")
    assert done.returncode == 0, done.stderr
    whole = ssdlab.load(out)
    (out / "steps" / "002-second" / "fio.json").unlink()
    (log,) = (out / "steps" / "001-first").glob("*_iops.1.log")
    with log.open("a") as fh:
        fh.write("zzz\n")
    shown = ssdlab_cli("summary", out)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    warned = [line for line in shown.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2 and "002-second/fio.json: cannot read" in warned[0]
    assert "step second left out" in warned[0] and "step first's time series left out" in warned[1]
    loaded = ssdlab.load(out)
    assert loaded.summary["step"].to_list() == ["first"]
    assert loaded.summary.row(0) == whole.summary.row(0)  # fio's figures of the step kept
    assert loaded.timeseries.is_empty() and not whole.timeseries.is_empty()
    said = setup_section(DriveAnalysis(loaded)).findings  # and the review says so
    assert [
        s for s in said if s.startswith("Left out, as a file is missing or could not be read")
    ] == [
        f"Left out, as a file is missing or could not be read: {line.removeprefix('warning: ')}."
        for line in warned
    ]
