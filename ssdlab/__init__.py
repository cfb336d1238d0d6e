"""ssdlab: run SSD test suites with fio, load every result as tidy frames, publish reports.

The public names are imported on first use, so ``import ssdlab`` (and the command line)
starts without loading polars, DuckDB or the runner.
"""

import sys

# First, before any import the working directory could supply (``__future__``, ``typing``...):
# ``python -m ssdlab`` (runpy imports the package while ``sys.argv`` is ``["-m"]``) puts the
# working directory, maybe a results directory, first on sys.path. A library import keeps it.
if sys.argv[:1] == ["-m"] and sys.path:
    import os

    if os.path.realpath(sys.path[0] or ".") == os.path.realpath("."):
        del sys.path[0]

from typing import TYPE_CHECKING

from .lazy import lazy_exports

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
    "__version__": "._version",
}
__all__ = ["Results", "__version__", "catalog", "load", "read_fio_json", "read_fio_log"]


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC, globals())
