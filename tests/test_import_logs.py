"""fio logs are found where the tools that write them put them, each host kept apart, and the
rows of one interval are paired across a thread's logs: no value is dropped uncounted.

``fixtures/import24/pbench`` is shaped as pbench-fio leaves a sample (``fio-result.txt``
holding fio's client/server JSON, ``clients/<host>/`` each client's logs without the
``.<host>`` suffix fio's client gives them, as pbench's ``fio_run_job`` moves them): fio 3.33
run for real, two ``fio --server``s on 127.0.0.1 and 127.0.0.2 and one ``fio --client`` of
both, ``numjobs=2`` with bw, iops, lat and histogram logs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT, ssdlab_cli

import ssdlab
from ssdlab.logs import UNPAIRED

PBENCH = ROOT / "tests" / "fixtures" / "import24" / "pbench"
HOSTS = ["127.0.0.1", "127.0.0.2"]


def _import(tree: Path, out: Path) -> tuple[ssdlab.Results, list[str]]:
    proc = ssdlab_cli("import", tree, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return ssdlab.load(out), proc.stderr.splitlines()


def test_pbench_client_folders_pair_every_log_with_its_host(tmp_path: Path) -> None:
    tree = tmp_path / "sample1"
    shutil.copytree(PBENCH, tree)
    results, said = _import(tree, tmp_path / "out")
    assert said[-1] == "imported 1 fio result with 24 logs; skipped 1 file"  # fio.job
    sources = results.manifest.steps[0].sources
    assert len(sources) == 1 + 24 and all(
        any(f"clients/{host}/" in s for host in HOSTS) for s in sources[1:]
    )
    jobs = results.summary.select("job_index", "host").unique().sort("job_index")
    assert jobs["host"].to_list() == ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"]
    for frame in (results.timeseries, results.latency_intervals):  # each job's own host
        assert frame.height
        tagged = frame.select("job_index", "host").unique().join(jobs, on="job_index")
        assert (tagged["host"] == tagged["host_right"]).all()

    # fio's client leaves them beside the JSON, suffixed with the host: the same series
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copy(tree / "fio-result.txt", flat)
    for host in HOSTS:
        for log in (tree / "clients" / host).iterdir():
            shutil.copy(log, flat / f"{log.name}.{host}")
    again, said = _import(flat, tmp_path / "out-flat")
    assert said[-1] == "imported 1 fio result with 24 logs; skipped 0 files"
    for name in ("timeseries", "latency_intervals"):
        columns = [c for c in getattr(results, name).columns if c not in ("run_id", "label")]
        assert getattr(again, name).select(columns).equals(getattr(results, name).select(columns))


def test_unpaired_logs_are_counted_with_why(tmp_path: Path) -> None:
    tree = tmp_path / "sample1"
    shutil.copytree(PBENCH, tree)
    (tree / "fio.job").unlink()
    stray = tree / "clients" / "127.0.0.3"  # a host the result does not list
    stray.mkdir()
    shutil.copy(tree / "clients" / HOSTS[0] / "fio_bw.1.log", stray)
    _, said = _import(tree, tmp_path / "out")
    assert said[-1] == (
        "imported 1 fio result with 24 logs; 1 log not paired (fio log that no imported JSON "
        "result names (write_*_log prefix)); skipped 1 file"
    )


def _fio_run(directory: Path) -> None:
    """A real local fio run: a 4 s null-engine job logging bw, iops and latency every 500 ms
    (relative times: fio 3.33 gives no job_start, so windows count from 0)."""
    directory.mkdir()
    job = (
        "[j]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\ntime_based=1\nruntime=4s\n"
        "log_avg_msec=500\nwrite_bw_log=fio\nwrite_iops_log=fio\nwrite_lat_log=fio\n"
    )
    (directory / "j.fio").write_text(job)
    subprocess.run(
        ["fio", "--output-format=json", "--output=fio-result.txt", "j.fio"],
        cwd=directory, check=True, capture_output=True,
    )  # fmt: skip
    (directory / "j.fio").unlink()


def test_pbench_local_runs_keep_logs_in_clients_localhost(tmp_path: Path) -> None:
    run = tmp_path / "local"
    _fio_run(run)
    (run / "clients" / "localhost").mkdir(parents=True)
    for log in run.glob("fio_*.log"):
        log.rename(run / "clients" / "localhost" / log.name)
    results, said = _import(run, tmp_path / "out")
    assert said[-1] == "imported 1 fio result with 5 logs; skipped 0 files"
    assert results.timeseries.height


def _rows(path: Path) -> list[list[str]]:
    return [line.split(", ") for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[list[str]]) -> None:
    path.write_text("".join(", ".join(row) + "\n" for row in rows))


@pytest.mark.parametrize("by_order", [True, False])
def test_one_interval_in_two_logs_lands_in_one_window(tmp_path: Path, by_order: bool) -> None:
    """fio wrote an interval at 1249 ms in the bw log and at 1250 ms (halfway between two
    500 ms windows) in the iops log: each rounded on its own, they went to different windows
    and a value was dropped. Every iops and bw value of the real logs, shifted so, must be
    in the time series (row by row; or, a row missing from the bw log, by nearest time)."""
    run = tmp_path / "run"
    _fio_run(run)
    iops, bw = _rows(run / "fio_iops.1.log"), _rows(run / "fio_bw.1.log")
    windows = [int(r[0]) // 500 for r in iops]  # rows of one interval: one window each
    assert len(iops) >= 6 and windows == sorted(set(windows)) == [int(r[0]) // 500 for r in bw]
    for rows, late in ((iops, 250), (bw, 249)):  # every row just around halfway
        for row, window in zip(rows, windows, strict=True):
            row[0] = str(window * 500 + late)
    if not by_order:
        del bw[3]  # a row fio did not write: the logs no longer pair row by row
    _write(run / "fio_iops.1.log", iops)
    _write(run / "fio_bw.1.log", bw)
    results, said = _import(run, tmp_path / "out")
    assert not any(UNPAIRED in line for line in said)
    series = results.timeseries
    assert series["iops"].sum() == sum(int(r[1]) for r in iops)
    assert series["bw_bytes_s"].sum() == 1024 * sum(int(r[1]) for r in bw)
    assert series.filter(pl.col("bw_bytes_s").is_null()).height == (0 if by_order else 1)
