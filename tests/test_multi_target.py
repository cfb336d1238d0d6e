"""Several targets of this machine in one run (``ssdlab run --target A --target B``): in
lockstep through fio servers ssdlab starts and always stops, or in sequence; one results
directory per target and a fleet.json, read by reports and comparisons as a --hosts run's."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, smart_tool, ssdlab_cli
from test_fleet import _wait_for
from test_fleet_safety import _digest, _patterned

import ssdlab
import ssdlab.fleet.run
from ssdlab.discover import parent_of_runs
from ssdlab.errors import InputError, SsdlabError
from ssdlab.estimate import STEP_START_S, Rates, target_class
from ssdlab.fleet import FleetFailed, load_fleet
from ssdlab.fleet.hosts import local_targets
from ssdlab.fleet.local import local_servers
from ssdlab.fleet.targets import run_targets
from ssdlab.layout import SERVERS_RECORD
from ssdlab.lock import results_lock
from ssdlab.manifest import TargetInfo
from ssdlab.progress import RunDisplay
from ssdlab.report.batch import fleet_title
from ssdlab.review.compare import load_comparison
from ssdlab.suite import load_suite

SUITE = """
name = "multi-tiny"

[defaults]
runtime_s = 1
size = "4m"
ioengine = "psync"

[[steps]]
name = "fill"
rw = "write"
bs = "64k"
runtime_s = 2

[[steps]]
name = "randread"
rw = "randread"
ioengine = "null"
"""


#: one step of 1 s
ONE_STEP = SUITE.split("[[steps]]")[0] + '[[steps]]\nname = "fill"\nrw = "write"\nbs = "64k"\n'


def _said(text: str, output: str) -> bool:
    """Whether ``output`` holds ``text``, whatever lines rich wrapped it into (long paths)."""
    return "".join(text.split()) in "".join(output.split())


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def _manifest(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text())


def _processes_under(directory: Path) -> list[str]:
    """Command lines of the processes naming a path under ``directory`` (the fio servers of
    a run whose TMPDIR it is)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(directory) in line and "--server=sock:" in line:
            found.append(line)
    return found


def _ssdlab(*args: str | Path, tmpdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ssdlab", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmpdir)},
    )


def test_lockstep_is_stopped_by_ctrl_c_and_resumed(tmp_path: Path) -> None:
    """Two files with the same name in two directories, in lockstep: Ctrl-C during the
    first step stops both (their fio servers too); the same command resumes them. Each has
    its own results directory with every step's fio.json and its own SMART snapshots; the
    root's fleet.json lists them and sums each step, and reports and comparisons read them."""
    files = [tmp_path / "a" / "t.bin", tmp_path / "b" / "t.bin"]
    for file in files:
        file.parent.mkdir()
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "out"
    for file in files:  # each target's own fake drive, its counters rising from step to step
        smart_tool(file.parent)
    tool = tmp_path / "smart.sh"
    tool.write_text('#!/bin/sh\nexec "$(dirname "$1")/fake-smartctl.sh" "$1"\n')
    tool.chmod(0o755)
    args = ["run", _suite(tmp_path), "--out", out, "--label", "rack"]
    args += ["--target", files[0], "--target", files[1], "--smart", f"{tool} {{device}}"]
    dirs = [out / local.dir for local in local_targets(files)]
    assert [d.name for d in dirs] == [f"{str(f.parent)[1:].replace('/', '-')}-t.bin" for f in files]

    first = _ssdlab(*args, tmpdir=tmpdir)
    try:
        _wait_for(
            lambda: (
                all((d / "steps" / "001-fill.partial").is_dir() for d in dirs)
                or first.poll() is not None
            ),
            "both targets' first step",
        )
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 130, err
    assert "interrupted" in err
    for d in dirs:
        assert [s["status"] for s in _manifest(d)["steps"]] == ["interrupted"]
    assert _processes_under(tmpdir) == [] and list(tmpdir.iterdir()) == []  # servers gone

    for file in files:  # the fake drives' four captures, from the first: two steps' worth
        (file.parent / "count").unlink()
    again = ssdlab_cli(*args)
    assert again.returncode == 0, again.stderr
    assert "fill on 2 of 2 targets" in again.stderr
    fleet = load_fleet(out)
    assert fleet.mode == "lockstep" and fleet.results_dirs == dirs
    assert fleet.members["status"].to_list() == ["complete"] * 2
    assert fleet.members["port"].to_list() == [None, None]
    assert fleet.aggregate.select("step", "clients").rows() == [("fill", 2), ("randread", 2)]
    for d, file in zip(dirs, files, strict=True):
        m = _manifest(d)
        assert m["label"] == f"rack {file}" and m["target"]["path"] == str(file)
        assert m["host"]["hostname"] == socket.gethostname() and m["host"]["kernel"] != ""
        assert [s["status"] for s in m["steps"]] == ["ok", "ok"]  # the stopped step run again
        for step in ("001-fill", "002-randread"):
            assert (d / "steps" / step / "fio.json").is_file()
            assert not (d / "steps" / step / "localhost").exists()  # the server's link
        assert (d / "steps" / "002-randread" / "fio_iops.1.log.localhost").is_file()
        assert (d / "steps" / "001-fill" / "smart" / "before").is_dir()
        summary = ssdlab.load(d).summary
        assert summary.filter(status="ok")["step"].to_list() == ["fill", "randread"]
        assert set((file.parent / "devices").read_text().split()) == {str(file)}
    assert parent_of_runs(out) == ("fleet", dirs)  # what 'ssdlab report ROOT' renders
    comparison = load_comparison(dirs)
    assert comparison.names == [f"rack {f}" for f in files]
    assert set(comparison.analysis.all_cells["label"]) == set(comparison.names)


def test_sequence_runs_each_target_in_turn_and_resumes(tmp_path: Path) -> None:
    """In sequence, each target is a local run of the whole suite; paths whose plain names
    would be the same get distinct directories; a complete run resumes with nothing to do,
    and its root cannot be resumed in lockstep."""
    (tmp_path / "a").mkdir()
    files = [tmp_path / "a" / "t.bin", tmp_path / "a-t.bin"]
    out = tmp_path / "out"
    suite = _suite(tmp_path, SUITE.replace("runtime_s = 2\n", ""))
    args = ["run", suite, "--out", out, "--targets-mode", "sequence"]
    args += ["--target", files[0], "--target", files[1], "--smart", "none"]
    proc = ssdlab_cli(*args)
    assert proc.returncode == 0, proc.stderr
    fleet = load_fleet(out)
    dirs = fleet.results_dirs
    assert len(set(dirs)) == 2 and all(
        d.name.startswith(str(tmp_path)[1:].replace("/", "-")) for d in dirs
    )
    assert _said(f"target 1 of 2: {files[0]} -> {dirs[0]}", proc.stderr)
    assert fleet.mode == "sequence" and fleet.aggregate.is_empty()  # not run at the same time
    started = []
    for d, file in zip(dirs, files, strict=True):
        m = _manifest(d)
        assert m["status"] == "complete" and m["target"]["path"] == str(file)
        assert [s["status"] for s in m["steps"]] == ["ok", "ok"]
        assert all((d / "steps" / s["dir"] / "fio.json").is_file() for s in m["steps"])
        started.append([s["started"] for s in m["steps"]])

    again = ssdlab_cli(*args)
    assert again.returncode == 0, again.stderr
    assert [[s["started"] for s in _manifest(d)["steps"]] for d in dirs] == started
    plan = ssdlab_cli("plan", *args[1:])
    assert plan.returncode == 0, plan.stderr
    assert _said(f"{dirs[1]} holds this run: complete, nothing left to run", plan.stdout)
    other = ssdlab_cli(*args[:4], *args[6:])  # lockstep, the default
    assert other.returncode == 1
    assert "holds a run of several targets in sequence, not of several targets in lockstep" in (
        " ".join(other.stderr.split())
    )


def test_a_failing_target_does_not_stop_the_others(tmp_path: Path) -> None:
    """In a sequence, a target whose run fails (here: another process writes its results
    directory) is reported and the next one still runs; the run ends naming the failure."""
    files = [tmp_path / "busy.bin", tmp_path / "free.bin"]
    suite = load_suite(_suite(tmp_path, SUITE.replace("runtime_s = 2\n", "")))
    busy = tmp_path / "out" / local_targets(files)[0].dir
    with (
        results_lock(busy, "another run"),
        pytest.raises(FleetFailed, match=rf"^1 of 2 targets failed \({files[0]}: {busy} is in use"),
    ):
        run_targets(suite, files, tmp_path / "out", mode="sequence")
    fleet = load_fleet(tmp_path / "out")
    assert fleet.members["error"].is_null().to_list() == [False, True]
    assert fleet.members["status"].to_list()[1] == "complete"
    assert ssdlab.load(fleet.results_dirs[1]).summary["iops"].min() > 0
    state = fleet.states()[0][2]  # what the index of its reports and 'summary' say
    assert state.startswith(f"failed: {busy} is in use")
    title = fleet_title(tmp_path / "out", fleet.results_dirs[1:])
    assert title.startswith("Fleet run out: suite multi-tiny on 2 targets (1 did not complete: ")
    assert f"{files[0]} {state}" in title
    summary = ssdlab_cli("summary", tmp_path / "out")
    assert summary.returncode == 1 and summary.stdout == ""
    assert _said(f"{busy} (no results): {files[0]}, {state}", summary.stderr)
    assert _said(f"{fleet.results_dirs[1]}: {files[1]}, complete", summary.stderr)
    assert _said(
        f"summarise one target's results with 'ssdlab summary {fleet.results_dirs[1]}'",
        summary.stderr,
    )


def test_a_target_listed_twice_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "t.bin"
    file.write_bytes(b"x")
    (tmp_path / "link").symlink_to(file)
    os.link(file, tmp_path / "hard")
    for other in (file, tmp_path / "link", tmp_path / "hard", tmp_path / "." / "t.bin"):
        with pytest.raises(InputError, match=r"^--target: .* is listed twice"):
            local_targets([file, other])
    proc = ssdlab_cli("run", "quick", "--out", tmp_path / "o", "--target", file, "--target", file)
    assert proc.returncode == 1 and _said(f"--target: {file} is listed twice", proc.stderr)
    assert not (tmp_path / "o").exists()
    one = ssdlab_cli(
        "run", "quick", "-o", tmp_path / "o", "--target", file, "--targets-mode", "sequence"
    )
    assert one.returncode == 1 and "--targets-mode applies to two or more --target" in one.stderr


def test_local_servers_are_stopped_whatever_happens(tmp_path: Path) -> None:
    """The servers of a lockstep run listen on private sockets while it runs and are gone,
    with their directory, when it ends, also by an error."""
    targets = local_targets([tmp_path / "a.bin", tmp_path / "b.bin"])
    with pytest.raises(RuntimeError), local_servers(targets) as served:
        sockets = [Path(t.socket) for t in served]
        assert sockets[0].parent.stat().st_mode & 0o777 == 0o700
        # one per server: the child a server forks for ssdlab's probe connection may linger
        assert len(set(_processes_under(sockets[0].parent))) == 2
        raise RuntimeError
    assert not sockets[0].parent.exists() and _processes_under(sockets[0].parent) == []


@needs_loop
@pytest.mark.parametrize("mode", ["lockstep", "sequence"])
def test_every_device_must_be_named(mode: str, loops: Loops, tmp_path: Path) -> None:
    """Two block devices, only the first named by --destroy-data: the run is refused, naming
    the second, before anything is written to either."""
    (first, one), (second, two) = _patterned(loops, "one"), _patterned(loops, "two")
    suite = load_suite(_suite(tmp_path))
    name = Path(first).name
    named = rf"^{second} \(.* passed the safety checks.* name each of them, comma-separated"
    with pytest.raises(SsdlabError, match=named):
        run_targets(
            suite,
            [Path(first), Path(second)],
            tmp_path / "out",
            mode=mode,  # type: ignore[arg-type]
            destroy_data=name,
        )
    assert (_digest(first), _digest(second)) == (one, two)


def test_any_path_a_single_target_takes_and_no_other_run_in_out(tmp_path: Path) -> None:
    """Targets with a blank, a non-ASCII letter and a ``:`` run in lockstep as a single
    ``--target`` runs them (``:`` escaped in the job file), each results directory a safe
    name. The root then refuses a single run and a member's directory (a single run) refuses
    a run of several targets or hosts, by a run and by a plan, with nothing written; a plan
    refuses a target fio cannot take before printing anything."""
    files = [tmp_path / "a b.bin", tmp_path / "ü:x.bin"]
    out = tmp_path / "out"
    suite = _suite(tmp_path, ONE_STEP)
    args = ["run", suite, "--out", out, "--smart", "none"]
    proc = ssdlab_cli(*args, "--target", files[0], "--target", files[1])
    assert proc.returncode == 0, proc.stderr
    dirs = load_fleet(out).results_dirs
    assert [d.name for d in dirs] == [local.dir for local in local_targets(files)]
    assert all(d.name.isascii() and " " not in d.name and ":" not in d.name for d in dirs)
    for d, file in zip(dirs, files, strict=True):
        assert _manifest(d)["status"] == "complete" and _manifest(d)["target"]["path"] == str(file)
    job = (dirs[1] / "steps" / "001-fill" / "job.fio").read_text()
    assert f"filename={tmp_path}/ü\\:x.bin\n" in job

    single = tmp_path / "s.bin"
    for command in ("run", "plan"):
        proc = ssdlab_cli(command, *args[1:], "--target", single)
        assert proc.returncode == 1
        assert _said(
            f"--out {out} holds a run of several targets or hosts (fleet.json", proc.stderr
        )
    assert not (out / "manifest.json").exists() and not (out / "steps").exists()
    assert not single.exists()
    member = [suite, "--out", dirs[0], "--smart", "none"]
    for command, where in (
        ("run", ["--target", tmp_path / "c.bin", "--target", single]),
        ("plan", ["--target", tmp_path / "c.bin", "--target", single]),
        ("run", ["--hosts", "localhost"]),
    ):
        proc = ssdlab_cli(command, *member, *where)
        assert proc.returncode == 1
        assert _said(
            f"--out {dirs[0]} holds a single run of suite 'multi-tiny' (manifest.json), not a "
            "run of several targets or hosts",
            proc.stderr,
        )
    assert not (dirs[0] / "fleet.json").exists()

    for bad, said in ((tmp_path / "a$b.bin", "it holds '$'"), (files[0], "is listed twice")):
        proc = ssdlab_cli("plan", *args[1:], "--target", files[0], "--target", bad)
        assert proc.returncode == 1 and proc.stdout == "" and _said(said, proc.stderr)


def test_servers_left_by_a_killed_run_are_removed_by_the_next(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL) leaves its servers' directory, listed in its root; the
    next run of that root removes it, and keeps one a process still works in."""
    targets = local_targets([tmp_path / "a.bin"])
    root, tmpdir = tmp_path / "root", tmp_path / "tmp"
    root.mkdir()
    tmpdir.mkdir()
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal, sys\n"
            "from pathlib import Path\n"
            "from ssdlab.fleet.hosts import local_targets\n"
            "from ssdlab.fleet.local import local_servers\n"
            "with local_servers(local_targets(sys.argv[2:]), Path(sys.argv[1])):\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n",
            root,
            tmp_path / "a.bin",
        ],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    (left,) = tmpdir.iterdir()
    assert (root / SERVERS_RECORD).read_text() == f"{left}\n"
    _wait_for(lambda: _processes_under(left) == [], "the killed run's server to die")
    busy = tmpdir / "ssdlab-fio-busy"
    busy.mkdir()
    (root / SERVERS_RECORD).write_text(f"{left}\n{busy}\n")
    worker = subprocess.Popen(["sleep", "60"], cwd=busy)
    try:
        with local_servers(targets, root) as served:
            assert not left.exists() and busy.is_dir()
            now = str(Path(served[0].socket).parent)
            assert (root / SERVERS_RECORD).read_text() == f"{busy}\n{now}\n"
    finally:
        worker.kill()
        worker.wait()
    assert (root / SERVERS_RECORD).read_text() == f"{busy}\n"
    with local_servers(targets, root):
        assert not busy.exists()
    assert not (root / SERVERS_RECORD).exists()


SIZED = """
name = "multi-sized"

[[steps]]
name = "read"
rw = "randread"
bs = "4k"
size = "4m"
runtime_s = 1
ioengine = "null"

[[steps]]
name = "fill"
rw = "write"
bs = "128k"
size = "100%"
loops = 2
runtime_s = 86400
ioengine = "psync"
"""


def test_lockstep_plans_a_fill_from_its_bytes_not_its_time_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lockstep bar plans a size-based step as a local run does (its bytes at the
    members' class rate, not its 24-hour cap) and, both targets being one size, gives it its
    bytes; the bar ends complete."""
    shown: list[RunDisplay] = []
    starts: list[tuple[str, float, int | None]] = []

    class Recorded(RunDisplay):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            shown.append(self)

        def start_step(self, label, planned_s, done_s=None, planned_bytes=None) -> None:
            super().start_step(label, planned_s, done_s, planned_bytes)
            starts.append((label, planned_s, planned_bytes))

    monkeypatch.setattr(ssdlab.fleet.run, "RunDisplay", Recorded)
    size = 32 * 2**20  # above the smallest file a run lays out
    files = [tmp_path / "a.bin", tmp_path / "b.bin"]
    run_targets(load_suite(_suite(tmp_path, SIZED)), files, tmp_path / "out", target_size=size)
    (display,) = shown
    rates = Rates(target_class(TargetInfo(path=str(files[0]), kind="file")), size)
    fill = rates.step_time(load_suite(_suite(tmp_path, SIZED)).steps[1])
    assert fill.planned_bytes == 2 * size and fill.seconds < 60
    assert starts == [
        ("read on 2 of 2 targets", pytest.approx(1 + STEP_START_S), None),
        ("fill on 2 of 2 targets", pytest.approx(fill.seconds), 2 * size),
    ]
    assert display.total_s == pytest.approx(1 + STEP_START_S + fill.seconds)
    assert display.done_s == pytest.approx(display.total_s)
