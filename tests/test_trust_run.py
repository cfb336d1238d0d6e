"""A run's results can be trusted: no silent zero-I/O step, the target it claims, one writer,
a run that outlives its terminal, a full disk that loses nothing, a manifest that never
breaks the reader. Real fio on files, loop devices and small tmpfs mounts the tests create."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, ssdlab_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssdlab
from ssdlab import runner
from ssdlab.errors import InputError, SsdlabError
from ssdlab.execute import no_io_error
from ssdlab.io import read_fio_json
from ssdlab.lock import results_lock
from ssdlab.manifest import Manifest
from ssdlab.runner import RunHook, run_suite, step_headline
from ssdlab.suite import Suite, load_suite
from ssdlab.units import parse_size

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount, chattr)")


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The error lines of a finished command; never a traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def write_suite(directory: Path, steps: str, defaults: str = "", name: str = "t") -> Path:
    path = directory / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\n[params]\nrt = 1\n'
        f'[defaults]\nsize = "16m"\nioengine = "psync"\nruntime_s = "@rt"\n{defaults}\n{steps}'
    )
    return path


TWO_STEPS = (
    '[[steps]]\nname = "first"\nrw = "randread"\n[[steps]]\nname = "second"\nrw = "randwrite"\n'
)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mounts a tmpfs of the given size under tmp_path; unmounted after the test."""
    mounts: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"fs{len(mounts)}"
        where.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", where], check=True)
        mounts.append(where)
        return where

    try:
        yield mount
    finally:
        for where in reversed(mounts):
            subprocess.run(["umount", "-l", where], check=False)


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished one-step run."""
    base = tmp_path_factory.mktemp("short")
    suite = write_suite(base, '[[steps]]\nname = "only"\nrw = "randread"\n')
    out = base / "out"
    proc = ssdlab_cli("run", suite, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def start(*args: str | Path, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ssdlab", *map(str, args)],
        text=True,
        **popen,  # type: ignore[call-overload]
    )


#: what a step's fio job must have read or written before a test signals the run: far more
#: than a job reads while it sets up (3 bytes with fio 3.33), a few ms of a step's I/O
MEASURED_BYTES = 1 << 20


def _fio_io_bytes(directory: Path) -> int:
    """Bytes read and written so far by the fio jobs working in ``directory`` (ssdlab starts
    fio in the step's), as the kernel counts them for each job process; fio's main process,
    which reads its job file and writes status lines before any I/O, is left out."""
    fio: dict[str, Path] = {}
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "comm").read_text().strip() == "fio" and (proc / "cwd").resolve() == (
                directory.resolve()
            ):
                fio[proc.name] = proc
        except OSError:
            continue
    done = 0
    for proc in fio.values():
        try:
            parent = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            if parent in fio:  # a job, forked by the fio working there
                counts = dict(line.split(": ") for line in (proc / "io").read_text().splitlines())
                done += int(counts["rchar"]) + int(counts["wchar"])
        except OSError:
            continue
    return done


def wait_measuring(out: Path, step: str, proc: subprocess.Popen[str]) -> None:
    """Until fio's jobs of ``step`` have done I/O (:data:`MEASURED_BYTES`), whatever the
    machine's load. The manifest says a step runs before fio starts, and fio takes a while
    (0.3 s on an idle machine) to start its jobs: a signal before then stops it without a
    result (fio 3.33 dies without one in its first ~150 ms) or with no I/O in it."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            dirs = [s["dir"] for s in manifest(out)["steps"] if s["name"] == step]
        except (FileNotFoundError, json.JSONDecodeError):
            dirs = []
        if dirs and _fio_io_bytes(out / "steps" / f"{dirs[0]}.partial") >= MEASURED_BYTES:
            return
        time.sleep(0.05)
    said = proc.communicate() if proc.poll() is not None else "still running"
    raise AssertionError(f"step {step} never did I/O (exit {proc.returncode}: {said})")


# 1. a step that did no I/O


@needs_loop
def _past_the_end(suite: Suite) -> Suite:
    """The suite with its one step's offset at the very end of the target, where fio exits
    0 having done no I/O (suite files cannot say 100 %: made here as a stand-in for any run
    fio ends that way, such as its own "appears mounted ... Aborting")."""
    (step,) = suite.steps
    return suite.model_copy(update={"steps": [step.model_copy(update={"offset": "100%"})]})


def test_a_step_that_did_no_io_fails_instead_of_recording_zero_iops(
    tmp_path: Path, loops: Loops, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = loops.blank()
    # the stand-in reaches past the target, which check_fits refuses before fio runs
    monkeypatch.setattr(runner, "check_fits", lambda suite, target: None)
    suite = load_suite(
        write_suite(tmp_path, '[[steps]]\nname = "past-end"\nrw = "randread"\nsize = "1m"\n')
    )
    out = tmp_path / "out"
    with pytest.raises(SsdlabError, match=r"^step 'past-end' failed: fio did no I/O$"):
        run_suite(_past_the_end(suite), out, target=Path(device))
    m = manifest(out)
    assert m["status"] == "failed" and m["steps"][0]["status"] == "failed"
    assert m["steps"][0]["error"] == "fio did no I/O"


# 2. --scale applied once; a step must fit its target


def test_scale_sizes_the_temporary_target_once(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "big"\nrw = "read"\nsize = "2560m"\n')
    out = tmp_path / "out"
    proc = ssdlab_cli("run", suite, "--out", out, "--scale", "0.01")
    assert proc.returncode == 0, proc.stderr
    m = manifest(out)
    job = (out / "steps" / "001-big" / "job.fio").read_text()
    size = parse_size(next(x for x in job.splitlines() if x.startswith("size=")).split("=")[1])
    assert size == int(2560 * 2**20 * 0.01) == m["target"]["size_bytes"]
    assert m["scale"] == 0.01


def test_a_step_larger_than_its_file_target_is_refused_before_any_step(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, TWO_STEPS, name="small")
    suite.write_text(suite.read_text().replace('name = "second"', 'name = "second"\nsize = "32m"'))
    out = tmp_path / "out"
    proc = ssdlab_cli("run", suite, "--out", out, "--target-size", "16m")
    assert proc.returncode == 1
    [line] = errors(proc)
    assert "step 'second' needs 33,554,432 bytes" in line and "holds 16,777,216" in line
    assert not (out / "steps").exists() and not (out / "target.tmp").exists()
    assert not (out / "manifest.json").exists()


# 3./4. a resumed run is the same run; overrides and opt-ins are recorded


def test_resume_refuses_another_target_label_overrides_or_scale(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, TWO_STEPS)
    first, other = tmp_path / "first.img", tmp_path / "other.img"
    out = tmp_path / "out"
    base = ("run", suite, "--out", out)
    proc = ssdlab_cli(*base, "--target", first, "--label", "A", "--set", "rt=1",
                      "--allow-fio-option", "allow_mounted_write")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    m = manifest(out)
    assert m["params"] == {"rt": "1"} and m["allowed_fio_options"] == ["allow_mounted_write"]
    before = (out / "manifest.json").read_bytes()

    same = ("--target", first, "--set", "rt=1", "--allow-fio-option", "allow_mounted_write")
    again = ssdlab_cli(*base, *same)  # the same run, no label given: nothing to do
    assert again.returncode == 0 and errors(again) == []
    before = (out / "manifest.json").read_bytes()
    refused = {
        "target": ("--target", other, "--set", "rt=1", "--allow-fio-option",
                   "allow_mounted_write"),
        "label": (*same, "--label", "B"),
        "set": ("--target", first, "--set", "rt=2", "--allow-fio-option", "allow_mounted_write"),
        "scale": (*same, "--scale", "0.5"),
        "opt-in": ("--target", first, "--set", "rt=1"),
    }  # fmt: skip
    expected = {
        "target": [f"target {first} → {other}"],
        "label": ["label 'A' → 'B'"],
        "set": ["--set rt=1 → rt=2"],
        "scale": ["--scale 1 → 0.5"],
        "opt-in": ["--allow-fio-option allow_mounted_write → none"],
    }
    for what, args in refused.items():
        proc = ssdlab_cli(*base, *args)
        assert proc.returncode == 1, what
        [line] = errors(proc)
        assert line.startswith(f"error: --out {out} holds a run of target {first} ("), line
        assert all(e in line for e in expected[what]), (what, line)
        assert (out / "manifest.json").read_bytes() == before
    assert not other.exists()  # refused before the target was created
    both = errors(ssdlab_cli(*base, "--target", other, "--label", "B", "--set", "rt=1"))
    assert all(e in both[0] for e in ("label 'A' → 'B'", f"{first} → {other}"))


@needs_loop
def test_resume_refuses_another_block_device(tmp_path: Path, loops: Loops) -> None:
    one, two = loops.blank(), loops.blank("--sizelimit", str(32 * 2**20))
    suite = write_suite(tmp_path, '[[steps]]\nname = "read"\nrw = "randread"\n')
    out = tmp_path / "out"
    assert ssdlab_cli("run", suite, "--out", out, "--target", one).returncode == 0
    before = (out / "manifest.json").read_bytes()
    proc = ssdlab_cli("run", suite, "--out", out, "--target", two)
    assert proc.returncode == 1
    [line] = errors(proc)
    assert f"holds a run of target {one} (serial -, model -, 67108864 bytes)" in line
    assert f"this command targets {two}" in line and f"target {one} → {two}" in line
    assert "target size 67108864 → 33554432 bytes" in line
    assert (out / "manifest.json").read_bytes() == before


# 5. one writer per results directory


def test_a_second_run_into_the_same_out_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "long"\nrw = "randread"\n', "", "long")
    out = tmp_path / "out"
    first = start("run", suite, "--out", out, "--set", "rt=600", stderr=subprocess.PIPE)
    try:
        wait_measuring(out, "long", first)
        before = (out / "manifest.json").read_bytes()
        second = ssdlab_cli("run", suite, "--out", out, "--set", "rt=600")
        assert second.returncode == 1
        [line] = errors(second)
        assert f"{out} is in use by another ssdlab process (ssdlab run, pid {first.pid})" in line
        act = ssdlab_cli("act", "run", "--load", "1", "--out", out, "--duration", "2")
        assert act.returncode == 1 and "is in use by another ssdlab process" in errors(act)[0]
        assert (out / "manifest.json").read_bytes() == before
        assert not (out / "act.json").exists()
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    assert first.returncode == 130 and manifest(out)["status"] == "interrupted"


# 6. closed stdout/stderr, lost terminal


def closed_pipe() -> int:
    """The write end of a pipe whose reader is already gone (every write: EPIPE)."""
    read, write = os.pipe()
    os.close(read)
    return write


def test_a_run_whose_output_pipe_is_closed_completes(tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path, TWO_STEPS), tmp_path / "out"
    stdout, stderr = closed_pipe(), closed_pipe()
    try:
        proc = start("run", suite, "--out", out, stdout=stdout, stderr=stderr)
    finally:
        os.close(stdout)
        os.close(stderr)
    assert proc.wait(timeout=300) == 0
    m = manifest(out)
    assert m["status"] == "complete" and [s["status"] for s in m["steps"]] == ["ok", "ok"]


@pytest.mark.parametrize("format", ["table", "csv", "json", "parquet"])
def test_summary_into_a_closed_pipe_ends_quietly(short_run: Path, format: str) -> None:
    stdout = closed_pipe()
    try:
        proc = start("summary", short_run, "-f", format, stdout=stdout, stderr=subprocess.PIPE)
    finally:
        os.close(stdout)
    _, stderr = proc.communicate(timeout=120)
    assert stderr == "" and proc.returncode == 1


def test_a_run_survives_a_hangup_and_a_lost_terminal(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "long"\nrw = "randread"\n', "", "long")
    out = tmp_path / "out"
    master, slave = pty.openpty()
    proc = start("run", suite, "--out", out, "--set", "rt=600", stdout=slave, stderr=slave,
                 start_new_session=True)  # fmt: skip
    os.close(slave)
    stop = threading.Event()

    def read_terminal() -> None:  # as a terminal does, until it goes away
        while not stop.is_set():
            if select.select([master], [], [], 0.1)[0]:
                os.read(master, 65536)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    try:
        wait_measuring(out, "long", proc)
    finally:
        stop.set()
        reader.join()
        os.close(master)  # the terminal is gone: writes to it fail with EIO
    os.killpg(proc.pid, signal.SIGHUP)  # as a terminal hangup does, to ssdlab and fio
    proc.send_signal(signal.SIGINT)  # delivered after SIGHUP (lower signals first)
    assert proc.wait(timeout=120) == 130  # it was still alive to stop cleanly
    m = manifest(out)
    assert m["status"] == "interrupted" and m["steps"][0]["status"] == "interrupted"
    assert ssdlab.load(out).summary["io_bytes"][0] > 0  # fio, too, outlived the hangup


def test_sigterm_between_fio_runs_stops_the_run_as_ctrl_c_does(tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path, TWO_STEPS), tmp_path / "out"
    kill = "sh -c 'kill -TERM $PPID'"  # run by ssdlab itself before the first step's fio
    proc = ssdlab_cli("run", suite, "--out", out, "--smart", kill)
    assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in proc.stderr
    m = manifest(out)
    assert m["status"] == "interrupted" and m["steps"][0]["status"] == "failed"
    assert not (out / "target.tmp").exists()


class Crash(RunHook):
    def before_step(self, step_dir: Path, record: object) -> None:
        raise RuntimeError("a bug")


def test_a_run_that_dies_of_a_bug_never_stays_running(tmp_path: Path) -> None:
    suite, out = load_suite(write_suite(tmp_path, TWO_STEPS)), tmp_path / "out"
    with pytest.raises(RuntimeError):
        run_suite(suite, out, hooks=[Crash()])
    m = manifest(out)
    assert m["status"] == "failed" and m["steps"][0]["status"] == "failed"
    assert "a bug" in m["steps"][0]["error"] and not (out / "target.tmp").exists()
    assert not (out / ".ssdlab.reserve").exists()


# 7. a full file system


@needs_root
def test_no_space_for_the_temporary_target_is_one_line_and_removes_it(
    small_fs: Callable[[str], Path],
) -> None:
    fs = small_fs("8m")
    out = fs / "out"
    proc = ssdlab_cli("run", write_suite(fs, TWO_STEPS), "--out", out)
    assert proc.returncode == 1
    assert errors(proc) == [
        f"error: no space left on {fs} while writing {out / 'target.tmp'}; removed the partial file"
    ]
    assert not out.exists()  # it made the directory and wrote nothing to keep: gone again


def test_ctrl_c_while_the_target_file_is_written_removes_it_and_says_so(tmp_path: Path) -> None:
    """Ctrl-C while ssdlab wrote an 8 GiB temporary target left 594 MB behind, silently."""
    out = tmp_path / "out"
    proc = start(
        "run", write_suite(tmp_path, TWO_STEPS), "--out", out, "--target-size", "8g",
        stderr=subprocess.PIPE,
    )  # fmt: skip
    target = out / "target.tmp"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if target.exists() and target.stat().st_size > 0:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert f"interrupted while writing the target file {target}; removed" in stderr
    assert "Traceback" not in stderr and not out.exists()


@needs_root
def test_a_results_disk_without_room_for_the_reserve_runs_nothing(
    small_fs: Callable[[str], Path], tmp_path: Path
) -> None:
    """With 56 KB free the reserve could not be made and the manifest stayed `running`."""
    fs = small_fs("1m")
    (fs / "filler").write_bytes(bytes(1024 * 1024 - 56 * 1024))
    out = fs / "out"
    suite = write_suite(tmp_path, TWO_STEPS)
    proc = ssdlab_cli("run", suite, "--out", out, "--target", tmp_path / "t.img")
    assert proc.returncode == 1
    [line] = errors(proc)
    assert f"no space left on {fs} while writing {out / '.ssdlab.reserve'}" in line
    assert "1m in reserve" in line
    assert not out.exists() and not (tmp_path / "t.img").exists()


def test_resume_names_another_repeat_and_the_target_once(short_run: Path) -> None:
    """Resuming with another --repeat named the temporary target twice, not the --repeat."""
    before = (short_run / "manifest.json").read_bytes()
    proc = ssdlab_cli("run", short_run.parent / "t.toml", "--out", short_run, "--repeat", "2")
    assert proc.returncode == 1
    [line] = errors(proc)
    assert line.endswith(": --repeat 1 → 2; use another --out to start a new run"), line
    assert line.count("temporary file") == 1
    assert (short_run / "manifest.json").read_bytes() == before


@needs_root
def test_no_space_during_a_step_fails_it_and_keeps_earlier_steps(
    small_fs: Callable[[str], Path],
) -> None:
    fs = small_fs("12m")
    target, out = fs / "sparse.img", fs / "out"
    with target.open("wb") as fh:
        fh.truncate(64 * 2**20)  # more than the file system holds: writes fill it up
    suite = write_suite(
        fs, '[[steps]]\nname = "first"\nrw = "randread"\nsize = "1m"\n'
        '[[steps]]\nname = "fill"\nrw = "write"\nsize = "32m"\n'
    )  # fmt: skip
    proc = ssdlab_cli("run", suite, "--out", out, "--target", target)
    assert proc.returncode == 1
    assert errors(proc) == [
        f"error: step 'fill' failed: no space left on {fs} while writing {target}"
    ]
    m = manifest(out)
    assert m["status"] == "failed" and [s["status"] for s in m["steps"]] == ["ok", "failed"]
    assert ssdlab.load(out).summary["step"].to_list() == ["first"]


@needs_root
def test_a_manifest_that_cannot_be_saved_is_one_line(small_fs: Callable[[str], Path]) -> None:
    fs = small_fs("1m")
    with (fs / "filler").open("wb", buffering=0) as fh, pytest.raises(OSError):
        while True:
            fh.write(b"x" * 4096)
    with pytest.raises(SsdlabError) as caught:
        Manifest(run_id="r", label="l", suite="s").save(fs)
    assert str(caught.value) == f"no space left on {fs} while writing {fs / 'manifest.json'}"
    assert sorted(p.name for p in fs.iterdir()) == ["filler"]


# 8. manifests that cannot be read, results directories that cannot be written


def test_unreadable_manifests_are_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(b'{"run_id": "\xff\xfe"}')
    with pytest.raises(InputError, match=f"^{path}: unreadable manifest: not UTF-8"):
        Manifest.load(tmp_path)
    path.write_text("[" * 1000 + "]" * 1000)
    with pytest.raises(InputError, match=f"^{path}: "):
        Manifest.load(tmp_path)
    path.write_text('{"a": ' * 1000 + "1" + "}" * 1000)
    with pytest.raises(InputError, match=f"^{path}: "):
        Manifest.load(tmp_path)
    path.write_text('{"scale": ' + "9" * 5000 + "}")
    with pytest.raises(InputError, match=f"^{path}: unreadable manifest: Exceeds the limit"):
        Manifest.load(tmp_path)


def test_a_fio_result_without_jobs_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "fio.json").write_text('{"fio version": "fio-3.33", "jobs": []}')
    fio = read_fio_json(tmp_path / "fio.json")
    assert no_io_error(tmp_path, fio.jobs, []) is None  # headline says what is wrong
    with pytest.raises(InputError, match=r"fio\.json: holds no job results"):
        step_headline(tmp_path, fio)


@needs_root
def test_an_unwritable_out_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    subprocess.run(["chattr", "+i", locked], check=True)  # refused even to root: EPERM
    try:
        proc = ssdlab_cli("run", write_suite(tmp_path, TWO_STEPS), "--out", locked / "out")
    finally:
        subprocess.run(["chattr", "-i", locked], check=True)
    assert proc.returncode == 1
    assert errors(proc) == [f"error: {locked / 'out'}: cannot write: Operation not permitted"]


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every key path into a JSON value."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_mutated_manifest_loads_or_is_refused_with_input_error(
    short_run: Path, tmp_path: Path, data: st.DataObject
) -> None:
    raw = (short_run / "manifest.json").read_bytes()
    how = data.draw(st.sampled_from(["flip", "truncate", "retype"]))
    if how == "flip":
        changed = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 8))):
            changed[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        raw = bytes(changed)
    elif how == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
    else:
        doc = json.loads(raw)
        path = data.draw(st.sampled_from(_paths(doc)))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = data.draw(JSON_VALUES)
        raw = json.dumps(doc).encode()
    (tmp_path / "manifest.json").write_bytes(raw)
    try:
        Manifest.load(tmp_path)
    except InputError as exc:
        assert "\n" not in str(exc) and str(tmp_path) in str(exc)


def test_a_missing_device_is_never_created_as_a_file(tmp_path: Path) -> None:
    """A typo in a device name (/dev/nvme9n9) must not become a file written in /dev."""
    missing = Path("/dev/ssdlab-test-no-such-device")
    assert not missing.exists()
    proc = ssdlab_cli(
        "run", "quick", "--out", tmp_path / "o", "--target", missing, "--scale", "0.01"
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no such device" in proc.stderr and not missing.exists()


def _user_file(path: Path, size: int) -> str:
    """A user's file of random bytes; returns its digest."""
    path.write_bytes(os.urandom(size))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_read_only_run_leaves_the_users_file_as_it_was(tmp_path: Path) -> None:
    """Neither ssdlab (growing the file to the suite's size) nor fio (laying it out) writes a
    read-only run's file: shares are of the file as it is."""
    target = tmp_path / "user.dat"
    digest = _user_file(target, 4 << 20)
    suite = write_suite(tmp_path, '[[steps]]\nname = "r"\nrw = "randread"\nsize = "50%"\n')
    proc = ssdlab_cli("run", suite, "--out", tmp_path / "o", "--target", target)
    assert proc.returncode == 0, proc.stderr
    assert manifest(tmp_path / "o")["target"]["size_bytes"] == 4 << 20
    assert hashlib.sha256(target.read_bytes()).hexdigest() == digest


def test_fio_runs_read_steps_read_only(tmp_path: Path) -> None:
    """offset_increment moves a job past the end of the file, which fio would lay out (grow):
    with --readonly it refuses, and the file stays as it was."""
    target = tmp_path / "user.dat"
    digest = _user_file(target, 16 << 20)
    step = '[[steps]]\nname = "r"\nrw = "read"\nnumjobs = 2\nsize = "8m"\n'
    step += 'options = { offset_increment = "64m" }\n'
    proc = ssdlab_cli(
        "run", write_suite(tmp_path, step), "--out", tmp_path / "o", "--target", target
    )
    assert proc.returncode == 1  # refused before fio runs; fio's --readonly would refuse too
    assert "needs 75,497,472 bytes of the target (offset + offset_increment" in " ".join(
        errors(proc)
    )
    assert target.stat().st_size == 16 << 20
    assert hashlib.sha256(target.read_bytes()).hexdigest() == digest


def test_a_dangling_link_into_dev_is_never_created(tmp_path: Path) -> None:
    missing = Path("/dev/ssdlab-test-dangling")
    link = tmp_path / "link.dat"
    link.symlink_to(missing)
    proc = ssdlab_cli("run", "quick", "--out", tmp_path / "o", "--target", link, "--scale", "0.01")
    assert proc.returncode == 1 and "no such device" in " ".join(errors(proc))
    assert not missing.exists()


def test_the_lock_never_follows_a_link(tmp_path: Path) -> None:
    """A lock file planted as a link must not have ssdlab truncate the file it points at."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".ssdlab.lock").symlink_to(victim)
    with (
        pytest.raises(SsdlabError, match=r"\.ssdlab\.lock: cannot write"),
        results_lock(out, "run"),
    ):
        pass
    assert victim.read_text() == "keep"


def test_a_target_fio_cannot_name_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run$HOME"
    proc = ssdlab_cli("run", write_suite(tmp_path, TWO_STEPS), "--out", out)
    assert proc.returncode == 1 and "cannot be written to a fio job file" in errors(proc)[0]
    assert not (out / "target.tmp").exists() and not (out / "manifest.json").exists()
