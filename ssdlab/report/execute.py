"""Execute a report notebook with papermill in a kernel of the Python running ssdlab."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import papermill
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from papermill.exceptions import PapermillExecutionError
from traitlets import Dict, Unicode, default
from traitlets.config import Config

from ..atomic import write_error
from ..errors import ReportError
from .export import markdown_headings
from .kernel import kernel_environment, private_directory

KERNEL_NAME = "python3"
LOGGERS = ("papermill", "papermill.translators", "papermill.utils", "traitlets")


class KernelStartError(ReportError):
    """The notebook's kernel did not start (or died before answering): worth one retry."""


class KernelKilled(KernelStartError):
    """A signal from outside ended the kernel (the out-of-memory killer on a loaded machine,
    a user's kill): nothing in the notebook failed, so it is worth one retry too."""


#: exit statuses of kernels found dead, newest last (read by :func:`execute_notebook`)
_dead_kernels: list[int] = []


class _ThisPythonKernelSpecs(KernelSpecManager):
    """Resolve every kernel name to ipykernel in this interpreter (``sys.executable``).

    A ``python3`` kernelspec installed elsewhere (user directory, JUPYTER_PATH) may point at
    another Python without ssdlab; this never looks at them.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        try:
            from ipykernel.kernelspec import RESOURCES, get_kernel_dict
        except ImportError as exc:
            raise NoSuchKernel(kernel_name) from exc
        return self.kernel_spec_class(resource_dir=RESOURCES, **get_kernel_dict())


class ThisPythonKernelManager(AsyncKernelManager):
    """Kernel manager that always starts ipykernel in this interpreter, in ``kernel_cwd`` with
    the environment ``kernel_env`` (:func:`~ssdlab.report.kernel.kernel_environment`)."""

    kernel_cwd = Unicode(allow_none=False).tag(config=True)
    kernel_env = Dict(per_key_traits=Unicode()).tag(config=True)

    @default("kernel_spec_manager")
    def _default_kernel_spec_manager(self) -> KernelSpecManager:
        return _ThisPythonKernelSpecs(data_dir=self.data_dir)

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if not self.kernel_cwd or not self.kernel_env:
            raise RuntimeError("the kernel's working directory and environment are not set")
        kw["cwd"], kw["env"] = self.kernel_cwd, dict(self.kernel_env)
        return await super()._async_pre_start_kernel(**kw)

    async def _async_is_alive(self) -> bool:
        """As the base class; a dead kernel's exit status is kept to say how it ended."""
        alive = await super()._async_is_alive()
        if not alive and self.provisioner is not None:
            status = await self.provisioner.poll()
            if status is not None:
                _dead_kernels.append(status)
        return alive


def _how_it_died() -> str:
    """``killed by SIGKILL (...)`` or ``exited with status 1`` for the last dead kernel."""
    if not _dead_kernels:
        return "ended"
    status = _dead_kernels[-1]
    _dead_kernels.clear()
    if status >= 0:
        return f"exited with status {status}"
    name = signal.Signals(-status).name if -status in signal.valid_signals() else -status
    hint = " (on Linux usually the out-of-memory killer: see dmesg)" if name == "SIGKILL" else ""
    return f"was killed by {name}{hint}"


class _NoErrorRecords(logging.Filter):
    """Drop error records (tracebacks, timeouts): the ReportError reports the failure once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR and not record.exc_info


@contextlib.contextmanager
def _no_error_logs() -> Iterator[None]:
    """Let papermill's warnings (e.g. an unknown parameter) through, but not its errors."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    no_errors = _NoErrorRecords()
    for logger in loggers:
        logger.addFilter(no_errors)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(no_errors)


def _section(nb: nbformat.NotebookNode, cell_index: int) -> str:
    """Text of the last markdown heading above ``cell_index``."""
    for cell in reversed(nb.cells[:cell_index]):
        if cell.cell_type == "markdown" and (headings := markdown_headings(cell.source)):
            return f'section "{headings[-1].text}"'
    return "the cells before the first heading"


def _failed_cell(nb: nbformat.NotebookNode) -> int:
    """Index of the cell that stopped execution: the first with an error, else the last started."""
    started = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and any(out.output_type == "error" for out in cell.outputs):
            return index
        if cell.metadata.get("papermill", {}).get("start_time"):
            started = index
    return started


def _read_partial(path: Path) -> nbformat.NotebookNode | None:
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return None


def execute_notebook(
    input_path: Path | str,
    output_ipynb: Path | str,
    parameters: dict[str, Any],
    *,
    cwd: Path | str | None = None,
    timeout_s: float = 600,
) -> nbformat.NotebookNode:
    """Run ``input_path`` with ``parameters`` injected and save it as ``output_ipynb``.

    The kernel starts in ``cwd``, by default a private directory removed afterwards, and imports
    nothing from it (:mod:`ssdlab.report.kernel`). ``timeout_s`` limits each cell. On failure the
    partial notebook stays at ``output_ipynb`` and :class:`ReportError` names the report
    section, the exception and that file.
    """
    input_path, output_ipynb = Path(input_path), Path(output_ipynb)
    if not input_path.is_file():
        raise ReportError(f"report notebook not found: {input_path}")
    try:
        output_ipynb.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(output_ipynb, exc) from None
    _dead_kernels.clear()
    try:
        with _no_error_logs(), private_directory() as private:
            config = Config(
                {
                    # unix sockets in a private directory: no TCP ports to race for or expose
                    "KernelManager": {"transport": "ipc", "ip": f"{private}/k"},
                    "ThisPythonKernelManager": {
                        "kernel_cwd": str(Path(cwd).absolute() if cwd is not None else private),
                        "kernel_env": kernel_environment(os.environ, private),
                    },
                }
            )
            return papermill.execute_notebook(
                str(input_path),
                str(output_ipynb),
                parameters=parameters,
                kernel_name=KERNEL_NAME,
                language="python",
                progress_bar=False,
                execution_timeout=timeout_s,
                kernel_manager_class=ThisPythonKernelManager,
                config=config,
                shutdown_kernel="immediate",
            )
    except NoSuchKernel as exc:
        raise ReportError(
            "cannot start a Python kernel for the report: ipykernel is not installed in this "
            "environment (pip install ipykernel)"
        ) from exc
    except PapermillExecutionError as exc:
        what = f"{exc.ename}: {exc.evalue}"
        error: Exception = exc
    except CellTimeoutError as exc:
        what = f"a cell ran longer than {timeout_s:g} s"
        error = exc
    except DeadKernelError as exc:
        how = _how_it_died()
        if how.startswith("was killed"):
            raise KernelKilled(f"the report's Python kernel {how}") from exc
        what = f"the Python kernel {how}"
        error = exc
    except (RuntimeError, OSError) as exc:  # OSError includes TimeoutError
        if isinstance(exc, OSError) and exc.filename and Path(exc.filename) == output_ipynb:
            raise write_error(output_ipynb, exc) from None  # saved after every cell
        raise KernelStartError(f"the report's Python kernel failed to start: {exc}") from exc
    partial = _read_partial(output_ipynb)
    if partial is None:
        raise ReportError(f"report failed: {what} (no partial notebook was written)") from error
    where = _section(partial, _failed_cell(partial))
    raise ReportError(
        f"report failed in {where}: {what} (partial notebook: {output_ipynb})"
    ) from error
