"""fio's output formats in the format registry (:mod:`ssdlab.formats`), and how a file is
recognised as one of them from its first bytes (:func:`sniff`, used by the importer too).

- ``fio_json``: a JSON/json+ result, text around it allowed (:mod:`ssdlab.io.fio_json`).
- ``fio_log``: a bw/iops/lat/clat/slat log (:mod:`ssdlab.io.fio_log`).
- ``fio_hist_log``: a completion-latency histogram log (:mod:`ssdlab.io.fio_hist`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..formats import Format, Probe
from .fio_bins import GROUPS
from .fio_json import read_fio_json
from .fio_log import LOG_ROW, read_fio_log

if TYPE_CHECKING:
    import polars as pl

SNIFF_BYTES = 8192
HIST_MIN_COLUMNS = 3 + GROUPS[2]  # the coarsest histogram log (fio 2.x, coarseness 6)


def sniff(data: bytes) -> str | None:
    """``json``, ``log``, ``hist`` or None, from the first bytes of a file."""
    end = data.find(b"\n", 0, SNIFF_BYTES)
    first = data[: SNIFF_BYTES if end < 0 else end]
    if LOG_ROW.match(first):  # first: a log's first line settles it without a scan
        return "hist" if first.count(b",") + 1 >= HIST_MIN_COLUMNS else "log"
    if data.find(b'"fio version"', 0, SNIFF_BYTES) >= 0:
        return "json"
    return None


FIO_JSON = Format("fio_json", "fio", read_fio_json, lambda p: sniff(p.raw) == "json")
FIO_LOG = Format("fio_log", "fio", read_fio_log, lambda p: sniff(p.raw) == "log")


def read_fio_hist_log(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """:func:`ssdlab.io.fio_hist.read_fio_hist_log`, imported when first read: it needs
    numpy, which recognising files (:func:`sniff`, the importer) does not."""
    from .fio_hist import read_fio_hist_log as read

    return read(path)


FIO_HIST_LOG = Format("fio_hist_log", "fio", read_fio_hist_log, lambda p: sniff(p.raw) == "hist")
__all__ = ["FIO_HIST_LOG", "FIO_JSON", "FIO_LOG", "Probe", "sniff"]
