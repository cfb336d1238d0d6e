"""Report, batch and lab kernels run only code ssdlab and its environment ship.

A results directory is someone else's files: a ``polars.py``, ``sitecustomize.py``, IPython
configuration or startup file planted there (or in the directory ssdlab runs in) must never
run, whatever the spelling of the command (console script, ``python -m ssdlab``) and of the
user's environment (``PYTHONPATH=.``, ``PYTHONSTARTUP``, ``IPYTHONDIR``, ``HOME`` there). Each
planted file writes a marker file outside the results when it runs; no marker may appear.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ssdlab.cli.reports import LAB_NOTEBOOK, lab_process
from ssdlab.report.kernel import kernel_environment, private_directory, trusted_pythonpath

SSDLAB = Path(sys.executable).with_name("ssdlab")  # the console script users run


def _plant(directory: Path, markers: Path) -> dict[str, str]:
    """Files that write ``markers/NAME`` when Python or IPython runs them from ``directory``;
    the environment variables a careless shell would have pointing there."""
    markers.mkdir(exist_ok=True)

    def code(name: str, then: str = "") -> str:
        return f"open({str(markers / name)!r}, 'w').write('ran')\n{then}"

    files = {
        "polars.py": code("polars", "raise ImportError('planted polars.py')"),
        "altair.py": code("altair", "raise ImportError('planted altair.py')"),
        "sitecustomize.py": code("sitecustomize"),
        "usercustomize.py": code("usercustomize"),
        "ipython_config.py": code("ipython_config"),
        "ipython_kernel_config.py": code("ipython_kernel_config"),
        "jupyter_config.py": code("jupyter_config"),
        "startup.py": code("pythonstartup"),
        "lib/polars.py": code("lib_polars", "raise ImportError('planted lib/polars.py')"),
        "multiprocessing/__init__.py": code("multiprocessing", "raise ImportError('planted')"),
        ".ipython/profile_default/startup/00-planted.py": code("ipython_startup"),
        ".ipython/profile_default/ipython_kernel_config.py": code("profile_config"),
    }
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return {
        # not ".": Python itself imports a sitecustomize.py there before ssdlab's first line
        "PYTHONPATH": "lib",
        "PYTHONSTARTUP": str(directory / "startup.py"),
        "IPYTHONDIR": str(directory / ".ipython"),
        "HOME": str(directory),
        "XDG_CACHE_HOME": str(markers.parent / "cache"),
    }


def _ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def _under(path: list[str], directory: Path) -> list[str]:
    """The entries of ``path`` (a ``sys.path``) that are ``directory`` or inside it."""
    directory = directory.resolve()
    return [p for p in path if directory in (Path(p).resolve(), *Path(p).resolve().parents)]


@pytest.fixture
def planted_run(tiny_run: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of the tiny run with code planted in it: (run, markers directory, environment)."""
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    markers = tmp_path / "markers"
    return run, markers, _plant(run, markers)


def _ssdlab(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("program", [[str(SSDLAB)], [sys.executable, "-m", "ssdlab"]])
def test_report_inside_results_runs_nothing_planted_there(
    planted_run: tuple[Path, Path, dict[str, str]], tmp_path: Path, program: list[str]
) -> None:
    run, markers, env = planted_run
    out = tmp_path / "out" / "report.html"
    proc = _ssdlab([*program, "report", ".", "-o", str(out)], run, env)
    assert _ran(markers) == []
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and "Traceback" not in proc.stderr


def test_report_kernel_starts_in_a_private_directory_removed_after(
    planted_run: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """What the kernel saw, from the executed notebook: its working directory and sys.path."""
    from ssdlab.report import render_report

    run, markers, env = planted_run
    notebook = tmp_path / "probe.ipynb"
    source = "import os, sys, json\nprint(json.dumps({'cwd': os.getcwd(), 'path': sys.path}))"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, notebook)
    saved = os.getcwd(), dict(os.environ)
    os.chdir(run)
    os.environ.update(env, PYTHONPATH=os.pathsep.join([".", "lib", ""]))
    try:
        render_report(notebook, {}, tmp_path / "probe.html")
    finally:
        os.chdir(saved[0])
        os.environ.clear()
        os.environ.update(saved[1])
    executed = nbformat.read(tmp_path / "probe.executed.ipynb", as_version=4)
    seen = json.loads(executed.cells[-1].outputs[0].text)
    cwd = Path(seen["cwd"])
    assert cwd.name.startswith("ssdlab-kernel-") and not cwd.exists()  # removed afterwards
    assert "" not in seen["path"] and not _under(seen["path"], run)
    assert _ran(markers) == []


def test_batch_inside_results_runs_nothing_planted_there(
    planted_run: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """The batch's worker processes and kernels, started from inside the results root."""
    run, markers, env = planted_run
    root = tmp_path / "root"
    root.mkdir()
    run.rename(root / "run")
    _plant(root, markers)
    env = {**env, "PYTHONSTARTUP": str(root / "startup.py"), "HOME": str(root)}
    proc = _ssdlab([str(SSDLAB), "batch", ".", "-o", str(tmp_path / "out"), "-j", "1"], root, env)
    assert _ran(markers) == []
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "index.html").is_file()


def test_kernel_environment_leaves_out_the_working_directory(tmp_path: Path) -> None:
    here = os.getcwd()
    pythonpath = os.pathsep.join(["", ".", "lib", here, "/opt/site", str(tmp_path)])
    assert trusted_pythonpath(pythonpath) == os.pathsep.join(["/opt/site", str(tmp_path)])
    base = {"PYTHONSTARTUP": "x.py", "PYTHONPATH": ".", "IPYTHONDIR": "here", "KEEP": "1"}
    env = kernel_environment(base, tmp_path)
    assert env == {"KEEP": "1", "PYTHONSAFEPATH": "1", "IPYTHONDIR": str(tmp_path / "ipython")}


async def _lab_kernel_sees(root: Path) -> dict:
    """Start a kernel as JupyterLab's server does for ``root/explore.ipynb`` (its kernel
    manager, its environment: run in the server's environment) and report what it sees."""
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

    manager = AsyncMappingKernelManager(root_dir=str(root))
    env = {**os.environ, "JPY_SESSION_NAME": str(root / LAB_NOTEBOOK)}
    kernel_id = await manager.start_kernel(path=LAB_NOTEBOOK, kernel_name="python3", env=env)
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    outputs: list[str] = []
    try:
        await client.wait_for_ready(timeout=120)
        code = (
            "import os, sys, json\n"
            "try:\n    import polars\n    where = polars.__file__\n"
            "except ImportError as exc:\n    where = repr(exc)\n"
            "print(json.dumps({'cwd': os.getcwd(), 'path': sys.path, 'polars': where}))"
        )

        def keep(msg: dict) -> None:
            if msg["msg_type"] == "stream":
                outputs.append(msg["content"]["text"])

        await client.execute_interactive(code, output_hook=keep, timeout=120)
    finally:
        client.stop_channels()
        await manager.shutdown_all(now=True)
    return json.loads("".join(outputs))


_LAB_PROBE = """
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_report_isolation import _lab_kernel_sees
print(json.dumps(asyncio.run(_lab_kernel_sees(Path({root!r})))))
"""


def test_lab_kernels_import_nothing_from_the_results(
    planted_run: tuple[Path, Path, dict[str, str]],
) -> None:
    """``ssdlab lab``'s server command and environment; a kernel started as its server would
    start one (in the notebook's directory, the results root) imports nothing from there."""
    run, markers, env = planted_run
    saved = os.getcwd(), dict(os.environ)
    os.chdir(run)
    os.environ.update(env)
    try:
        with private_directory() as private:
            args, lab_env = lab_process(run, private, ["--no-browser"])
            assert args[:3] == [sys.executable, "-m", "jupyterlab"]
            assert f"--ServerApp.root_dir={run.resolve()}" in args
            probe = _LAB_PROBE.format(tests=str(Path(__file__).parent), root=str(run))
            # the probe itself must not import from the results: it runs where the server does
            proc = subprocess.run(
                [sys.executable, "-c", probe],
                cwd=private,
                env=lab_env,
                capture_output=True,
                text=True,
                timeout=300,
            )
    finally:
        os.chdir(saved[0])
        os.environ.clear()
        os.environ.update(saved[1])
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(seen["cwd"]) == run.resolve()  # users open files beside their notebook
    assert "site-packages" in seen["polars"], seen["polars"]
    assert not _under(seen["path"], run)
    assert _ran(markers) == []


#: modules ``ssdlab/__init__.py`` imports (``__future__`` by a future statement, ``typing``)
#: and one the CLI imports; Python's own runpy imports ``contextlib``, ``collections`` and a
#: few others from the working directory before any ssdlab code runs
PACKAGE_IMPORTS = ["__future__", "typing", "json", "dataclasses"]


@pytest.mark.parametrize("command", [["summary", "RUN"], ["--version"]])
def test_python_m_ssdlab_imports_nothing_from_the_working_directory(
    tiny_run: Path, tmp_path: Path, command: list[str]
) -> None:
    """The package's own imports ran a ``typing.py`` planted where ``python -m ssdlab``
    started, before ``__main__`` could drop the working directory from sys.path."""
    run, markers = tmp_path / "run", tmp_path / "markers"
    shutil.copytree(tiny_run, run)
    markers.mkdir()
    for name in PACKAGE_IMPORTS:
        (run / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w')\n")
    args = [str(run) if a == "RUN" else a for a in command]
    proc = _ssdlab([sys.executable, "-m", "ssdlab", *args], run, {})
    assert _ran(markers) == [] and proc.returncode == 0, proc.stderr


def test_importing_ssdlab_leaves_sys_path_alone(tmp_path: Path) -> None:
    """Only ``python -m ssdlab`` drops the working directory: a notebook's import does not."""
    code = "import sys; p = list(sys.path); import ssdlab; print(p == sys.path, repr(p[0]))"
    proc = _ssdlab([sys.executable, "-c", code], tmp_path, {})
    assert proc.stdout.split() == ["True", "''"], proc.stderr
