"""Shared fixtures: real fio runs on files the tests create, shared per session for speed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"

TINY_SUITE = """
name = "tiny"
description = "Two short steps for tests."

[defaults]
runtime_s = 2
ramp_s = 0.5
size = "16m"
ioengine = "psync"

[[steps]]
name = "randread-4k-2jobs"
rw = "randread"
bs = "4k"
numjobs = 2

[[steps]]
name = "randrw70-8k-qd4"
rw = "randrw"
rwmixread = 70
bs = "8k"
ioengine = "libaio"
iodepth = 4
"""


def pytest_configure(config: pytest.Config) -> None:
    if shutil.which("fio") is None:
        raise pytest.UsageError("fio is not installed: run the tests with `make test`")


def ssdlab_cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the ssdlab command line as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="session")
def tiny_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "tiny.toml"
    path.write_text(TINY_SUITE)
    return path


@pytest.fixture(scope="session")
def tiny_run(tiny_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of the tiny suite against a temporary file."""
    out = tmp_path_factory.mktemp("runs") / "tiny"
    proc = ssdlab_cli("run", tiny_suite, "--out", out, "--label", "test file")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
