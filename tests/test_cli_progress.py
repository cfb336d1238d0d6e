"""What a run shows while it goes: the suite bar plans round blocks at their most rounds and
completes when a block is steady sooner, "round N of up to M", a resumed run's bar starts at
the step it resumes with one line saying so, a fleet's steps show where they are in the suite
and how many hosts still run them, and an interrupted step says so once."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from conftest import TINY_SUITE
from rich.console import Console

import ssdlab.progress
import ssdlab.runner
from ssdlab.estimate import STEP_START_S, Rates, suite_seconds
from ssdlab.execute import StepExecutor
from ssdlab.fio import FioOutcome, FioStatus, parse_status_line
from ssdlab.fleet.gate import Gate, SuiteOrder
from ssdlab.io.fio_json import read_fio_json
from ssdlab.manifest import Manifest, StepRecord, TargetInfo
from ssdlab.progress import RunDisplay
from ssdlab.runner import RunInterrupted, SuiteSteps, run_suite
from ssdlab.suite import Rounds, Step, load_suite

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

[[steps.steps]]
name = "r4k"
rw = "randread"
"""


class Recorded(RunDisplay):
    """A RunDisplay that keeps itself and the planned seconds done at each step's start."""

    shown: ClassVar[list[Recorded]] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.starts: list[tuple[str, float, float]] = []  # label, done_s, total_s
        self.planned: list[tuple[float, int | None]] = []  # each step's seconds and bytes
        Recorded.shown.append(self)

    def start_step(
        self,
        label: str,
        planned_s: float,
        done_s: float | None = None,
        planned_bytes: int | None = None,
    ) -> None:
        super().start_step(label, planned_s, done_s, planned_bytes)
        self.starts.append((label, self.done_s, self.total_s))
        self.planned.append((planned_s, planned_bytes))


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[Recorded]:
    Recorded.shown = []
    monkeypatch.setattr(ssdlab.runner, "RunDisplay", Recorded)
    return Recorded.shown


def _console() -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, force_terminal=False, width=200), text


def test_rounds_are_planned_at_their_max_and_the_bar_completes(
    tmp_path: Path, recorded: list[Recorded]
) -> None:
    path = tmp_path / "rounds.toml"
    path.write_text(ROUNDS)
    suite = load_suite(path).scaled(0.5)
    console, text = _console()
    manifest = run_suite(suite, tmp_path / "out", console=console)
    (display,) = recorded
    block = suite.steps[1]
    assert isinstance(block, Rounds)
    rounds_run = len(manifest.steady_state[0].round_values)
    # the plan: the fill and 4 rounds of 2 steps, each 0.5 s and its start; what the block
    # did not need is taken off
    planned = 9 * (0.5 + STEP_START_S)
    assert display.starts[0][2] == pytest.approx(planned)
    assert display.total_s == pytest.approx(planned - (4 - rounds_run) * 2 * (0.5 + STEP_START_S))
    assert display.done_s == pytest.approx(display.total_s)  # complete, whenever it stopped
    labels = [label for label, _, _ in display.starts]
    assert labels[:3] == [
        "[1] fill",
        "[2] mix round 1 of up to 4: rw70",
        "[3] mix round 1 of up to 4: r4k",
    ]
    lines = text.getvalue().splitlines()
    assert "mix: round 1 of up to 4: not steady yet" in lines
    last = f"mix: round {rounds_run} of up to 4: "
    assert any(line.startswith(last) and "after" in line for line in lines), lines


def test_a_resumed_run_starts_its_bar_at_the_step_it_resumes(
    tmp_path: Path, recorded: list[Recorded]
) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SUITE.replace('ioengine = "libaio"', 'ioengine = "null"'))
    suite = load_suite(path).scaled(0.25)
    out = tmp_path / "out"
    run_suite(suite, out, console=_console()[0])
    data = json.loads((out / "manifest.json").read_text())
    data["steps"] = data["steps"][:1]  # as if the run had stopped during step 2
    data["status"] = "interrupted"
    (out / "manifest.json").write_text(json.dumps(data))
    console, text = _console()
    run_suite(suite, out, console=console)
    display = recorded[-1]
    rates = Rates.of(None)
    first = rates.seconds(suite.steps[0])
    planned = suite_seconds(suite, rates)
    assert first == suite.steps[0].cap_s + STEP_START_S  # time-based: its time and its start
    assert display.starts == [("[2] randrw70-8k-qd4", pytest.approx(first), planned)]
    assert display.done_s == pytest.approx(display.total_s)
    assert text.getvalue().splitlines()[0] == "resuming at step 2 of 2"


def test_display_counts_planned_time_honestly() -> None:
    display = RunDisplay("suite x", 100, _console()[0])
    display.skip(20)  # finished before a resume
    display.start_step("[2] a", 10)
    display.fio_status(FioStatus(percent=50, iops=2000, bw_bytes_s=8e6, eta_s=4))
    suite, step = display._progress.tasks[0], display._progress.tasks[1]
    assert (suite.completed, suite.total, suite.fields["eta"]) == (26, 100, "0:01:14")
    assert step.fields["eta"] == "0:00:04" and "2.0k IOPS" in step.fields["live"]
    display.end_step("a: done")
    display.add_planned(-40)  # rounds a steady block does not run
    assert (display.done_s, display.total_s) == (30, 60)
    assert display._progress.tasks[0].fields["eta"] == "0:00:30"
    display.add_planned(-100)  # never below what is done
    assert display.total_s == 30 and display._progress.tasks[0].percentage == 100


def test_a_step_without_fios_status_moves_by_the_time_it_has_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fleet's fio clients print no status while they write JSON: the step and the suite
    bar move by the time the step has run against its plan, never past it."""
    clock = [1000.0]
    monkeypatch.setattr(ssdlab.progress, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    display = RunDisplay("suite fleet on 2 hosts", 40, _console()[0])
    display.start_step("fill on 2 of 2 hosts", 10, done_s=20)
    display.set_live("2 of 2 running")
    suite, step = display._progress.tasks
    assert (step.completed, suite.completed) == (0, 20)
    clock[0] += 4
    display._refresh()
    assert (step.completed, step.fields["eta"], step.fields["live"]) == (
        4,
        "0:00:06",
        "2 of 2 running",
    )
    assert (suite.completed, suite.fields["eta"]) == (24, "0:00:16")
    clock[0] += 60  # overrunning its plan: the step is full, the suite waits for it
    display._refresh()
    assert (step.completed, step.fields["eta"]) == (10, "0:00:00")
    assert (suite.completed, suite.fields["eta"]) == (30, "0:00:10")
    display.complete_step()
    assert display.done_s == 30


def test_an_interrupted_step_says_it_once(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SUITE)
    step = load_suite(path).steps[0]
    manifest = Manifest(
        run_id="r",
        label="l",
        suite="tiny",
        target=TargetInfo(path=str(tmp_path / "t.bin"), kind="file", size_bytes=2**24),
    )

    class Stopped:
        target_here = False  # t.bin is never made: nothing to check

        def launch(self, step_dir: Path, record: StepRecord) -> FioOutcome:
            return FioOutcome(returncode=0, interrupted=True)

    console, text = _console()
    display = RunDisplay("suite tiny", step.cap_s, console)
    executor = StepExecutor(manifest, tmp_path / "out", display, Stopped())
    (tmp_path / "out").mkdir()
    with pytest.raises(RunInterrupted):
        SuiteSteps(executor, "stop").step(step)
    assert text.getvalue().splitlines()[-1] == f"{step.name}: interrupted"


def test_fleet_steps_show_their_place_in_the_suite_and_the_hosts_running(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rounds.toml"
    path.write_text(ROUNDS)
    suite = load_suite(path)
    order, rates = SuiteOrder(suite), Rates.of(None)
    block = suite.steps[1]
    assert isinstance(block, Rounds)
    _, r4k = block.round_steps(3)
    key = order(r4k.name, "mix", 3)
    each = 1 + STEP_START_S  # every step's runtime_s and its start
    assert order.planned_before(key, rates) == pytest.approx(6 * each)  # fill, 2 rounds, rw70
    assert order.planned_before(order("fill", None, None), rates) == 0

    class Shown:
        def __init__(self) -> None:
            self.steps: list[tuple[str, float, float | None, int | None]] = []
            self.live: list[str] = []

        def start_step(
            self,
            label: str,
            planned_s: float,
            done_s: float | None = None,
            planned_bytes: int | None = None,
        ) -> None:
            self.steps.append((label, planned_s, done_s, planned_bytes))

        def set_live(self, text: str) -> None:
            self.live.append(text)

        def complete_step(self) -> None:
            self.live.append("complete")

    shown = Shown()
    gate = Gate(order, rates, shown, hosts=1)
    record = StepRecord(index=7, name=r4k.name, block="mix", round=3)
    gate.wait("lab1", record, r4k)  # one host: released at once
    label = "mix round 3 of up to 4: r4k on 1 of 1 host"
    assert shown.steps == [(label, pytest.approx(each), pytest.approx(6 * each), None)]
    gate.done("lab1")
    assert shown.live == ["1 of 1 running", "1 done", "complete"]
    # a size-based step: planned from its bytes at the fleet's rates, not its time cap, and
    # given in bytes when every member's target has one size
    sized_rates = Rates("file", 64 * 2**20)
    fill = Step(name="fill", rw="write", bs="128k", size="100%", loops=2, runtime_s=86400)
    sized = load_suite(path).model_copy(update={"steps": [fill, block]})
    gate = Gate(SuiteOrder(sized), sized_rates, shown, hosts=1, bytes_progress=True)
    gate.wait("lab1", StepRecord(index=1, name="fill"), fill)
    estimate = sized_rates.step_time(fill)
    assert estimate.planned_bytes == 2 * 64 * 2**20 and not estimate.capped
    assert shown.steps[-1] == ("fill on 1 of 1 host", estimate.seconds, 0, estimate.planned_bytes)
    assert estimate.seconds < 60


def test_fleet_hosts_reporting_live_get_rows_and_the_step_their_summed_rates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each host fio reports live gets a row with fio's progress, ETA and rates; the step's
    row adds the rates summed over its hosts to the count of hosts running; a host's row goes
    when its step ends there, and every row when the next step starts."""
    monkeypatch.setattr(ssdlab.progress, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    display = RunDisplay("suite fleet on 2 hosts", 40, _console()[0])

    def rows() -> list[str]:
        console, text = _console()
        console.print(display._progress.make_tasks_table(display._progress.tasks))
        return [" ".join(line.replace("━", "").split()) for line in text.getvalue().splitlines()]

    display.start_step("fill on 2 of 2 hosts", 10, done_s=0)
    display.set_live("2 of 2 running")
    display.host_status("lab1:8765 /x", FioStatus(percent=40, iops=3000, bw_bytes_s=2e6, eta_s=6))
    display.host_status("lab2:8765 /x", FioStatus(iops=1000, bw_bytes_s=1e6))  # no ETA yet
    assert rows()[1:] == [
        "fill on 2 of 2 hosts 0% ETA 0:00:10 2 of 2 running 4.0k IOPS 3 MB/s",
        "lab1:8765 /x 40% ETA 0:00:06 3.0k IOPS 2 MB/s",
        "lab2:8765 /x ETA ? 1.0k IOPS 1 MB/s",
    ]
    display.host_status("lab1:8765 /x", FioStatus(percent=60, iops=5000, bw_bytes_s=4e6, eta_s=4))
    assert rows()[1:3] == [
        "fill on 2 of 2 hosts 0% ETA 0:00:10 2 of 2 running 6.0k IOPS 5 MB/s",
        "lab1:8765 /x 60% ETA 0:00:04 5.0k IOPS 4 MB/s",
    ]
    display.host_status("lab1:8765 /x", None)
    display.set_live("1 of 2 running")
    assert rows()[1:] == [
        "fill on 2 of 2 hosts 0% ETA 0:00:10 1 of 2 running 1.0k IOPS 1 MB/s",
        "lab2:8765 /x ETA ? 1.0k IOPS 1 MB/s",
    ]
    display.start_step("read on 2 of 2 hosts", 10, done_s=10)
    assert len(rows()) == 2
    # a size-based step of targets of one size: by the least share any host's fio has done
    display.start_step("fill on 2 of 2 hosts", 10, done_s=20, planned_bytes=4 * 10**9)
    display.host_status("lab1:8765 /x", FioStatus(percent=50, iops=3000, bw_bytes_s=2e6))
    display.host_status("lab2:8765 /x", FioStatus(percent=25, iops=1000, bw_bytes_s=1e6))
    assert display.step_fraction() == 0.25
    display.host_status("lab2:8765 /x", FioStatus(iops=1000, bw_bytes_s=1e6))  # a gap
    assert display.step_fraction() == 0.25  # its last share kept: no step back
    display.host_status("lab3:8765 /x", FioStatus(iops=10, bw_bytes_s=1e4))  # not said yet
    assert display.step_fraction() == 0
    display.host_status("lab3:8765 /x", None)
    row = rows()[1]
    assert row.startswith("fill on 2 of 2 hosts 25% ETA") and "1 GB of 4 GB" in row


MEASURED_THEN_SIZED = """
name = "measured-then-sized"

[defaults]
ioengine = "null"
bs = "128k"
rw = "write"
size = "8m"

[[steps]]
name = "seq-write"
runtime_s = 0.5

[[steps]]
name = "fill"
loops = 3
runtime_s = 86400
"""


def test_a_size_based_step_is_planned_at_the_rate_an_earlier_step_measured(
    tmp_path: Path, recorded: list[Recorded]
) -> None:
    """The fill's plan is its bytes over the rate fio measured in the write before it (its
    own io_bytes over its runtime), not its 24-hour cap; the suite bar's total follows."""
    path = tmp_path / "suite.toml"
    path.write_text(MEASURED_THEN_SIZED)
    out = tmp_path / "out"
    run_suite(load_suite(path), out, console=_console()[0])
    (display,) = recorded
    jobs = read_fio_json(next((out / "steps").glob("001-*")) / "fio.json").jobs
    rate = jobs["io_bytes"].sum() / jobs["runtime_s"].max()
    planned_s, planned_bytes = display.planned[1]
    assert planned_bytes == 3 * 8 * 2**20
    assert planned_s == pytest.approx(STEP_START_S + planned_bytes / rate)
    assert display.done_s == pytest.approx(display.total_s)
    assert display.total_s == pytest.approx(0.5 + STEP_START_S + planned_s)


def test_a_size_based_steps_progress_is_fios_share_of_its_bytes() -> None:
    """fio's percent done of a size-based job is its bytes over its bytes to do: the step
    moves by it, shows it as bytes of the planned bytes, and its ETA is fio's."""
    display = RunDisplay("suite x", 100, _console()[0])
    display.start_step("[1] fill", 40, planned_bytes=4 * 10**9)
    line = "Jobs: 1 (f=1): [W(1)][25.0%][w=300MiB/s][w=2400 IOPS][eta 00m:30s]"
    status = parse_status_line(line)
    assert status is not None
    display.fio_status(status)
    assert display.step_fraction() == 0.25
    suite, step = display._progress.tasks
    assert step.completed == 10 and step.fields["live"].startswith("1 GB of 4 GB")
    assert (suite.completed, suite.fields["eta"]) == (10, "0:01:30")  # 60 after it, 30 left
    display.end_step("fill: done")
    display.start_step("[2] read", 10)  # a time-based step: by fio's ETA, no bytes
    display.fio_status(status)
    assert display.step_fraction() is None and display._progress.tasks[1].completed == 0
