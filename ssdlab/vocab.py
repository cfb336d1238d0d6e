"""fio's words for directions, rw modes and block sizes, defined once for every module.

fio numbers its directions (``ddir``) 0 read, 1 write, 2 trim, in its logs and its JSON
arrays alike. An rw mode is what fio's ``rw``/``readwrite`` option takes; a reported mode may
carry a suffix (``randread:8``), so compare :func:`base_rw` of it.
"""

from __future__ import annotations

from typing import Literal

Direction = Literal["read", "write", "trim"]
#: fio's directions in ``ddir`` order: ``DIRECTIONS[ddir]``
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim")
#: the two directions a mixed job shares out by ``rwmixread``
MixDirection = Literal["read", "write"]
MIX_DIRECTIONS: tuple[MixDirection, ...] = ("read", "write")

ReadWrite = Literal[
    "read", "write", "trim", "randread", "randwrite", "randtrim",
    "rw", "readwrite", "randrw", "trimwrite",
]  # fmt: skip
READ_RW = ("read", "randread")
WRITE_RW = ("write", "randwrite")
TRIM_RW = ("trim", "randtrim")
#: reads and writes in one job, shared by ``rwmixread``
MIXED_RW = ("rw", "readwrite", "randrw")
#: pure reads or pure writes: one direction each
PURE_RW = (*READ_RW, *WRITE_RW)
#: reads, writes or both (no trims): the modes workloads are classified in
READ_WRITE_RW = (*PURE_RW, *MIXED_RW)
#: fio's ``rwmixread`` (read share in %) of a mixed job that sets neither it nor rwmixwrite
RWMIXREAD_DEFAULT = 50
#: the directions each rw mode does I/O in
RW_DIRECTIONS: dict[str, frozenset[Direction]] = {
    **{rw: frozenset({"read"}) for rw in READ_RW},
    **{rw: frozenset({"write"}) for rw in WRITE_RW},
    **{rw: frozenset({"trim"}) for rw in TRIM_RW},
    **{rw: frozenset({"read", "write"}) for rw in MIXED_RW},
    "trimwrite": frozenset({"trim", "write"}),
}


def base_rw(rw: str) -> str:
    """The rw mode without fio's ``:N`` suffix (``randread:8`` -> ``randread``)."""
    return rw.split(":", 1)[0]


#: options that give a job several block sizes (its ``bs`` then means nothing)
MIXED_BS_OPTIONS = ("bssplit", "bsrange", "blocksize_range")

#: fio engines that submit one I/O at a time per job, whatever the iodepth
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"})
