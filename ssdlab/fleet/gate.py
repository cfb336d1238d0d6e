"""Lockstep across a fleet's hosts: before a step, a host waits until every host still
running has reached a step; the hosts at the earliest step in suite order start it together
(see :mod:`ssdlab.fleet.run`)."""

from __future__ import annotations

import threading
from typing import Protocol

from ..console import plural
from ..estimate import Rates, item_seconds
from ..execute import RunInterrupted
from ..manifest import StepRecord
from ..suite import Rounds, Step, Suite, Sweep


class FleetDisplay(Protocol):
    """What the gate shows: each step as the hosts start it, where it is in the suite."""

    def start_step(
        self,
        label: str,
        planned_s: float,
        done_s: float | None = None,
        planned_bytes: int | None = None,
    ) -> None: ...

    def set_live(self, text: str) -> None: ...

    def complete_step(self) -> None: ...


class SuiteOrder:
    """Where a step is in suite order: (item, round, sub-step); unknown steps go last."""

    def __init__(self, suite: Suite):
        self._items = list(suite.steps)
        self._position: dict[tuple[str | None, str], int] = {}
        for i, item in enumerate(suite.steps):
            self._position[(None, item.name)] = i
            if isinstance(item, Rounds):
                self._position |= {(item.name, s.name): j for j, s in enumerate(item.steps)}
            if isinstance(item, Sweep):
                self._position |= {(item.name, n): j for j, n in enumerate(item.names)}

    def __call__(self, name: str, block: str | None, round_no: int | None) -> tuple[int, int, int]:
        last = len(self._position)
        if block is not None and round_no is None and (block, name) in self._position:
            return self._position.get((None, block), last), 0, self._position[(block, name)]
        if block is None or round_no is None:
            return self._position.get((None, name), last), 0, 0
        sub = name.removeprefix(f"{block}-r{round_no:02d}-")
        item = self._position.get((None, block), last)
        return item, round_no, self._position.get((block, sub), last)

    def planned_before(self, key: tuple[int, int, int], rates: Rates) -> float:
        """Planned seconds of the suite before the step at ``key`` with ``rates`` (round
        blocks before it at their ``max`` rounds, as the display plans them)."""
        item, round_no, sub = key
        seconds = rates.seconds
        before = sum(item_seconds(earlier, rates) for earlier in self._items[:item])
        if item < len(self._items) and isinstance(block := self._items[item], Rounds):
            before += max(0, round_no - 1) * sum(seconds(s) for s in block.steps)
            before += sum(seconds(s) for s in block.steps[:sub])
        if item < len(self._items) and isinstance(sweep := self._items[item], Sweep):
            before += sub * seconds(sweep.workload)
        return before

    def label(self, record: StepRecord) -> str:
        """The step as the display names it: a round's step with its round."""
        item = self._position.get((None, record.block or ""), None)
        if item is None or record.round is None:
            return record.name
        block = self._items[item]
        assert isinstance(block, Rounds)
        sub = record.name.removeprefix(f"{block.name}-r{record.round:02d}-")
        return f"{block.name} round {record.round} of up to {block.max}: {sub}"


class Gate:
    """Lockstep across hosts (see the module documentation); each step is planned with
    ``rates`` (:mod:`ssdlab.estimate`); the display counts the hosts as ``noun`` (targets,
    for several targets of this machine) and, with ``bytes_progress`` (every host's target
    of one size), shows a size-based step's progress in bytes."""

    def __init__(
        self,
        order: SuiteOrder,
        rates: Rates,
        display: FleetDisplay,
        hosts: int,
        noun: str = "host",
        *,
        bytes_progress: bool = False,
    ):
        self._noun = noun
        self._bytes_progress = bytes_progress
        self._cond = threading.Condition()
        self._order = order
        self._rates = rates
        self._display = display
        self._total = self._active = hosts
        self._waiting: dict[str, tuple[tuple[int, int, int], Step, str]] = {}
        self._running: set[str] = set()  # the hosts of the step running
        self._batch = 0
        self._released: set[str] = set()
        self._aborted = False

    def wait(self, who: str, record: StepRecord, step: Step) -> None:
        """Block until ``who`` may start ``step``."""
        with self._cond:
            key = self._order(record.name, record.block, record.round)
            self._waiting[who] = (key, step, self._order.label(record))
            self._running.discard(who)
            self._release()
            while who not in self._released:
                if self._aborted:
                    del self._waiting[who]
                    raise RunInterrupted(f"interrupted before step '{step.name}' started")
                self._cond.wait()
            self._released.discard(who)

    def done(self, who: str) -> None:
        """``who`` finished its step (the display counts the hosts still running it)."""
        with self._cond:
            if who in self._running:
                self._running.discard(who)
                self._show_running()

    def leave(self, who: str | None = None) -> None:
        """A host is done (finished, failed or stopped): the others no longer wait for it."""
        with self._cond:
            self._active -= 1
            if who in self._running:  # it stopped during its step
                self._running.discard(who)
                self._show_running()
            self._release()

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def _release(self) -> None:
        if self._aborted or not self._waiting or len(self._waiting) < self._active:
            return
        first = min(key for key, _, _ in self._waiting.values())
        batch = [who for who, (key, _, _) in self._waiting.items() if key == first]
        _, step, label = self._waiting[batch[0]]
        for who in batch:
            del self._waiting[who]
        self._released.update(batch)
        self._running = set(batch)
        self._batch = len(batch)
        estimate = self._rates.step_time(step)
        self._display.start_step(
            f"{label} on {len(batch)} of {plural(self._total, self._noun)}",
            estimate.seconds,
            done_s=self._order.planned_before(first, self._rates),
            planned_bytes=estimate.planned_bytes if self._bytes_progress else None,
        )
        self._show_running()
        self._cond.notify_all()

    def _show_running(self) -> None:
        running = len(self._running)
        self._display.set_live(
            f"{running} of {self._batch} running" if running else f"{self._batch} done"
        )
        if not running:
            self._display.complete_step()
