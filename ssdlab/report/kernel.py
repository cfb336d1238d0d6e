"""The environment of the Python kernels ssdlab starts (reports, batches, JupyterLab): they
load only code ssdlab and its Python environment ship, never a module, startup file or
configuration found in the working directory or a results directory.

Python leaves the working directory off ``sys.path`` (``PYTHONSAFEPATH``; IPython then does not
add it either); ``PYTHONSTARTUP`` (which IPython runs in every kernel) and the ``PYTHONPATH``
entries that name the working directory (empty, relative, or it) are dropped; IPython gets a
private profile directory, so no user startup file or configuration runs. Report kernels also
start in a private directory (:func:`private_directory`); results directories reach a notebook
as parameters only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

#: variables a kernel does not inherit: files Python or IPython would run at startup
DROPPED = ("PYTHONSTARTUP",)


@contextlib.contextmanager
def private_directory() -> Iterator[Path]:
    """A fresh directory only this user can enter (mode 0700), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="ssdlab-kernel-", ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)


def _cwd() -> str | None:
    try:
        return os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        return None


def trusted_pythonpath(pythonpath: str) -> str:
    """``pythonpath`` without the entries that name the working directory: empty or relative
    ones (Python resolves them against it) and the working directory itself."""
    cwd = _cwd()
    kept = [
        entry
        for entry in pythonpath.split(os.pathsep)
        if os.path.isabs(entry) and os.path.realpath(entry) != cwd
    ]
    return os.pathsep.join(kept)


def kernel_environment(env: Mapping[str, str], private: Path) -> dict[str, str]:
    """``env`` for a kernel (or a Jupyter server that starts kernels) that imports nothing from
    its working directory; IPython's profile goes to ``private`` (a :func:`private_directory`)."""
    kernel = {name: value for name, value in env.items() if name not in DROPPED}
    pythonpath = trusted_pythonpath(env.get("PYTHONPATH", ""))
    if pythonpath:
        kernel["PYTHONPATH"] = pythonpath
    else:
        kernel.pop("PYTHONPATH", None)
    kernel["PYTHONSAFEPATH"] = "1"
    kernel["IPYTHONDIR"] = str(private / "ipython")
    return kernel
