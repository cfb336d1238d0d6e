"""Repeated measurements: a suite whose measured steps run several times, interleaved.

``ssdlab run SUITE --repeat N`` runs every measured step N times. Repeats are interleaved,
not back to back: each group of consecutive time-based steps runs whole, then again, so a
drift of the drive (warming up, filling its cache) shows as spread between repeats instead
of looking like precision. Size-based steps (preconditioning fills) and round blocks run
once; they also end a group, so a repeat never crosses the state a fill sets up.

The first repeat keeps the step's name (a run without ``--repeat`` is repeat 1); repeat k
is named ``<name>.rep<k>``. :func:`split_repeat` reads a name back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .errors import InputError
from .suite import MAX_STEPS, Step, Suite

_SUFFIX = re.compile(r"^(?P<of>.+)\.rep(?P<k>[0-9]+)$")
#: repeats a step may be asked for (each one is a full fio run)
MAX_REPEATS = 100


def repeat_name(name: str, k: int) -> str:
    """The name of repeat ``k`` (from 1) of step ``name``."""
    return name if k == 1 else f"{name}.rep{k}"


def split_repeat(name: str) -> tuple[str, int]:
    """``(step name, repeat number)`` of a step name (``qd1.rep3`` -> ``("qd1", 3)``)."""
    found = _SUFFIX.match(name)
    return (found["of"], int(found["k"])) if found else (name, 1)


def repeat_counts(names: Iterable[str]) -> dict[str, int]:
    """How many repeats of each step (by its name without a repeat suffix) ``names`` hold,
    each name counted once: give a run's planned and recorded step names (its manifest's
    ``suite_definition`` steps and ``steps``; ``--max-spread`` adds repeats, a run stopped
    early records fewer) to learn how many repeats of each step it has."""
    counts: dict[str, int] = {}
    for name in set(names):
        of = split_repeat(name)[0]
        counts[of] = counts.get(of, 0) + 1
    return counts


def measured_step(item: object) -> bool:
    """A time-based plain step: what ``--repeat`` repeats."""
    return isinstance(item, Step) and item.loops is None and item.runtime_s is not None


def repeat_suite(suite: Suite, n: int) -> Suite:
    """``suite`` with each group of consecutive measured steps run ``n`` times, interleaved
    (see the module docstring); ``n=1`` returns ``suite`` itself. InputError when the repeats
    make more than :data:`~ssdlab.suite.MAX_STEPS` fio runs."""
    if not 1 <= n <= MAX_REPEATS:
        raise ValueError(f"--repeat takes 1 to {MAX_REPEATS} repeats, not {n}")
    if n == 1:
        return suite
    runs = suite.max_steps + (n - 1) * sum(map(measured_step, suite.steps))
    if runs > MAX_STEPS:
        raise InputError(
            f"--repeat {n}: suite {suite.name!r} would make {runs:,} fio runs, at most "
            f"{MAX_STEPS:,}"
        )
    items: list = []
    group: list[Step] = []

    def flush() -> None:
        for k in range(1, n + 1):
            items.extend(s.model_copy(update={"name": repeat_name(s.name, k)}) for s in group)
        group.clear()

    for item in suite.steps:
        if measured_step(item):
            group.append(item)
            continue
        flush()
        items.append(item)
    flush()
    # validated again: a user's own step named ``x.rep2`` must not meet a repeat of ``x``
    data = suite.model_dump()
    data["steps"] = [item.model_dump() for item in items]
    return Suite.model_validate(data)
