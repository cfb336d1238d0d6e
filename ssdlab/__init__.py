"""ssdlab: run SSD test suites with fio, load every result as tidy frames, publish reports."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ssdlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

from .catalog import catalog
from .io import read_fio_json, read_fio_log
from .results import Results, load

__all__ = ["Results", "__version__", "catalog", "load", "read_fio_json", "read_fio_log"]
