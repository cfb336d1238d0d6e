"""Device identification and the write-safety verdict, on loop devices the tests create.

Only loop devices attached here (to image files under tmp_path) are ever checked, mounted or
detached; the teardown unmounts and detaches them even when a test fails.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import IMAGE_BYTES, Loops, needs_loop, sh

from ssdlab import devices
from ssdlab.devices import DeviceInfo, check_readable, check_writable, list_devices, verdict
from ssdlab.errors import SsdlabError


def name_of(device: str) -> str:
    return Path(device).name


def refusal(device: str | Path, confirm: str | None = None) -> str:
    with pytest.raises(SsdlabError) as info:
        check_writable(device, confirm)
    return str(info.value)


@needs_loop
def test_blank_device_needs_matching_confirmation(loops: Loops) -> None:
    blank, other = loops.blank(), loops.blank()
    name = name_of(blank)
    assert verdict(check_readable(blank)) == f"writable with --destroy-data {name}"
    message = refusal(blank)
    assert message.startswith(f"{blank} ({name}: loop, 64 MiB, model -, serial -) passed")
    assert f"pass --destroy-data with its kernel name {name} (e.g. --destroy-data {name})" in (
        message
    )
    wrong = refusal(blank, name_of(other))
    assert f"--destroy-data '{name_of(other)}' does not match {blank}" in wrong
    assert "Nothing was written." in wrong
    assert "does not match" in refusal(blank, "")
    for confirm in (name, blank):
        info = check_writable(blank, confirm)
        assert (info.name, info.path, info.type) == (name, blank, "loop")
        assert info.size_bytes == IMAGE_BYTES
        assert (info.logical_block_bytes, info.physical_block_bytes) == (512, 512)
        assert not info.read_only and info.mountpoints == [] and info.children == []


@needs_loop
def test_confirmation_by_serial(loops: Loops, monkeypatch: pytest.MonkeyPatch) -> None:
    blank = loops.blank()
    (node,) = devices._lsblk(blank)
    monkeypatch.setattr(devices, "_lsblk", lambda *paths: [{**node, "serial": " S3XYZ "}])
    assert "its kernel name" in refusal(blank)
    assert "or its serial S3XYZ" in refusal(blank)
    assert check_writable(blank, "S3XYZ").serial == "S3XYZ"
    assert "does not match" in refusal(blank, "S3XY")


@needs_loop
def test_filesystem_signature_refused(loops: Loops) -> None:
    image = loops.image("ext4")
    sh("mkfs.ext4", "-q", "-F", image)
    device = loops.attach(image)
    message = refusal(device, name_of(device))
    assert message.startswith(f"Refusing to write to {device} ({name_of(device)}: loop,")
    assert "wipefs finds signatures on it (ext4 filesystem at offset 0x438)" in message
    assert f"wipefs --all {device}" in message
    assert verdict(check_readable(device)) == "refused: ext4 filesystem signature"


@needs_loop
def test_mounted_device_refused(loops: Loops) -> None:
    image = loops.image("mounted")
    sh("mkfs.ext4", "-q", "-F", image)
    device = loops.attach(image)
    target = loops.mount(device)
    message = refusal(device, name_of(device))
    assert f"it is mounted ({name_of(device)} at {target})" in message
    assert "Unmount it" in message
    assert "Also: ext4 filesystem signature; held open exclusively." in message
    assert verdict(check_readable(device)) == f"refused: mounted at {target}"


@needs_loop
def test_partitioned_device_refused(loops: Loops) -> None:
    image = loops.image("partitioned")
    # an MBR with one Linux partition from sector 2048 to the end
    entry = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, IMAGE_BYTES // 512 - 2048)
    with image.open("r+b") as f:
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")
    device = loops.attach(image, "--partscan")
    sh("partx", "--update", device)  # in case the kernel has no MBR parser
    part = f"{name_of(device)}p1"
    message = refusal(device, name_of(device))
    assert f"it has partitions ({part})" in message
    assert "Also: dos partition table signature." in message
    info = check_readable(device)
    assert [(c.name, c.type) for c in info.children] == [(part, "part")]
    assert verdict(info) == f"refused: has partitions {part}"


@needs_loop
def test_read_only_device_refused(loops: Loops) -> None:
    device = loops.blank("--read-only")
    message = refusal(device, name_of(device))
    assert "the kernel reports it read-only" in message
    assert check_readable(device).read_only
    assert verdict(check_readable(device)) == "refused: read-only"


@needs_loop
def test_exclusively_held_device_refused(loops: Loops) -> None:
    device = loops.blank()
    fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    try:
        message = refusal(device, name_of(device))
    finally:
        os.close(fd)
    assert "another user holds it open exclusively" in message
    assert check_writable(device, name_of(device)).name == name_of(device)


@needs_loop
def test_root_and_swap_refused(loops: Loops) -> None:
    # what lsblk would report for the root disk and a swap device, on a blank loop of ours
    blank = check_readable(loops.blank())
    root = blank.model_copy(update={"mountpoints": ["/"]})
    assert verdict(root) == "refused: backs the root filesystem"
    swap = blank.model_copy(update={"mountpoints": ["[SWAP]"]})
    assert verdict(swap) == f"refused: used as swap ({blank.name})"
    held = blank.model_copy(
        update={"children": [blank.model_copy(update={"name": "dm-7", "type": "lvm"})]}
    )
    assert verdict(held) == "refused: held by dm-7 (lvm)"


@needs_loop
def test_listing_includes_our_device(loops: Loops) -> None:
    device = loops.blank()
    (info,) = [d for d in list_devices() if d.path == device]
    assert (info.name, info.type, info.size_bytes) == (name_of(device), "loop", IMAGE_BYTES)


def test_check_readable_refuses_non_devices(tmp_path: Path) -> None:
    with pytest.raises(SsdlabError, match="does not exist"):
        check_readable(tmp_path / "missing")
    regular = tmp_path / "file"
    regular.write_bytes(b"")
    with pytest.raises(SsdlabError, match="is not a block device"):
        check_readable(regular)
    with pytest.raises(SsdlabError, match="is not a block device"):
        check_writable(regular, "file")


NVME_LSBLK: list[dict[str, Any]] = [
    {
        "name": "nvme0n1", "kname": "nvme0n1", "path": "/dev/nvme0n1", "type": "disk",
        "size": "3840755982336", "model": None, "serial": "", "rev": None, "log-sec": "4096",
        "phy-sec": "4096", "tran": "nvme", "ro": "0", "mountpoints": [None],
        "children": [
            {
                "name": "nvme0n1p1", "kname": "nvme0n1p1", "path": "/dev/nvme0n1p1",
                "type": "part", "size": 1048576, "model": None, "serial": None, "rev": None,
                "log-sec": 4096, "phy-sec": 4096, "tran": "nvme", "ro": False,
                "mountpoints": ["/data", "/srv"],
            }
        ],
    }
]  # fmt: skip


def test_listing_fills_nvme_identity_from_sysfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sysfs = tmp_path / "nvme0n1" / "device"
    sysfs.mkdir(parents=True)
    (sysfs / "model").write_text("SAMSUNG MZQL23T8HCLS-00A07               \n")
    (sysfs / "serial").write_text("  S64HNE0T123456\n")
    (sysfs / "firmware_rev").write_text("GDC5602Q\n")
    monkeypatch.setattr(devices, "SYS_CLASS_BLOCK", tmp_path)
    monkeypatch.setattr(devices, "_lsblk", lambda *paths: NVME_LSBLK)
    (disk,) = list_devices()
    assert disk == DeviceInfo(
        name="nvme0n1",
        path="/dev/nvme0n1",
        type="disk",
        size_bytes=3840755982336,
        logical_block_bytes=4096,
        physical_block_bytes=4096,
        model="SAMSUNG MZQL23T8HCLS-00A07",
        serial="S64HNE0T123456",
        firmware="GDC5602Q",
        transport="nvme",
        read_only=False,
        children=[
            DeviceInfo(
                name="nvme0n1p1",
                path="/dev/nvme0n1p1",
                type="part",
                size_bytes=1048576,
                logical_block_bytes=4096,
                physical_block_bytes=4096,
                transport="nvme",
                mountpoints=["/data", "/srv"],
            )
        ],
    )
    assert (
        disk.describe() == "disk, 3.5 TiB, model SAMSUNG MZQL23T8HCLS-00A07, serial S64HNE0T123456"
    )
    assert [d.name for d in disk.tree()] == ["nvme0n1", "nvme0n1p1"]
