"""Readers for external formats, one module per format (``read_<format>(path)``).

Each reader returns tidy polars frames with canonical, unit-suffixed column names plus a
metadata dict, and raises :class:`ssdlab.errors.InputError` naming the file for bad input.
The readers are imported on first use (``ssdlab.io.text`` needs no polars).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fio_json import FioJson, read_fio_json
    from .fio_log import read_fio_log

_PUBLIC = {"FioJson": ".fio_json", "read_fio_json": ".fio_json", "read_fio_log": ".fio_log"}
__all__ = ["FioJson", "read_fio_json", "read_fio_log"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'ssdlab.io' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name], __name__), name)
