"""Workload phrases, the one vocabulary of findings, comparisons and tables: build them
(``4K random read at QD1``, ``1M sequential write at QD128 (4 jobs x QD32)``), read them
back, and turn the labels analysis writes (``4K random 70/30 QD128 (4 × 32)``) into them."""

from __future__ import annotations

import re
from typing import NamedTuple

from .units import MIXED_BS_LABEL, bs_label, parse_size

#: a workload phrase: block size, access pattern, direction or mix, and optionally the QD
WORKLOAD_RE = re.compile(
    rf"^(?P<bs>\d+(?:B|K|M|G|T)|{MIXED_BS_LABEL})\s(?P<pattern>random|sequential)\s"
    r"(?P<mix>read|write|mixes|\d{1,3}/\d{1,3})"
    r"(?:\sat\s(?P<qd>QD\d+(?:\s\(\d+\sjobs\sx\sQD\d+\))?))?$"
)
#: the QD part of a phrase, and the labels other modules write (``QD128 (4 × 32)``)
QD_RE = re.compile(
    r"^QD(?P<qd>\d+)(?:\s\((?P<jobs>\d+)(?:\sjobs)?\s[x×]\s(?:QD)?(?P<depth>\d+)\))?$"
)
#: a workload label as :mod:`ssdlab.analysis` writes it: ``4K random 70/30 QD128 (4 × 32)``
LABEL_RE = re.compile(
    rf"^(?P<bs>\d+(?:B|K|M|G|T)|{MIXED_BS_LABEL})\s(?P<pattern>random|sequential)\s"
    r"(?P<mix>read|write|\d{1,3}/\d{1,3})\s(?P<qd>QD\d+(?:\s\(\d+(?:\sjobs)?\s[x×]\s(?:QD)?\d+\))?)"
    r"(?P<rest>.*)$"
)


class Workload(NamedTuple):
    """What a workload phrase says: block size, pattern, read share (None: a mix sweep) and
    queue depth (iodepth, numjobs; None when the phrase names none)."""

    bs_bytes: int | None  # None: a job mixing sizes (bssplit, bsrange)
    pattern: str
    read_pct: int | None
    iodepth: int | None = None
    numjobs: int | None = None


def mix_phrase(read_pct: int) -> str:
    """``read`` (100 % reads), ``write`` (0 %), else ``70/30``."""
    read_pct = int(read_pct)
    return {100: "read", 0: "write"}.get(read_pct, f"{read_pct}/{100 - read_pct}")


def qd_phrase(iodepth: int, numjobs: int = 1) -> str:
    """``QD32``, or ``QD128 (4 jobs x QD32)`` for 4 jobs at iodepth 32."""
    iodepth, numjobs = int(iodepth), int(numjobs or 1)
    if numjobs == 1:
        return f"QD{iodepth}"
    return f"QD{iodepth * numjobs} ({numjobs} jobs x QD{iodepth})"


def workload_phrase(
    pattern: str,
    bs_bytes: int | None,
    read_pct: int | None,
    iodepth: int | None = None,
    numjobs: int = 1,
) -> str:
    """``4K random read at QD1``, ``1M sequential write at QD128 (4 jobs x QD32)``; a
    ``read_pct`` of None names a mix sweep (``4K random mixes at QD32``); no ``iodepth``, no
    QD part."""
    what = "mixes" if read_pct is None else mix_phrase(read_pct)
    phrase = f"{bs_label(bs_bytes)} {pattern} {what}"
    return phrase if iodepth is None else f"{phrase} at {qd_phrase(iodepth, numjobs)}"


def parse_qd(text: str) -> tuple[int, int] | None:
    """(iodepth, numjobs) of ``QD32``, ``QD128 (4 jobs x QD32)`` or ``QD128 (4 × 32)``."""
    m = QD_RE.match(text.strip())
    if not m:
        return None
    if m["jobs"] is None:
        return int(m["qd"]), 1
    jobs, depth = int(m["jobs"]), int(m["depth"])
    return (depth, jobs) if depth * jobs == int(m["qd"]) else None


def _share(mix: str) -> int | None:
    if mix == "mixes":
        return None
    if mix in ("read", "write"):
        return 100 if mix == "read" else 0
    reads, writes = (int(p) for p in mix.split("/"))
    if reads + writes != 100 or not 0 < reads < 100:
        raise ValueError(mix)
    return reads


def parse_workload(text: str) -> Workload | None:
    """The :class:`Workload` a phrase of :func:`workload_phrase` names; None if ``text`` is
    not one."""
    m = WORKLOAD_RE.match(text)
    if not m:
        return None
    try:
        share = _share(m["mix"])
    except ValueError:
        return None
    qd = parse_qd(m["qd"]) if m["qd"] else None
    if m["qd"] and qd is None:
        return None
    return Workload(
        None if m["bs"] == MIXED_BS_LABEL else parse_size(m["bs"].removesuffix("B").lower()),
        m["pattern"],
        share,
        *(qd if qd else (None, None)),
    )


def rephrase(label: str) -> str:
    """A workload label (``4K random write QD1``, ``4K random 70/30 QD128 (4 × 32) · read``)
    as a phrase (``4K random write at QD1``, ``4K random 70/30 at QD128 (4 jobs x QD32),
    reads``); any other text comes back as it is."""
    m = LABEL_RE.match(label.strip())
    qd = parse_qd(m["qd"]) if m else None
    if not m or qd is None:
        return label.strip()
    phrase = f"{m['bs']} {m['pattern']} {m['mix']} at {qd_phrase(*qd)}"
    rest = m["rest"].strip()
    direction = re.fullmatch(r"(?:·\s*)?\(?(read|write)s?\)?", rest)
    if direction:
        return f"{phrase}, {direction[1]}s"
    return f"{phrase} {rest}" if rest else phrase
