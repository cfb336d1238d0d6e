"""A target is resolved once when planned and checked before every step: swapping a symlink,
a file or a device under a run stops it before fio writes anything to what was swapped in."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, sh, ssdlab_cli

from ssdlab.errors import SsdlabError
from ssdlab.execute import RunHook
from ssdlab.layout import MANIFEST, TEMP_TARGET
from ssdlab.manifest import Manifest, StepRecord
from ssdlab.runner import run_suite
from ssdlab.suite import load_suite
from ssdlab.target import plan_target

#: three tiny writing steps (a few MiB each, no runtime): the swap happens after the first
SUITE = """
name = "swap"
[defaults]
size = "1m"
bs = "64k"
ioengine = "psync"
rw = "write"
loops = 1
[[steps]]
name = "a"
[[steps]]
name = "b"
[[steps]]
name = "c"
"""


class AfterFirst(RunHook):
    """Calls ``swap`` once, after the first step's fio exits."""

    def __init__(self, swap: object) -> None:
        self.swap = swap

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        if record.index == 1:
            self.swap()  # type: ignore[operator]


def digest(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def swap_symlink(link: Path, to: str | Path) -> None:
    """``ln -sfn to link``, atomically."""
    tmp = link.with_name(link.name + ".new")
    tmp.symlink_to(to)
    os.replace(tmp, link)


def run(out: Path, target: Path, swap: object, **kwargs: object) -> Manifest:
    """Run :data:`SUITE` (written next to ``out``) into ``out``, ``swap`` after step 1."""
    suite = out.with_name("swap.toml")
    suite.write_text(SUITE)
    hooks = [AfterFirst(swap)]
    return run_suite(load_suite(suite), out, target=target, hooks=hooks, **kwargs)  # type: ignore[arg-type]


def job_targets(out: Path) -> set[str]:
    jobs = (out / "steps").glob("*/job.fio")
    return {line for job in jobs for line in job.read_text().splitlines() if "filename=" in line}


@needs_loop
def test_a_symlink_target_is_resolved_once_and_resumes(tmp_path: Path, loops: Loops) -> None:
    """The review's reproducer: ``ln -sfn /dev/loopN lnk`` after step 1 leaves the device
    alone; the manifest and job files name the resolved file; the same symlink resumes."""
    device = loops.blank()
    before = digest(device)
    data, link, out = tmp_path / "data", tmp_path / "lnk", tmp_path / "o"
    link.symlink_to(data)
    manifest = run(out, link, lambda: swap_symlink(link, device))
    assert manifest.status == "complete" and manifest.target is not None
    assert manifest.target.path == str(data.resolve())
    assert job_targets(out) == {f"filename={data.resolve()}"}
    assert digest(device) == before
    swap_symlink(link, data)
    manifest = Manifest.load(out)
    assert run(out, link, lambda: None).target == manifest.target  # nothing left to run


@needs_loop
def test_a_file_swapped_for_a_device_stops_the_run_before_fio(tmp_path: Path, loops: Loops) -> None:
    device = loops.blank()
    before = digest(device)
    data, out = tmp_path / "data", tmp_path / "o"
    with pytest.raises(SsdlabError) as raised:
        run(out, data, lambda: swap_symlink(data, device))
    error = str(raised.value)
    assert f"target {data} now resolves to {device} (a block device)" in error
    assert "stopped before step 'b'" in error and "\n" not in error
    assert digest(device) == before
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["status"] == "failed"
    assert [s["status"] for s in manifest["steps"]] == ["ok", "failed"]
    assert manifest["steps"][1]["error"] == error


@needs_loop
def test_a_device_replaced_under_a_run_stops_it(tmp_path: Path, loops: Loops) -> None:
    """The same /dev node now another device (a re-enumerated /dev/sdX): nothing written."""
    device = loops.blank()
    other = loops.directory / "other.img"
    other.write_bytes(os.urandom(2**20) * 32)  # 32 MiB, not the 64 of the first

    def reattach() -> None:
        sh("losetup", "--detach", device)
        sh("losetup", device, other)
        loops.attached.append((device, other))

    out = tmp_path / "o"
    with pytest.raises(SsdlabError) as raised:
        run(out, Path(device), reattach, destroy_data=device)
    assert f"{device} is now another device: size_bytes 67108864 → 33554432" in str(raised.value)
    assert other.read_bytes()[: 2**20] * 32 == other.read_bytes()  # untouched


@needs_loop
def test_a_device_formatted_under_a_run_stops_it(tmp_path: Path, loops: Loops) -> None:
    device = loops.blank()
    formatted: list[str] = []

    def mkswap() -> None:
        sh("mkswap", device)
        formatted.append(digest(device))

    with pytest.raises(SsdlabError) as raised:
        run(tmp_path / "o", Path(device), mkswap, destroy_data=device)
    assert str(raised.value).startswith(f"Refusing to write to {device} (loop")
    assert "wipefs finds signatures on it (swap" in str(raised.value)
    assert formatted == [digest(device)]


@pytest.mark.parametrize("path", ["/proc/self/status", "/sys/kernel/mm/ksm/run"])
def test_system_files_are_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(SsdlabError, match="cannot be under /sys or /proc"):
        plan_target(Path(path), tmp_path, size_bytes=2**24, writes=True)


def test_files_of_results_directories_are_refused(tmp_path: Path) -> None:
    for record in (MANIFEST, "fleet.json"):
        other = tmp_path / record.removesuffix(".json")
        other.mkdir()
        (other / record).write_text("{}")
        with pytest.raises(SsdlabError, match="a results directory's record cannot be a target"):
            plan_target(other / record, other, size_bytes=2**24, writes=True)  # even its own
        for name in ("data", "steps/001-a/fio.json"):
            (other / name).parent.mkdir(parents=True, exist_ok=True)
            (other / name).write_text("{}")
            with pytest.raises(SsdlabError, match=f"directory {other} cannot be a target"):
                plan_target(other / name, tmp_path / "o", size_bytes=2**24, writes=True)
    (other / TEMP_TARGET).write_text("")  # its own temporary target, on resume
    assert plan_target(None, other, size_bytes=2**24, writes=True).temporary
    own = plan_target(other / "data", other, size_bytes=2**24, writes=True)  # its own file
    assert own.path == str(other / "data")


@needs_loop
def test_the_backing_file_of_a_loop_device_is_refused(tmp_path: Path, loops: Loops) -> None:
    image = loops.image("backing")
    device = loops.attach(image)
    link = tmp_path / "img"
    link.symlink_to(image)
    proc = ssdlab_cli("run", "quick", "--target", link, "--out", tmp_path / "o")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"error: {image}: it backs the loop device {device}, which writing it would corrupt "
        f"(detach it first: losetup -d {device})"
    )
    assert not (tmp_path / "o").exists() and image.stat().st_size == 64 * 2**20
