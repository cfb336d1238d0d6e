"""ssdlab: run SSD test suites with fio, load every result as tidy frames, publish reports.

The public names are imported on first use, so ``import ssdlab`` (and the command line)
starts without loading polars, DuckDB or the runner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalog import catalog
    from .io import read_fio_json, read_fio_log
    from .results import Results, load


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ssdlab")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"


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
    if name == "__version__":
        return _version()
    if name not in _PUBLIC:
        raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name], __name__), name)
