"""Shared fixtures: real fio runs on files the tests create, shared per session for speed."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
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


def smart_tool(directory: Path) -> Path:
    """A SMART 'tool' printing the recorded smartctl captures
    ``tests/fixtures/telemetry/run/capture-1..4.json`` in turn (then 1 again), and logging
    the device it was given to ``directory/devices``."""
    captures = ROOT / "tests" / "fixtures" / "telemetry" / "run"
    script = directory / "fake-smartctl.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{directory}/count" 2>/dev/null || echo 0); n=$((n + 1))\n'
        f'echo "$n" > "{directory}/count"\n'
        f'echo "$1" >> "{directory}/devices"\n'
        f'cat "{captures}/capture-$(( (n - 1) % 4 + 1 )).json"\n'
    )
    script.chmod(0o755)
    return script


def ssdlab_cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the ssdlab command line as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def plugin_package(
    site: Path, module: str, code: str, entry_points: str, name: str | None = None
) -> Path:
    """An installed package in the folder ``site`` (for ``PYTHONPATH``): ``module``.py holding
    ``code`` and the distribution ``name`` (default ``module``) 1.0 declaring
    ``entry_points`` (the text of an ``entry_points.txt``); returns ``site``."""
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"{module}.py").write_text(code)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name or module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    return site


def python_with(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a fresh interpreter that finds the packages in ``site``."""
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def run_suite_text(directory: Path, text: str, label: str) -> Path:
    """Run the suite ``text`` (written to ``directory/suite.toml``) into ``directory/run``
    with the command line; the results directory."""
    (directory / "suite.toml").write_text(text)
    proc = ssdlab_cli("run", directory / "suite.toml", "--out", directory / "run", "--label", label)
    assert proc.returncode == 0, proc.stderr
    return directory / "run"


#: Files whose tests take longest (minutes of fio runs, notebooks and Chromium), longest
#: first. ``make test`` hands whole files to its pytest-xdist workers (``--dist loadfile``:
#: a module-scoped fixture, such as a finished run or a rendered report, is then built once)
#: in collection order, so these are collected first: started late, one of them would keep
#: one worker busy long after the other ran out of work. Only the order changes.
LONGEST_FILES = (
    "test_report_screens.py",
    "test_pts_report.py",
    "test_suites_run.py",
    "test_findings.py",
    "test_review_page.py",
    "test_recovery.py",
    "test_fleet_endurance.py",
    "test_load_sweep.py",
    "test_repeats.py",
    "test_fleet.py",
    "test_multi_target.py",
    "test_trust_run.py",
    "test_batch.py",
    "test_review.py",
    "test_act_cli.py",
    "test_fleet_safety.py",
    "test_compare.py",
    "test_compare_honest.py",
    "test_latency_review.py",
    "test_fill.py",
    "test_relayout_identical.py",
    "test_qos.py",
    "test_jesd219.py",
    "test_startup_imports.py",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker more than the CPUs this process may use; most tests wait on fio's
    runtime, a browser or a child process, not on the CPU."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: same order within


#: Fixtures that attach loop devices (``loops`` here, and fixtures of that name or
#: ``loop_device`` in test files). Tests using one run one at a time even across parallel
#: workers and pytest runs: some detach a device and attach another image to the same node,
#: which a concurrent ``losetup --find`` could take in between.
LOOP_FIXTURES = {"loops", "loop_device"}
LOOP_LOCK = Path(tempfile.gettempdir()) / "ssdlab-tests-loop-devices.lock"


@pytest.fixture(autouse=True)
def _one_loop_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """Holds ``LOOP_LOCK`` for a loop-device test: autouse, so set up before the test's
    loop fixtures and torn down after them."""
    if not LOOP_FIXTURES & set(request.fixturenames):
        yield
        return
    with LOOP_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        yield


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


# Loop devices: only those attached here (to images under tmp_path) are ever checked, mounted
# or detached; the teardown unmounts and detaches them even when a test fails.
IMAGE_BYTES = 64 * 1024 * 1024


def _loop_support() -> str | None:
    """Why loop devices cannot be used here, or None."""
    if os.geteuid() != 0:
        return "loop-device tests need root (losetup, mount)"
    if shutil.which("losetup") is None:
        return "losetup is not installed"
    probe = subprocess.run(["losetup", "--find"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"losetup cannot find a free loop device: {probe.stderr.strip()}"
    return None


needs_loop = pytest.mark.skipif(_loop_support() is not None, reason=str(_loop_support()))


def sh(*args: str | Path) -> str:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}: {proc.stderr}"
    return proc.stdout.strip()


class Loops:
    """Attaches loop devices to images in a directory; ``cleanup`` undoes everything."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.attached: list[tuple[str, Path]] = []
        self.mounted: list[Path] = []

    def image(self, name: str) -> Path:
        path = self.directory / f"{name}.img"
        with path.open("wb") as f:
            f.truncate(IMAGE_BYTES)
        return path

    def attach(self, image: Path, *options: str) -> str:
        device = sh("losetup", "--find", "--show", *options, image)
        self.attached.append((device, image))
        return device

    def blank(self, *options: str) -> str:
        return self.attach(self.image(f"blank{len(self.attached)}"), *options)

    def mount(self, device: str) -> Path:
        target = self.directory / f"mnt{len(self.mounted)}"
        target.mkdir()
        sh("mount", device, target)
        self.mounted.append(target)
        return target

    def cleanup(self) -> None:
        for target in reversed(self.mounted):
            if subprocess.run(["mountpoint", "-q", target], check=False).returncode == 0:
                subprocess.run(["umount", target], check=False)
        for device, image in reversed(self.attached):
            # detach only while the device still backs our image
            back = subprocess.run(
                ["losetup", "--list", "--noheadings", "--output", "BACK-FILE", device],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            if back == str(image.resolve()):
                subprocess.run(["losetup", "--detach", device], check=False)


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    created = Loops(tmp_path)
    try:
        yield created
    finally:
        created.cleanup()
