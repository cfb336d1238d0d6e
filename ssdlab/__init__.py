"""ssdlab: run SSD test suites with fio, load every result as tidy frames, publish reports.

The public names are imported on first use, so ``import ssdlab`` (and the command line)
starts without loading polars, DuckDB or the runner.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("ssdlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

if TYPE_CHECKING:
    from .catalog import catalog
    from .io import read_fio_json, read_fio_log
    from .results import Results, load

#: public name -> the module that defines it
_PUBLIC = {
    "Results": ".results",
    "load": ".results",
    "catalog": ".catalog",
    "read_fio_json": ".io",
    "read_fio_log": ".io",
}
__all__ = ["Results", "__version__", "catalog", "load", "read_fio_json", "read_fio_log"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name], __name__), name)
