"""Lockstep across a fleet's hosts: before a step, a host waits until every host still
running has reached a step; the hosts at the earliest step in suite order start it together
(see :mod:`ssdlab.fleet.run`)."""

from __future__ import annotations

import threading

from ..execute import Display, RunInterrupted
from ..manifest import StepRecord
from ..suite import Rounds, Step, Suite


class SuiteOrder:
    """Where a step is in suite order: (item, round, sub-step); unknown steps go last."""

    def __init__(self, suite: Suite):
        self._position: dict[tuple[str | None, str], int] = {}
        for i, item in enumerate(suite.steps):
            self._position[(None, item.name)] = i
            if isinstance(item, Rounds):
                self._position |= {(item.name, s.name): j for j, s in enumerate(item.steps)}

    def __call__(self, name: str, block: str | None, round_no: int | None) -> tuple[int, int, int]:
        last = len(self._position)
        if block is None or round_no is None:
            return self._position.get((None, name), last), 0, 0
        sub = name.removeprefix(f"{block}-r{round_no:02d}-")
        item = self._position.get((None, block), last)
        return item, round_no, self._position.get((block, sub), last)


class Gate:
    """Lockstep across hosts (see the module documentation)."""

    def __init__(self, order: SuiteOrder, display: Display, hosts: int):
        self._cond = threading.Condition()
        self._order = order
        self._display = display
        self._total = self._active = hosts
        self._waiting: dict[str, tuple[tuple[int, int, int], Step]] = {}
        self._released: set[str] = set()
        self._aborted = False

    def wait(self, who: str, record: StepRecord, step: Step) -> None:
        """Block until ``who`` may start ``step``."""
        with self._cond:
            self._waiting[who] = (self._order(record.name, record.block, record.round), step)
            self._release()
            while who not in self._released:
                if self._aborted:
                    del self._waiting[who]
                    raise RunInterrupted(f"interrupted before step '{step.name}' started")
                self._cond.wait()
            self._released.discard(who)

    def leave(self) -> None:
        """A host is done (finished, failed or stopped): the others no longer wait for it."""
        with self._cond:
            self._active -= 1
            self._release()

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def _release(self) -> None:
        if self._aborted or not self._waiting or len(self._waiting) < self._active:
            return
        first = min(key for key, _ in self._waiting.values())
        batch = [who for who, (key, _) in self._waiting.items() if key == first]
        step = self._waiting[batch[0]][1]
        for who in batch:
            del self._waiting[who]
        self._released.update(batch)
        self._display.start_step(
            f"{step.name} on {len(batch)} of {self._total} hosts", step.planned_s
        )
        self._cond.notify_all()
