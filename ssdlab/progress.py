"""What a user sees while a suite runs: a rich progress display with suite and step ETA and
fio's live rates, or one plain line per step when the output is not a terminal."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn

from .fio import FioStatus
from .suite import Step, Suite


def _hms(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _rate(iops: float | None, bw: float | None) -> str:
    if iops is None and bw is None:
        return ""
    return f"{(iops or 0) / 1000:,.1f}k IOPS  {(bw or 0) / 2**20:,.1f} MiB/s"


class RunDisplay:
    """Progress of one suite run; ETAs come from the suite plan and fio's own estimate."""

    def __init__(self, suite: Suite, pending: list[Step], console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal
        self._remaining_after = 0.0
        self._pending = {s.name: s.planned_s for s in pending}
        self._step: Step | None = None
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
        total = sum(self._pending.values())
        self._suite_task: TaskID = self._progress.add_task(
            f"suite {suite.name}", total=total, eta=_hms(total), live=""
        )
        self._step_task: TaskID | None = None

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

    def start_step(self, position: int, count: int, step: Step) -> None:
        self._step = step
        self._pending.pop(step.name, None)
        self._remaining_after = sum(self._pending.values())
        label = f"[{position}/{count}] {step.name}"
        if self._step_task is not None:
            self._progress.remove_task(self._step_task)
        self._step_task = self._progress.add_task(
            label, total=step.planned_s, eta=_hms(step.planned_s), live=""
        )
        if not self.live:
            self.console.print(f"{escape(label)}: running (about {_hms(step.planned_s)})")

    def fio_status(self, status: FioStatus) -> None:
        if self._step is None or self._step_task is None:
            return
        planned = self._step.planned_s
        left = status.eta_s if status.eta_s is not None else planned
        done = max(0.0, planned - left)
        self._progress.update(
            self._step_task,
            completed=done,
            eta=_hms(left),
            live=_rate(status.iops, status.bw_bytes_s),
        )
        suite_total = self._progress.tasks[self._suite_task].total or 0
        suite_left = self._remaining_after + left
        self._progress.update(
            self._suite_task, completed=suite_total - suite_left, eta=_hms(suite_left)
        )

    def end_step(self, step: Step, outcome: str) -> None:
        message = f"{step.name}: {outcome}"
        if self._step_task is not None:
            self._progress.update(self._step_task, completed=step.planned_s, eta=_hms(0))
        suite_total = self._progress.tasks[self._suite_task].total or 0
        self._progress.update(
            self._suite_task,
            completed=suite_total - self._remaining_after,
            eta=_hms(self._remaining_after),
        )
        self._progress.console.print(escape(message), soft_wrap=True, highlight=False)
