"""fio's log-linear latency bins (``FIO_IO_U_PLAT_*`` in fio's stat.h): groups of
:data:`PLAT_VAL` bins, each group twice as wide as the one before. Constants only, without
numpy, so that recognising a histogram log (:mod:`ssdlab.io.fio_formats`) imports no numpy;
the bins' values and edges are :mod:`ssdlab.io.fio_hist`'s."""

from __future__ import annotations

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
GROUPS = {3: 29, 2: 19}  # fio major version -> FIO_IO_U_PLAT_GROUP_NR
