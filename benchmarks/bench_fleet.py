"""Fleet overhead: fio's client/server path against fio running locally, ``null`` engine.

Run: ``.venv/bin/python benchmarks/bench_fleet.py [--runtime 5] [--steps 3] [--hosts 2]
[--repeats 3]``

The benchmark starts ``fio --server`` on loopback addresses (127.0.0.2, 127.0.0.3, ...) and
stops them at the end. Each measurement is repeated ``--repeats`` times, local and remote in
alternation; medians are reported.

- bare fio: one null-engine job run by a local fio and through ``fio --client`` against one
  server on this machine. Both do their I/O in a fio process here, so their IOPS should match
  (target: within 5 %); the extra wall time is the client/server set-up per job (fio's
  server wakes an idle connection once a second, so a job starts up to 1 s after its client
  connects).
- ssdlab: a ``--steps``-step suite run by ``run_suite`` (local fio) and by ``run_fleet`` on
  ``--hosts`` servers at once: the extra seconds per step (the set-up above, plus one server
  probe per run spread over the steps).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from ssdlab.fleet import parse_hosts, run_fleet
from ssdlab.io import read_fio_json
from ssdlab.runner import run_suite
from ssdlab.suite import load_suite

JOB = "[bench]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\ntime_based=1\nruntime={runtime}\n"
SUITE = """
name = "fleet-bench"
[defaults]
ioengine = "null"
rw = "randread"
bs = "4k"
size = "64m"
runtime_s = {runtime}
"""


def start_servers(count: int, home: Path) -> list[tuple[str, int, subprocess.Popen[bytes]]]:
    servers = []
    for n in range(count):
        ip = f"127.0.0.{n + 2}"
        with socket.socket() as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(
            ["fio", f"--server=ip:{ip},{port}"],
            cwd=home,  # a server writes files named on the client command line in its cwd
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex((ip, port)) and time.monotonic() < deadline:
            time.sleep(0.05)
        servers.append((ip, port, proc))
    return servers


def bare_fio(work: Path, client: str | None) -> tuple[float, float]:
    """Wall seconds and IOPS of the job, run locally or as the client of ``client``."""
    cmd = ["fio", *([f"--client={client}"] if client else []), "--output-format=json", "job.fio"]
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=work, check=True, stdout=subprocess.PIPE).stdout
    wall = time.perf_counter() - start
    (work / "out.json").write_bytes(out)
    return wall, float(read_fio_json(work / "out.json").jobs["iops"].sum())


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=float, default=5.0, help="seconds per job / step")
    parser.add_argument("--steps", type=int, default=3, help="steps of the ssdlab suite")
    parser.add_argument("--hosts", type=int, default=2, help="fio servers for run_fleet")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ssdlab-bench-fleet-"))
    servers = start_servers(args.hosts, work)
    quiet = Console(quiet=True)
    try:
        (work / "job.fio").write_text(JOB.format(runtime=int(args.runtime)))
        steps = "".join(f'[[steps]]\nname = "s{i}"\n' for i in range(args.steps))
        (work / "suite.toml").write_text(SUITE.format(runtime=args.runtime) + steps)
        suite = load_suite(work / "suite.toml")
        hosts = parse_hosts(",".join(f"{ip}:{port}={work}/t{port}.bin" for ip, port, _ in servers))

        local, remote = [], []
        for _ in range(args.repeats):
            local.append(bare_fio(work, None))
            remote.append(bare_fio(work, f"{servers[0][0]},{servers[0][1]}"))
        l_wall, l_iops = (statistics.median(x) for x in zip(*local, strict=True))
        r_wall, r_iops = (statistics.median(x) for x in zip(*remote, strict=True))
        print(
            f"bare fio, {args.runtime:g} s null-engine job: local {l_wall:.2f} s "
            f"{l_iops / 1e6:.2f}M IOPS; --client {r_wall:.2f} s {r_iops / 1e6:.2f}M IOPS"
        )
        print(
            f"  client/server set-up per job: {r_wall - l_wall:+.2f} s; "
            f"IOPS ratio {r_iops / l_iops:.3f} (target >= 0.95)"
        )

        suite_local, suite_fleet = [], []
        for i in range(args.repeats):
            out = work / f"local{i}"
            suite_local.append(timed(lambda out=out: run_suite(suite, out, console=quiet)))
            out = work / f"fleet{i}"
            suite_fleet.append(timed(lambda out=out: run_fleet(suite, hosts, out, console=quiet)))
        s_local, s_fleet = statistics.median(suite_local), statistics.median(suite_fleet)
        print(
            f"ssdlab, {args.steps} steps of {args.runtime:g} s: run_suite {s_local:.2f} s; "
            f"run_fleet on {args.hosts} hosts {s_fleet:.2f} s"
        )
        print(
            f"  fleet overhead per step: {(s_fleet - s_local) / args.steps:+.2f} s "
            f"(includes one server probe per run, {args.hosts} hosts in lockstep)"
        )
    finally:
        for _, _, proc in servers:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
