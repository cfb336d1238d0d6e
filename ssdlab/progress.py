"""What a user sees while a suite runs: a rich progress display with suite and step ETA,
fio's live rates and the steady-state status of round blocks, or one plain line per event
when the output is not a terminal.

The suite bar counts planned seconds honestly: a round block counts every round it may run
(its ``max``), so the ETA is the longest the run can take; when a block is steady sooner the
rounds it no longer needs are taken off (:meth:`RunDisplay.add_planned`) and the bar moves on.
Steps finished before a resume count as done (:meth:`RunDisplay.skip`), so a resumed run's bar
starts where the run stopped. A step's planned seconds are its estimate
(:mod:`ssdlab.estimate`): a size-based step's from its bytes and a rate, not its time cap. A
step's progress comes from fio's own ETA when fio reports one (a local fio) and from the time
it has run otherwise (a fleet's step: its hosts may run at different paces); a size-based
step given its ``planned_bytes`` moves by fio's own percent done, which for such a job is
its bytes moved over its bytes planned, shown as bytes of the planned bytes. On a fleet
each host fio reports live (:mod:`ssdlab.fleet.live`) gets a row
of its own with fio's progress, ETA and rates, and the step's row shows the rates summed over
its hosts (a size-based step given its bytes: the least share of them a host has done);
other hosts show only in the count of hosts still running.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from types import TracebackType

import polars as pl
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn

from .console import lossy_stderr
from .fio import FioStatus
from .tables import format_bw, format_bytes, format_iops, format_latency
from .units import format_hms

#: seconds between refreshes of the time-based progress
TICK_S = 0.5


def _rate(iops: float | None, bw: float | None) -> str:
    if iops is None and bw is None:
        return ""
    return f"{(iops or 0) / 1000:,.1f}k IOPS  {format_bw(bw or 0)}"  # MB/s, as in reports


def result_line(jobs: pl.DataFrame) -> str:
    """A finished step in one line from fio's per-direction rows (``direction``, ``iops``,
    ``bw_bytes_s``, ``io_bytes``, ``clat_p99_ns``): IOPS and MB/s summed over its
    directions, then the p99 completion latency of each direction that moved data, named:
    ``12,345 IOPS  50.6 MB/s  read p99 321.5 µs, write p99 3.88 ms`` (of several jobs of a
    direction, the slowest's, and said so)."""
    iops, bw = float(jobs["iops"].sum()), float(jobs["bw_bytes_s"].sum())
    tails = [
        f"{direction} p99 {format_latency(p99)}" + (f" (slowest of {n} jobs)" if n > 1 else "")
        for direction, p99, n in jobs.filter(pl.col("io_bytes") > 0)
        .group_by("direction", maintain_order=True)
        .agg(pl.col("clat_p99_ns").max(), pl.len())
        .rows()
        if p99 is not None
    ]
    return "  ".join([format_iops(iops), format_bw(bw), *([", ".join(tails)] if tails else [])])


class RunDisplay:
    """Progress of one suite run (see the module docstring). ``planned_s`` is the suite's
    planned time with every round block at its ``max`` rounds."""

    def __init__(self, title: str, planned_s: float, console: Console | None = None):
        self.console = console or lossy_stderr()
        self.live = self.console.is_terminal
        self._lock = threading.RLock()
        self._total_s = max(0.0, planned_s)  # planned seconds of the whole run
        self._done_s = 0.0  # planned seconds of the steps finished (or finished before)
        self._step_planned = 0.0
        self._step_started: float | None = None  # time.monotonic() at the step's start
        self._step_left: float | None = None  # fio's ETA of the running step
        self._step_bytes: int | None = None  # a size-based step's planned bytes
        self._step_percent: float | None = None  # fio's percent done of the running step
        self._live_text = ""
        self._hosts: dict[str, tuple[TaskID, FioStatus]] = {}  # a fleet's hosts' live rows
        self._progress = Progress(
            TextColumn("{task.description}", style="bold"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.fields[live]}", style="cyan"),
            console=self.console,
            disable=not self.live,
            refresh_per_second=4,
        )
        self._suite: TaskID = self._progress.add_task(
            title, total=self._total_s or None, eta=format_hms(self._total_s), live=""
        )
        self._step: TaskID | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> RunDisplay:
        self._progress.__enter__()
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self._progress.__exit__(exc_type, exc, tb)

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self._refresh()

    @property
    def total_s(self) -> float:
        """Planned seconds of the whole run, as planned now."""
        return self._total_s

    @property
    def done_s(self) -> float:
        """Planned seconds of the steps finished."""
        return self._done_s

    def print(self, message: str) -> None:
        self._progress.console.print(escape(message), soft_wrap=True, highlight=False)

    def add_planned(self, seconds: float) -> None:
        """More work than planned (positive), or planned work no longer needed (negative: the
        rounds a steady block skips, the rest of an abandoned ACT trial)."""
        with self._lock:
            self._total_s = max(self._done_s, self._total_s + seconds)
            self._refresh()

    def skip(self, seconds: float) -> None:
        """A step finished before this run started (a resume): it counts as done."""
        with self._lock:
            self._done_s = min(self._total_s, self._done_s + seconds)
            self._refresh()

    def start_step(
        self,
        label: str,
        planned_s: float,
        done_s: float | None = None,
        planned_bytes: int | None = None,
    ) -> None:
        """A step starts (``done_s``: the planned seconds before it, when the caller knows
        them better, as a fleet does from the step's place in the suite; ``planned_bytes``:
        a size-based step's, its progress then shown in bytes)."""
        with self._lock:
            if done_s is not None:
                self._done_s = min(self._total_s, max(0.0, done_s))
            self._step_planned = planned_s
            self._step_started = time.monotonic()
            self._step_left = None
            self._step_bytes, self._step_percent = planned_bytes or None, None
            self._live_text = ""
            self._clear_hosts()
            if self._step is not None:
                self._progress.remove_task(self._step)
            self._step = self._progress.add_task(
                label, total=planned_s or None, eta=format_hms(planned_s), live=""
            )
            self._refresh()
        if not self.live:  # a plan under a second is not "0:00:00"
            of = f" for {format_bytes(planned_bytes)}" if planned_bytes else ""
            self.print(f"{label}: running (planned {format_hms(math.ceil(planned_s))}{of})")

    def fio_status(self, status: FioStatus) -> None:
        """fio's live status line of the running step."""
        with self._lock:
            if self._step is None:
                return
            self._step_left = status.eta_s
            if status.percent is not None:
                self._step_percent = status.percent
            self._live_text = _rate(status.iops, status.bw_bytes_s)
            self._refresh()

    def set_live(self, text: str) -> None:
        """What is known live of the running step besides its progress (a fleet: the hosts
        running it)."""
        with self._lock:
            self._live_text = text
            self._refresh()

    def host_status(self, name: str, status: FioStatus | None) -> None:
        """A fleet host's live status in the running step (None: the step ended there)."""
        with self._lock:
            row = self._hosts.pop(name, None)
            if status is None or self._step is None:
                if row is not None:
                    self._progress.remove_task(row[0])
                self._slowest_host()
                self._refresh()
                return
            # a pulsing bar until fio knows how far the host is
            task = (
                row[0]
                if row
                else self._progress.add_task(f"  {name}", total=None, eta="?", live="")
            )
            if status.percent is None and row is not None:  # a gap in fio's replies
                status = dataclasses.replace(status, percent=row[1].percent)
            self._hosts[name] = (task, status)
            self._slowest_host()
            self._progress.update(
                task,
                total=None if status.percent is None else 100,  # None: unchanged
                completed=status.percent or 0,
                eta=format_hms(status.eta_s) if status.eta_s is not None else "?",
                live=_rate(status.iops, status.bw_bytes_s),
            )
            self._refresh()

    def _slowest_host(self) -> None:
        """A fleet's size-based step is as far as its slowest host still running it (one
        that has not said how far it is: at 0)."""
        if self._step_bytes is not None and self._hosts:
            self._step_percent = min(s.percent or 0 for _, s in self._hosts.values())

    def _clear_hosts(self) -> None:
        for task, _ in self._hosts.values():
            self._progress.remove_task(task)
        self._hosts.clear()

    def end_step(self, message: str) -> None:
        self.complete_step()
        self.print(message)

    def complete_step(self) -> None:
        """The running step is over (a fleet's: every host ended it); its time counts as
        done."""
        with self._lock:
            if self._step_started is not None:
                self._done_s = min(self._total_s, self._done_s + self._step_planned)
            self._step_started = None
            self._step_left = None
            self._step_percent = None
            self._clear_hosts()
            if self._step is not None:
                self._progress.update(self._step, completed=self._step_planned, eta=format_hms(0))
            self._refresh()

    def step_fraction(self) -> float | None:
        """The running size-based step's share done by fio's own status (its bytes moved
        over its bytes planned); None before fio says, or for another step."""
        if self._step_bytes is None or self._step_percent is None:
            return None
        return min(1.0, max(0.0, self._step_percent / 100))

    def _step_progress(self) -> tuple[float, float]:
        """The running step's (seconds done, seconds left): a size-based step's share of its
        bytes, else fio's ETA, else the time run (left: fio's ETA when it says one)."""
        if self._step_started is None:
            return 0.0, 0.0
        planned = self._step_planned
        if (fraction := self.step_fraction()) is not None:
            done = planned * fraction
            left = planned - done if self._step_left is None else float(self._step_left)
            return done, left
        if self._step_left is not None:
            left = float(self._step_left)
        else:
            left = max(0.0, planned - (time.monotonic() - self._step_started))
        return max(0.0, planned - left), left

    def _refresh(self) -> None:
        with self._lock:
            done, left = self._step_progress()
            if self._step is not None and self._step_started is not None:
                live = self._live_text
                if (fraction := self.step_fraction()) is not None and self._step_bytes:
                    of = f"{format_bytes(fraction * self._step_bytes)} of "
                    live = f"{of}{format_bytes(self._step_bytes)}  {live}".rstrip()
                if self._hosts:
                    rates = [status for _, status in self._hosts.values()]
                    total = _rate(
                        sum(s.iops or 0 for s in rates), sum(s.bw_bytes_s or 0 for s in rates)
                    )
                    live = f"{live}  {total}" if live else total
                self._progress.update(self._step, completed=done, eta=format_hms(left), live=live)
            running = self._step_started is not None
            after = max(0.0, self._total_s - self._done_s - (self._step_planned if running else 0))
            self._progress.update(
                self._suite,
                total=self._total_s or None,
                completed=min(self._total_s, self._done_s + done),
                eta=format_hms(after + left),
            )
