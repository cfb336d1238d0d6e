"""Readers for external formats, one module per format (``read_<format>(path)``).

Each reader returns tidy polars frames with canonical, unit-suffixed column names plus a
metadata dict, and raises :class:`ssdlab.errors.InputError` naming the file for bad input.
"""

from .fio_json import FioJson, read_fio_json
from .fio_log import read_fio_log

__all__ = ["FioJson", "read_fio_json", "read_fio_log"]
