"""``ssdlab plan`` / ``ssdlab run --dry-run``: the steps, their planned time and the target
with its size, every job file checked with ``fio --parse-only``, nothing written; a job fio
refuses fails the real run before its first step; ``suites show`` validates a file."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from conftest import TINY_SUITE, ssdlab_cli

from ssdlab.estimate import DEFAULTS, RUN_START_S, STEP_START_S
from ssdlab.runner import check_job_files, suite_jobs
from ssdlab.suite import load_suite
from ssdlab.tables import format_bytes


def hms(seconds: float) -> str:
    """A duration as ``ssdlab plan`` prints it (``0:00:06``)."""
    return str(timedelta(seconds=round(seconds)))


#: a step option ssdlab's policy lets through (it only shapes the workload) but fio refuses
BAD = TINY_SUITE + '\noptions = { rate_iops = "abc" }\n'

ROUNDS = """
name = "rounds"

[defaults]
runtime_s = 1
size = "8m"
ioengine = "null"

[[steps]]
name = "fill"
rw = "write"
bs = "64k"

[[steps]]
name = "mix"
rounds = { max = 4, window = 2, track = "rw70" }

[[steps.steps]]
name = "rw70"
rw = "randrw"
rwmixread = 70
"""


def test_plan_prints_steps_time_and_target_and_writes_nothing(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY_SUITE)
    out, target = tmp_path / "out", tmp_path / "t.bin"
    proc = ssdlab_cli("plan", suite, "--out", out, "--target", target, "--target-size", "32m")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "randread-4k-2jobs" in text and "randrw70-8k-qd4" in text
    # 2 x (2 s + 0.5 s ramp + 0.4 s start) and the run's own start
    assert f"2 fio runs, planned {hms(2 * (2 + 0.5 + STEP_START_S) + RUN_START_S)}" in text
    assert f"target: {target} (file): 33,554,432 bytes" in text
    assert "fio --parse-only: 2 job files ok (fio-" in text
    assert not out.exists() and not target.exists()  # not created, not touched

    dry = ssdlab_cli("run", suite, "--out", out, "--dry-run")  # the same, as run's option
    assert dry.returncode == 0, dry.stderr
    assert "a temporary file of" in dry.stdout and "fio --parse-only: 2 job files ok" in dry.stdout
    assert not out.exists()


def test_plan_counts_rounds_up_to_their_max(tmp_path: Path) -> None:
    suite = tmp_path / "rounds.toml"
    suite.write_text(ROUNDS)
    proc = ssdlab_cli("plan", suite, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    # fill + 4 rounds of 1 step at most; 1 + 2 rounds when steady after its window; each
    # step 1 s and 0.4 s to start, and the run's own start
    most, steady = (RUN_START_S + n * (1 + STEP_START_S) for n in (5, 3))
    assert f"up to 5 fio runs, planned {hms(most)} at most; {hms(steady)} if every round" in (
        proc.stdout
    )
    assert "mix: rounds of these 1 step until rw70 iops is steady (window 2), up to 4" in (
        proc.stdout
    )


def test_existing_file_target_is_described_and_left_alone(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY_SUITE)
    target = tmp_path / "t.bin"
    target.write_bytes(b"x" * 4096)
    before = target.stat()
    proc = ssdlab_cli("run", suite, "--out", tmp_path / "out", "--target", target, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert "16,777,216 bytes (16 MiB) once created or grown by the run" in proc.stdout


def test_a_job_fio_refuses_fails_the_plan_and_the_run_before_any_step(tmp_path: Path) -> None:
    suite = tmp_path / "bad.toml"
    suite.write_text(BAD)
    out, target = tmp_path / "out", tmp_path / "t.bin"
    plan = ssdlab_cli("plan", suite, "--out", out)
    assert plan.returncode == 1
    errors = [line for line in plan.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: step 'randrw70-8k-qd4': fio --parse-only refuses its job file: fio: failed "
        "parsing rate_iops=abc"
    ]
    assert "randread-4k-2jobs" in plan.stdout  # the plan was printed first
    run = ssdlab_cli("run", suite, "--out", out, "--target", target)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("error:")]
    assert "step 'randrw70-8k-qd4'" in line and "rate_iops=abc" in line
    assert not target.exists() and not (out / "steps").exists()  # nothing ran


def test_check_job_files_names_every_step_fio_refuses(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BAD.replace("[[steps]]", '[[steps]]\noptions = { randrepeat = "maybe" }', 1))
    suite = load_suite(path)
    target = str(tmp_path / "t.bin")
    problems = check_job_files(suite_jobs(suite, target))
    assert [p.split(":")[0] for p in problems] == [
        "step 'randread-4k-2jobs'",
        "step 'randrw70-8k-qd4'",
    ]
    assert "randrepeat=maybe" in problems[0] and "rate_iops=abc" in problems[1]
    assert not Path(target).exists()
    rounds = tmp_path / "rounds.toml"
    rounds.write_text(ROUNDS)
    names = [name for name, _ in suite_jobs(load_suite(rounds), target)]
    assert names == ["fill", "mix-r01-rw70"]
    assert check_job_files(suite_jobs(load_suite(rounds), target)) == []


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('name = "bad"\n[[steps]]\nname = "x"\nrw = "randwrit"\nruntime_s = 1\n', "steps.0.rw"),
        ('name = "bad"\n[[steps]\n', "not valid TOML"),
        ('name = "bad"\n[[steps]]\nname = "x"\nrw = "read"\n', "needs runtime_s"),
    ],
)
def test_suites_show_validates_a_file_in_one_line(tmp_path: Path, text: str, says: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    proc = ssdlab_cli("suites", "show", bad)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: {bad}")
    assert says in proc.stderr
    good = ssdlab_cli("suites", "show", "quick")
    assert good.returncode == 0 and good.stdout.startswith("name = ")


def test_plan_of_a_fleet_lists_each_host_and_contacts_none(tmp_path: Path) -> None:
    out = tmp_path / "rack"
    hosts = ("--hosts", "lab1=/dev/nvme1n1,lab2:9000")
    refused = ssdlab_cli("plan", "quick", "--out", out, *hosts)  # as the run refuses it
    assert refused.returncode == 1 and "lab1:/dev/nvme1n1" in refused.stderr
    assert "--destroy-data" in refused.stderr
    proc = ssdlab_cli("plan", "quick", "--out", out, *hosts, "--destroy-data", "lab1:/dev/nvme1n1")
    assert proc.returncode == 0, proc.stderr
    assert "on 2 hosts (fio servers are not contacted by a plan):" in proc.stdout
    assert f"  lab1:8765 /dev/nvme1n1 -> {out / 'lab1-8765-dev-nvme1n1'}" in proc.stdout
    assert "fio --parse-only: 7 job files ok" in proc.stdout and not out.exists()


SIZED = """
name = "sized"

[[steps]]
name = "fill-seq-write-128k"
rw = "write"
bs = "128k"
loops = 3
runtime_s = 86400
ioengine = "null"
"""


def test_plan_says_which_steps_are_estimated_from_their_bytes(tmp_path: Path) -> None:
    suite = tmp_path / "sized.toml"
    suite.write_text(SIZED)
    proc = ssdlab_cli("plan", suite, "--out", tmp_path / "out", "--target-size", "32MiB")
    assert proc.returncode == 0, proc.stderr
    # 3 x 32 MiB at the default top MB/s of a file on disk, not the 24-hour cap
    rate = DEFAULTS["file"].bw_bytes_s
    seconds = RUN_START_S + STEP_START_S + 3 * 32 * 2**20 / rate
    assert f"1 fio run, planned {hms(seconds)}, 1 size-based step estimated from its bytes" in (
        proc.stdout
    )
    assert f"101 MB at {format_bytes(rate)}/s, default for a file on disk" in proc.stdout
    assert "24:00:00" not in proc.stdout
