"""The write-safety gate judges a block device through its whole stack: loop devices over
loop devices (with offsets and size limits), partitions and their disk, device-mapper slaves,
and loop devices attached on top of it. Only loop devices (and device-mapper devices) the
tests attach to images under tmp_path are checked, mounted, detached or removed."""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMAGE_BYTES, Loops, needs_loop, sh, ssdlab_cli

from ssdlab.devices import check_readable, check_same, check_writable, verdict
from ssdlab.errors import SsdlabError
from ssdlab.lock import lock_directory
from ssdlab.stack import backing_files, resolve_stack
from ssdlab.target import check_unchanged, judge_target

MIB = 2**20


def name_of(device: str) -> str:
    return Path(device).name


def refusal(device: str, confirm: str | None = None) -> str:
    with pytest.raises(SsdlabError) as info:
        check_writable(device, confirm or name_of(device))
    return str(info.value)


def over(loops: Loops, device: str, *options: str) -> str:
    """A loop device attached to the block device ``device`` (detached by ``loops``)."""
    return loops.attach(Path(device), *options)


def mkfs(device: str | Path) -> None:
    sh("mkfs.ext4", "-q", "-F", device)


@needs_loop
def test_offset_loop_over_mounted_file_system_is_refused_naming_the_chain(
    loops: Loops, tmp_path: Path
) -> None:
    image = loops.image("ext4")
    mkfs(image)
    lower = loops.attach(image)
    mounted = loops.mount(lower)
    (mounted / "keep").write_text("precious")
    upper = over(loops, lower, "--offset", str(MIB))
    chain = f"{name_of(upper)} -> {name_of(lower)} at offset 1 MiB"
    message = refusal(upper)
    assert message.startswith(f"Refusing to write to {upper} ({chain} -> mounted at {mounted}): ")
    assert f"lands on {lower} beneath it ({chain}), and {name_of(lower)} is refused: it is " in (
        message
    )
    assert f"mounted ({name_of(lower)} at {mounted})" in message
    assert verdict(check_readable(upper)) == f"refused: {chain} -> mounted at {mounted}"
    assert check_readable(upper).size_bytes == IMAGE_BYTES - MIB  # read-only suites still may
    # the command line refuses it before fio writes anything
    suite = tmp_path / "write.toml"
    suite.write_text(
        'name = "w"\n[defaults]\nruntime_s = 1\nsize = "1m"\n'
        '[[steps]]\nname = "w"\nrw = "write"\nbs = "4k"\n'
    )
    run = ssdlab_cli(
        "run", suite, "--out", tmp_path / "run", "--target", upper,
        "--destroy-data", name_of(upper), timeout=120,
    )  # fmt: skip
    assert run.returncode != 0
    assert f"Refusing to write to {upper} ({chain} -> mounted at {mounted})" in run.stderr
    assert "Traceback" not in run.stderr
    sh("umount", mounted)
    assert verdict(check_readable(upper)) == f"refused: {chain} -> ext4 filesystem signature"
    assert "wipefs finds signatures on it (ext4 filesystem at offset 0x438)" in refusal(upper)


@needs_loop
def test_offset_loop_over_blank_device_is_writable(loops: Loops) -> None:
    lower = loops.blank()
    upper = over(loops, lower, "--offset", str(MIB))
    assert check_writable(upper, name_of(upper)).size_bytes == IMAGE_BYTES - MIB
    assert verdict(check_readable(upper)) == f"writable with --destroy-data {name_of(upper)}"
    chain = f"{name_of(upper)} -> {name_of(lower)} at offset 1 MiB"
    assert [(layer.chain, layer.name) for layer in resolve_stack(name_of(upper))] == [
        (chain, name_of(lower)),
        (f"{chain} -> {loops.attached[0][1].resolve()}", None),
    ]


@needs_loop
def test_signature_anywhere_beneath_a_size_limited_window_is_refused(loops: Loops) -> None:
    bottom = loops.blank()
    middle = over(loops, bottom, "--offset", str(2 * MIB))
    top = over(loops, middle, "--offset", str(MIB), "--sizelimit", str(8 * MIB))
    assert check_writable(top, name_of(top)).size_bytes == 8 * MIB
    mkfs(bottom)  # a signature at the start of the bottom device only, outside every window
    chain = (
        f"{name_of(top)} -> {name_of(middle)} at offset 1 MiB, 8 MiB long -> "
        f"{name_of(bottom)} at offset 2 MiB"
    )
    assert verdict(check_readable(top)) == f"refused: {chain} -> ext4 filesystem signature"
    message = refusal(top)
    assert f"({chain} -> ext4 filesystem signature): what it writes lands on {bottom}" in message
    assert f"erase the signatures with wipefs --all {bottom}" in message


@needs_loop
def test_data_written_beneath_a_device_held_open_above_it_is_seen(loops: Loops) -> None:
    lower = loops.blank()
    upper = over(loops, lower, "--offset", str(MIB))  # keeps lower open: its cache stays
    assert check_writable(upper, name_of(upper)).name == name_of(upper)  # lower probed: zeros
    mkfs(loops.attached[0][1])  # a file system written into lower's backing file directly
    chain = f"{name_of(upper)} -> {name_of(lower)} at offset 1 MiB"
    assert verdict(check_readable(upper)) == f"refused: {chain} -> ext4 filesystem signature"


@needs_loop
def test_loop_attached_on_top_of_the_target_is_refused(loops: Loops) -> None:
    target = loops.blank()
    upper = over(loops, target, "--offset", str(MIB))
    mkfs(upper)
    mounted = loops.mount(upper)
    assert verdict(check_readable(target)) == f"refused: loop device {name_of(upper)} attached"
    message = refusal(target)
    assert f"the loop device {name_of(upper)} is attached to it (losetup)" in message
    assert f"losetup --detach {upper}" in message
    sh("umount", mounted)  # unused, it is still refused: its data lives in the target
    assert verdict(check_readable(target)) == f"refused: loop device {name_of(upper)} attached"


def write_mbr(image: Path) -> None:
    """One Linux partition from 1 MiB to the end of the image."""
    entry = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, IMAGE_BYTES // 512 - 2048)
    with image.open("r+b") as f:
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")


@needs_loop
def test_partition_is_refused_through_its_partitioned_disk(loops: Loops) -> None:
    image = loops.image("partitioned")
    write_mbr(image)
    disk = loops.attach(image, "--partscan")
    sh("partx", "--update", disk)  # in case the kernel has no MBR parser
    part = f"{disk}p1"
    chain = f"{name_of(part)} -> {name_of(disk)} at offset 1 MiB"
    assert verdict(check_readable(part)) == f"refused: {chain} -> has partitions {name_of(part)}"
    message = refusal(part)
    assert message.startswith(f"Refusing to write to {part} ({chain} -> has partitions ")
    assert f"Also: {chain} -> dos partition table signature." in message
    stacked = over(loops, part)  # a loop device over the partition node
    assert verdict(check_readable(stacked)) == (
        f"refused: {name_of(stacked)} -> {chain} -> has partitions {name_of(part)}"
    )
    assert backing_files(stacked) == [image.resolve()]


@pytest.fixture
def mapper(loops: Loops) -> Iterator[list[str]]:
    """Names of device-mapper devices a test creates; removed afterwards."""
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup is not installed")
    created: list[str] = []
    yield created
    for name in reversed(created):
        subprocess.run(["dmsetup", "remove", "--noudevsync", name], check=False, timeout=60)


def linear(mapper: list[str], name: str, device: str, sectors: int, start: int = 0) -> str:
    """/dev/dm-N: a linear device-mapper device over ``sectors`` of ``device`` from ``start``."""
    table = f"0 {sectors} linear {device} {start}"
    proc = subprocess.run(
        ["dmsetup", "create", "--noudevsync", name, "--table", table],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"device mapper does not work here: dmsetup create: {proc.stderr.strip()}")
    mapper.append(name)
    kernel = sh("dmsetup", "info", "-c", "--noheadings", "-o", "blkdevname", name)
    if not Path(f"/dev/{kernel}").exists():
        pytest.skip(f"no /dev/{kernel} node for the device-mapper device (no udev)")
    return f"/dev/{kernel}"


@needs_loop
def test_device_mapper_slave_held_only_by_the_stack(loops: Loops, mapper: list[str]) -> None:
    lower = loops.blank()
    half = IMAGE_BYTES // 512 // 2
    first = linear(mapper, f"ssdlab-stack-{os.getpid()}-a", lower, half)
    assert check_writable(first, name_of(first)).size_bytes == IMAGE_BYTES // 2
    second = linear(mapper, f"ssdlab-stack-{os.getpid()}-b", lower, half, half)
    chain = f"{name_of(first)} -> {name_of(lower)}"
    assert verdict(check_readable(first)) == (f"refused: {chain} -> held by {name_of(second)} (dm)")


@needs_loop
def test_check_same_refuses_once_a_lower_device_is_mounted(loops: Loops) -> None:
    lower = loops.blank()
    upper = over(loops, lower, "--offset", str(MIB))
    recorded = check_writable(upper, name_of(upper)).model_dump(exclude={"children"})
    check_same(upper, recorded, writes=True)
    mkfs(lower)
    mounted = loops.mount(lower)
    with pytest.raises(SsdlabError) as info:
        check_same(upper, recorded, writes=True)
    chain = f"{name_of(upper)} -> {name_of(lower)} at offset 1 MiB"
    assert str(info.value).startswith(
        f"Refusing to write to {upper} ({chain} -> mounted at {mounted}): "
    )
    check_same(upper, recorded, writes=False)  # a read-only step may still read it


@needs_loop
def test_backing_files_are_found_through_two_loop_layers_by_identity(loops: Loops) -> None:
    bottom = loops.blank()
    image = loops.attached[0][1].resolve()
    top = over(loops, over(loops, bottom), "--offset", str(MIB))
    assert backing_files(top) == backing_files(bottom) == [image]
    moved = image.with_name("moved.img")
    image.rename(moved)
    try:
        image.write_bytes(b"")  # another file where the backing file was
        assert backing_files(top) == [moved]  # the file itself, wherever it is now
        image.unlink()
        moved.rename(image)
    finally:
        if moved.exists():
            moved.replace(image)
    with pytest.raises(SsdlabError, match="is not a block device"):
        backing_files(image)


@needs_loop
def test_a_deleted_backing_file_cannot_be_judged(loops: Loops) -> None:
    bottom = loops.blank()
    top = over(loops, bottom)
    try:
        loops.attached[0][1].unlink()
        with pytest.raises(SsdlabError, match="is no longer at that path"):
            backing_files(top)
        assert verdict(check_readable(top)) == "refused: what lies beneath it cannot be told"
        assert "is no longer at that path (deleted, moved or replaced)" in refusal(top)
    finally:  # the fixture detaches only devices whose backing file is still there
        sh("losetup", "--detach", top)
        sh("losetup", "--detach", bottom)


WRITE_SUITE = (
    'name = "w"\n[defaults]\nruntime_s = 1\nsize = "1m"\n'
    '[[steps]]\nname = "w"\nrw = "write"\nbs = "4k"\n'
)


@needs_loop
def test_a_file_another_loop_device_uses_as_well_is_refused(loops: Loops, tmp_path: Path) -> None:
    image = loops.image("shared")
    mkfs(image)
    first = loops.attach(image)
    mounted = loops.mount(first)
    second = loops.attach(image, "--offset", str(4 * MIB))
    chain = f"{name_of(second)} -> {image.resolve()} at offset 4 MiB"
    short = f"{chain} -> also used by loop device {name_of(first)}"
    assert refusal(second).startswith(f"Refusing to write to {second} ({short}): ")
    assert verdict(check_readable(second)) == f"refused: {short}"
    suite = tmp_path / "w.toml"
    suite.write_text(WRITE_SUITE)
    run = ssdlab_cli(
        "run", suite, "--out", tmp_path / "run", "--target", second,
        "--destroy-data", name_of(second), timeout=120,
    )  # fmt: skip
    assert run.returncode == 1 and f"Refusing to write to {second} ({short})" in run.stderr
    sh("umount", mounted)  # unmounted, the first device still holds the same bytes
    assert verdict(check_readable(second)) == f"refused: {short}"
    assert verdict(check_readable(first)).startswith("refused: ")


@needs_loop
def test_a_backing_file_is_known_by_its_inode_under_any_name(loops: Loops, tmp_path: Path) -> None:
    image = loops.image("renamed")
    device = loops.attach(image)
    link = tmp_path / "other-name"
    os.link(image, link)
    image.unlink()  # sysfs now names "renamed.img (deleted)"; the link has one name
    try:
        with pytest.raises(SsdlabError, match=f"{link}: it backs the loop device {device}"):
            judge_target(link, writes=True, confirm=None, own_dir=None)
    finally:  # the fixture detaches only devices whose backing file is still there
        sh("losetup", "--detach", device)


@needs_loop
def test_each_step_judges_the_files_beneath_a_device_again(loops: Loops, tmp_path: Path) -> None:
    image = loops.image("later")
    device = loops.attach(image)
    info = judge_target(device, writes=True, confirm=name_of(device), own_dir=None)
    check_unchanged(info, writes=True)
    results = tmp_path / "results"
    results.mkdir()
    (results / "manifest.json").write_text("{}")
    os.link(image, results / "kept.img")  # after planning, a name in a results directory
    with pytest.raises(SsdlabError, match=f"its bytes are in {image.resolve()}: it has 2 hard"):
        check_unchanged(info, writes=True)


@needs_loop
def test_runs_whose_stacks_share_a_device_exclude_each_other(loops: Loops, tmp_path: Path) -> None:
    lower = loops.blank()
    upper = over(loops, lower, "--offset", str(MIB))
    number = os.stat(lower).st_rdev
    # what a run of the lower device holds (as one of /dev/zram0, with no file beneath, would)
    lock = lock_directory() / f"block-{os.major(number)}-{os.minor(number)}.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"read\npid 1: ssdlab run reads.toml", 0)
        suite = tmp_path / "w.toml"
        suite.write_text(WRITE_SUITE)
        run = ssdlab_cli(
            "run", suite, "--out", tmp_path / "run", "--target", upper,
            "--destroy-data", name_of(upper), timeout=120,
        )  # fmt: skip
    finally:
        os.close(fd)
    assert run.returncode == 1 and run.stderr.strip() == (
        f"error: {upper} is being read by another ssdlab process (pid 1: ssdlab run "
        "reads.toml); wait for it to end"
    )


@needs_loop
def test_without_root_sysfs_gives_the_same_identity_or_refuses(
    loops: Loops, tmp_path: Path
) -> None:
    """A user who may not open a loop device reads its backing file from sysfs: the same
    identity as the kernel's reply; a deleted backing file stands for its whole file system."""
    from ssdlab import stack

    image = loops.image("sysfs")
    device = loops.attach(image, "--offset", str(MIB), "--sizelimit", str(8 * MIB))
    name = name_of(device)
    assert stack._sysfs_status(name) == stack.loop_status(name)
    link = tmp_path / "other-name"
    os.link(image, link)
    image.unlink()
    try:
        device_id, inode, rdev, offset, limit = stack._sysfs_status(name)
        assert (device_id, inode, rdev) == (os.stat(tmp_path).st_dev, 0, 0)
        assert (offset, limit) == (MIB, 8 * MIB)
    finally:  # the fixture detaches only devices whose backing file is still there
        sh("losetup", "--detach", device)
