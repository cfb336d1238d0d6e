"""What a user sees while a suite runs: a rich progress display with suite and step ETA,
fio's live rates and the steady-state status of round blocks, or one plain line per event
when the output is not a terminal."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn

from .console import lossy_stderr
from .fio import FioStatus
from .tables import format_bw


def _hms(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _rate(iops: float | None, bw: float | None) -> str:
    if iops is None and bw is None:
        return ""
    return f"{(iops or 0) / 1000:,.1f}k IOPS  {format_bw(bw or 0)}"  # MB/s, as in reports


class RunDisplay:
    """Progress of one suite run. The suite ETA is the planned time of what is left (round
    blocks count the rounds they still need at least); the step ETA is fio's own."""

    def __init__(self, title: str, planned_s: float, console: Console | None = None):
        self.console = console or lossy_stderr()
        self.live = self.console.is_terminal
        self._left_s = planned_s  # planned seconds of the steps not started yet
        self._step_planned = 0.0
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
            title, total=planned_s or None, eta=_hms(planned_s), live=""
        )
        self._step: TaskID | None = None

    def __enter__(self) -> RunDisplay:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def print(self, message: str) -> None:
        self._progress.console.print(escape(message), soft_wrap=True, highlight=False)

    def add_planned(self, seconds: float) -> None:
        """More work than planned (another round of a block that is not steady yet)."""
        self._left_s += seconds
        task = self._progress.tasks[self._suite]
        self._progress.update(self._suite, total=(task.total or 0) + seconds)

    def start_step(self, label: str, planned_s: float) -> None:
        self._left_s = max(0.0, self._left_s - planned_s)
        self._step_planned = planned_s
        if self._step is not None:
            self._progress.remove_task(self._step)
        self._step = self._progress.add_task(
            label, total=planned_s or None, eta=_hms(planned_s), live=""
        )
        if not self.live:
            self.print(f"{label}: running (planned {_hms(planned_s)})")

    def fio_status(self, status: FioStatus) -> None:
        if self._step is None:
            return
        left = status.eta_s if status.eta_s is not None else self._step_planned
        self._progress.update(
            self._step,
            completed=max(0.0, self._step_planned - left),
            eta=_hms(left),
            live=_rate(status.iops, status.bw_bytes_s),
        )
        total = self._progress.tasks[self._suite].total or 0
        self._progress.update(
            self._suite, completed=total - self._left_s - left, eta=_hms(self._left_s + left)
        )

    def end_step(self, message: str) -> None:
        if self._step is not None:
            self._progress.update(self._step, completed=self._step_planned, eta=_hms(0))
        total = self._progress.tasks[self._suite].total or 0
        self._progress.update(self._suite, completed=total - self._left_s, eta=_hms(self._left_s))
        self.print(message)
