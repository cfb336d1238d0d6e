"""Run a suite on a partly filled drive (``ssdlab run --fill-first 80%``): AnandTech's
method of reviewing a drive empty and again filled to 80 %, compared in one report.

The fill is one size-based 128K sequential write of that share of the target at QD32,
prepended to the suite. It does not trim first: emptying the drive is ``--purge``'s job
(a trim step would duplicate it, and trim is a guarded write fio_options refuses), so
``--purge --fill-first 80%`` is the filled counterpart of a ``--purge`` run. The step is
named ``fill-first-...``, so the review's fill section shows its MB/s against data written.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from .errors import SuiteError
from .suite import Step, Suite

FILL_FIRST_STEP = "fill-first-seq-write-128k"
_SHARE = re.compile(r"(\d+(?:\.\d+)?)\s*%")


def fill_share(share: str) -> str:
    """``share`` as a step ``size`` (``"80%"``); SuiteError unless it is a percentage more
    than 0 and at most 100."""
    found = _SHARE.fullmatch(share.strip())
    if found is None or not 0 < float(found[1]) <= 100:
        raise SuiteError(
            f"--fill-first {share!r}: give a share of the target above 0 % and at most "
            "100 %, e.g. 80%"
        )
    return f"{found[1]}%"


def fill_first(suite: Suite, share: str) -> Suite:
    """``suite`` with a sequential fill of ``share`` of the target (``"80%"``) as its first
    step, on the engine of the suite's first step. SuiteError for a bad share or when the
    suite already has a step of the fill's name."""
    size = fill_share(share)
    first = suite.all_steps()[0]
    fill = Step(
        name=FILL_FIRST_STEP,
        rw="write",
        bs="128k",
        iodepth=32,
        size=size,
        loops=1,
        ioengine=first.ioengine,
        direct=True,
        options={"randrepeat": 0, "refill_buffers": 1},
    )
    try:
        return Suite.model_validate(
            {
                "name": suite.name,
                "description": suite.description,
                "steps": [fill, *suite.steps],
                "allowed_fio_options": suite.allowed_fio_options,
            }
        )
    except ValidationError as exc:
        problem = "; ".join(" ".join(e["msg"].split()) for e in exc.errors())
        raise SuiteError(f"--fill-first on suite {suite.name!r}: {problem}") from None
