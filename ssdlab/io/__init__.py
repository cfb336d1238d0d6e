"""Readers for external formats, one module per format (``read_<format>(path)``).

Each reader returns tidy polars frames with canonical, unit-suffixed column names plus a
metadata dict, and raises :class:`ssdlab.errors.InputError` naming the file for bad input.
The readers are imported on first use (``ssdlab.io.text`` needs no polars).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .fio_json import FioJson, read_fio_json
    from .fio_log import read_fio_log

_PUBLIC = {"FioJson": ".fio_json", "read_fio_json": ".fio_json", "read_fio_log": ".fio_log"}
__all__ = ["FioJson", "read_fio_json", "read_fio_log"]


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())
