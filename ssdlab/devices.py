"""Block devices: what they are, and whether a destructive suite may write to one.

A device is writable only when nothing uses it and nothing on it looks like data: it is not
the root file system, not swap, not mounted (itself, a partition or a holder), not
read-only, has no partitions or holders (device mapper, LVM, md RAID) and no loop device
attached to it, carries no signature ``wipefs`` recognises, and the kernel grants an
exclusive open. The same holds for every block device beneath it, down to what finally holds
its bytes (:func:`ssdlab.stack.resolve_stack`: a loop device's backing device, device-mapper
and md slaves, a partition's disk), except that it may be held by the stack itself; and no
other loop device may use a regular file at the bottom. Those files are for the caller to
judge as file targets as well (:func:`ssdlab.stack.backing_files`). Even then the
user must name the device: ``--destroy-data`` with its kernel name (``loop3`` or
``/dev/loop3``) or its serial number.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from .errors import SsdlabError
from .stack import SYS_CLASS_BLOCK, attached_loops, device_node, device_number, resolve_stack
from .units import format_capacity

#: The command-line option that confirms a destructive run.
CONFIRM_OPTION = "--destroy-data"
LSBLK_COLUMNS = "NAME,KNAME,PATH,TYPE,SIZE,MODEL,SERIAL,REV,LOG-SEC,PHY-SEC,TRAN,RO,MOUNTPOINTS"
#: What identifies a device a run started on (:func:`check_same`).
IDENTITY = ("name", "model", "serial", "size_bytes")
#: lsblk's mount point for a device in use as swap.
SWAP = "[SWAP]"
#: sysfs files under /sys/class/block/<name>/device/ for what lsblk leaves empty (NVMe).
_SYSFS_ATTRS = {"model": ("model",), "serial": ("serial",), "firmware": ("firmware_rev", "rev")}
#: ioctl(BLKFLSBUF): drops a device's cached pages, which go stale while a device stacked on
#: it keeps it open and its bytes change beneath (a write to its backing file).
_BLKFLSBUF = 0x1261


class DeviceInfo(BaseModel):
    """One block device as lsblk describes it; ``children`` are its partitions and holders."""

    name: str
    path: str
    type: str
    size_bytes: int
    logical_block_bytes: int
    physical_block_bytes: int
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    transport: str | None = None
    read_only: bool = False
    mountpoints: list[str] = Field(default_factory=list)
    children: list[DeviceInfo] = Field(default_factory=list)

    def tree(self) -> Iterator[DeviceInfo]:
        """This device, then its partitions and holders, depth first."""
        yield self
        for child in self.children:
            yield from child.tree()

    def describe(self) -> str:
        """``loop, 64 MiB, model -, serial -``."""
        return (
            f"{self.type}, {format_capacity(self.size_bytes)}, model {self.model or '-'}, "
            f"serial {self.serial or '-'}"
        )


class _Refusal(NamedTuple):
    short: str  # for a listing: "mounted at /mnt/x"
    explanation: str  # a paragraph for the user, after "Refusing to write to <path>: "
    beneath: bool = False  # about a device beneath it: ``short`` names the chain


def _run(args: list[str]) -> str:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise SsdlabError(f"{args[0]} is not installed (it comes with util-linux)") from None
    if proc.returncode != 0:
        detail = proc.stderr.strip() or f"exit status {proc.returncode}"
        raise SsdlabError(f"{' '.join(args)} failed: {detail}")
    return proc.stdout


def _lsblk(*paths: str) -> list[dict[str, Any]]:
    """lsblk's JSON tree (sizes in bytes) of ``paths``, or of every device."""
    out = _run(["lsblk", "--json", "--bytes", "--output", LSBLK_COLUMNS, *paths])
    return json.loads(out)["blockdevices"] if out.strip() else []


def _text(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text or None


def _sysfs(name: str, field: str) -> str | None:
    for attr in _SYSFS_ATTRS[field]:
        try:
            return _text((SYS_CLASS_BLOCK / name / "device" / attr).read_text())
        except OSError:
            continue
    return None


def _device(node: dict[str, Any]) -> DeviceInfo:
    name = node["kname"]
    lsblk = {"model": node.get("model"), "serial": node.get("serial"), "firmware": node.get("rev")}
    return DeviceInfo(
        name=name,
        path=node.get("path") or f"/dev/{name}",
        type=node["type"],
        size_bytes=int(node["size"]),
        logical_block_bytes=int(node["log-sec"]),
        physical_block_bytes=int(node["phy-sec"]),
        **{key: _text(value) or _sysfs(name, key) for key, value in lsblk.items()},
        transport=_text(node.get("tran")),
        read_only=str(node.get("ro")).lower() in ("1", "true"),
        mountpoints=[m for m in node.get("mountpoints") or [] if m],
        children=[_device(child) for child in node.get("children") or []],
    )


def list_devices() -> list[DeviceInfo]:
    """Every block device lsblk lists at the top level, with its partitions and holders."""
    return [_device(node) for node in _lsblk()]


def check_readable(device_path: str | Path) -> DeviceInfo:
    """The device at ``device_path`` (symlinks followed); refused unless it is a block device."""
    path = Path(device_path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SsdlabError(
            f"{path} does not exist: give a block device such as /dev/nvme0n1 or /dev/sdb "
            "(lsblk lists them)"
        ) from None
    except OSError as exc:
        raise SsdlabError(f"{path}: cannot inspect it: {exc.strerror}") from None
    if not stat.S_ISBLK(mode):
        raise SsdlabError(
            f"{path} is not a block device: device suites test a drive such as /dev/nvme0n1 "
            "or /dev/sdb (lsblk lists them)"
        )
    nodes = _lsblk(os.path.realpath(path))
    if not nodes:
        raise SsdlabError(f"{path}: lsblk does not describe it")
    return _device(nodes[0])


def _signatures(path: str, *, fresh: bool) -> list[dict[str, str]]:
    """What wipefs finds on ``path``; ``fresh``: after dropping its cached pages."""
    if fresh:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                fcntl.ioctl(fd, _BLKFLSBUF)
            finally:
                os.close(fd)
    out = _run(["wipefs", "--no-act", "--json", "--output", "TYPE,USAGE,OFFSET", path])
    return json.loads(out)["signatures"] if out.strip() else []


def _exclusive_open_error(path: str) -> OSError | None:
    """Why the kernel refuses an exclusive (O_EXCL) open of ``path``, or ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        return exc
    os.close(fd)
    return None


def _held_by(name: str, stack: set[str]) -> bool:
    """Whether the block device ``name`` has holders, all of them devices of ``stack``."""
    holders = {path.name for path in (SYS_CLASS_BLOCK / name / "holders").glob("*")}
    return bool(holders) and holders <= stack


def _device_refusals(device: DeviceInfo, stack: set[str], attached: list[str]) -> list[_Refusal]:
    """Every reason not to write to ``device`` itself, most fundamental first. Holders in
    ``stack`` (the devices being judged) are not held against it; ``attached`` are the other
    loop devices attached to it."""
    children = [c for c in device.children if c.type == "part" or c.name not in stack]
    nodes = [device, *(node for child in children for node in child.tree())]
    mounts = [(n.name, m) for n in nodes for m in n.mountpoints if m != SWAP]
    swaps = [n.name for n in nodes if SWAP in n.mountpoints]
    partitions = [c.name for c in children if c.type == "part"]
    holders = [f"{c.name} ({c.type})" for c in children if c.type != "part"]
    where = "; ".join(f"{name} at {mount}" for name, mount in mounts)
    refusals = []
    if any(mount == "/" for _, mount in mounts):
        refusals.append(
            _Refusal(
                "backs the root filesystem",
                f"it holds the root file system of this machine ({where}). Writing to it "
                "would destroy the running system; choose a drive the system does not use.",
            )
        )
    if swaps:
        refusals.append(
            _Refusal(
                f"used as swap ({', '.join(swaps)})",
                f"it is in use as swap space ({', '.join(swaps)}). Writing to it would corrupt "
                "the memory of running programs. Turn the swap off (swapoff) and remove it "
                "from /etc/fstab if it should no longer be used, then try again.",
            )
        )
    if mounts:
        refusals.append(
            _Refusal(
                f"mounted at {', '.join(mount for _, mount in mounts)}",
                f"it is mounted ({where}). Writing to a mounted device destroys the file "
                "system while the system is using it. Unmount it (umount) and make sure it "
                "holds nothing you need before trying again.",
            )
        )
    if device.read_only:
        refusals.append(
            _Refusal(
                "read-only",
                "the kernel reports it read-only (a write-protected drive, or a loop device "
                "set up with --read-only), so write tests cannot run on it. Make it writable "
                f"(e.g. blockdev --setrw {device.path}) or choose another drive.",
            )
        )
    if partitions:
        refusals.append(
            _Refusal(
                f"has partitions {', '.join(partitions)}",
                f"it has partitions ({', '.join(partitions)}) that may hold data every write "
                "test would destroy. If nothing on the drive is needed, remove the partitions "
                f"and signatures (wipefs --all {device.path}) and try again.",
            )
        )
    if holders:
        refusals.append(
            _Refusal(
                f"held by {', '.join(holders)}",
                f"it is part of {', '.join(holders)} (device mapper, LVM, md RAID or similar), "
                "which writing to it would corrupt. Remove it from them (e.g. vgreduce, mdadm "
                "--remove, dmsetup remove) and try again.",
            )
        )
    if attached:
        loops = ", ".join(attached)
        refusals.append(
            _Refusal(
                f"loop device {loops} attached",
                f"the loop device {loops} is attached to it (losetup), so writing it changes "
                f"what {loops} holds, perhaps a file system in use. Detach it (losetup "
                f"--detach /dev/{attached[0]}) if nothing on it is needed, and try again.",
            )
        )
    if device.size_bytes == 0:
        refusals.append(
            _Refusal(
                "empty (0 bytes)",
                "it has no capacity (0 bytes): an unconfigured device such as an unused zram "
                "or loop device, or a drive without medium.",
            )
        )
    try:
        signatures = _signatures(device.path, fresh=not (mounts or swaps))
    except SsdlabError as exc:
        refusals.append(
            _Refusal(
                "signatures cannot be probed",
                f"probing it for signatures failed ({exc}), so whether it holds data cannot "
                "be told. Run ssdlab as root on a device the system does not use.",
            )
        )
    else:
        if signatures:
            kinds = [f"{s['type']} {s['usage'].replace('-', ' ')}" for s in signatures]
            found = "; ".join(
                f"{k} at offset {s['offset']}" for k, s in zip(kinds, signatures, strict=True)
            )
            refusals.append(
                _Refusal(
                    f"{', '.join(kinds)} signature",
                    f"wipefs finds signatures on it ({found}), so it may hold data a write "
                    f"test would destroy. Check what it holds (wipefs {device.path}, blkid -p "
                    f"{device.path}); if nothing is needed, erase the signatures with wipefs "
                    f"--all {device.path} and try again.",
                )
            )
    error = _exclusive_open_error(device.path)
    if error is not None and error.errno == errno.EBUSY and not _held_by(device.name, stack):
        refusals.append(
            _Refusal(
                "held open exclusively",
                "another user holds it open exclusively (the kernel refused an O_EXCL open "
                "with EBUSY): a file system, device mapper, md RAID or a program such as "
                f"another benchmark. Find and stop it (fuser -v {device.path}, dmsetup ls) and "
                "try again.",
            )
        )
    elif error is not None:
        refusals.append(
            _Refusal(
                f"cannot be opened ({error.strerror})",
                f"opening it failed ({error.strerror}), so it cannot be checked or tested. "
                "Run ssdlab as root on a device the system does not use.",
            )
        )
    return refusals


def _refusals(device: DeviceInfo) -> list[_Refusal]:
    """Every reason not to write to ``device``, then to each block device beneath it (naming
    the chain that reaches it), most fundamental first."""
    try:
        layers = resolve_stack(device.name)
        stack = {device.name} | {layer.name for layer in layers if layer.name}
        beneath = [
            (layer.chain, check_readable(device_node(layer.name))) for layer in layers if layer.name
        ]
        loops = attached_loops()
        attached = [
            [name for name in loops.get(("block", device_number(d.name)), []) if name not in stack]
            for d in [device, *(lower for _, lower in beneath)]
        ]
    except SsdlabError as exc:
        return [
            *_device_refusals(device, {device.name}, []),
            _Refusal(
                "what lies beneath it cannot be told",
                f"following what lies beneath it failed ({exc}), so whether writing it "
                "reaches data cannot be judged. Run ssdlab as root, and look at the device "
                "with lsblk and losetup --list.",
            ),
        ]
    refusals = _device_refusals(device, stack, attached[0])
    for (chain, lower), loops_on in zip(beneath, attached[1:], strict=True):
        refusals += [
            _Refusal(
                f"{chain} -> {refusal.short}",
                f"what it writes lands on {lower.path} beneath it ({chain}), and {lower.name} "
                f"is refused: {refusal.explanation}",
                beneath=True,
            )
            for refusal in _device_refusals(lower, stack, loops_on)
        ]
    for layer in layers:  # a file beneath it that another loop device uses as well
        if layer.file and (others := [n for n in loops.get(layer.key, []) if n not in stack]):
            names = ", ".join(others)
            refusals.append(
                _Refusal(
                    f"{layer.chain} -> also used by loop device {names}",
                    f"what it writes lands in {layer.file} ({layer.chain}), which the loop "
                    f"device {names} uses as well, so writing it changes what {names} holds, "
                    f"perhaps a file system in use. Detach it (losetup --detach "
                    f"/dev/{others[0]}) if nothing on it is needed, and try again.",
                    beneath=True,
                )
            )
    return refusals


def verdict(device: DeviceInfo) -> str:
    """``writable with --destroy-data loop3`` or ``refused: mounted at /mnt/x``."""
    refusals = _refusals(device)
    if refusals:
        return f"refused: {refusals[0].short}"
    return f"writable with {CONFIRM_OPTION} {device.name}"


def _refuse_unsafe(device_path: str | Path, device: DeviceInfo) -> str:
    """SsdlabError for the first of :func:`_refusals` of ``device``; else how errors name it."""
    who = f"{device_path} ({device.name}: {device.describe()})"
    if refusals := _refusals(device):
        first, *others = refusals
        also = f" Also: {'; '.join(r.short for r in others)}." if others else ""
        head = f"{device_path} ({first.short})" if first.beneath else who
        raise SsdlabError(f"Refusing to write to {head}: {first.explanation}{also}")
    return who


def check_same(device_path: str | Path, recorded: dict[str, Any], *, writes: bool) -> None:
    """SsdlabError unless ``device_path`` is still the device ``recorded`` (a
    :class:`DeviceInfo` dump: same kernel name, model, serial and size) and, when ``writes``,
    still passes every safety check. The same kernel name and serial keep naming it as the
    ``--destroy-data`` that confirmed it did."""
    device = check_readable(device_path)
    changed = [
        f"{key} {recorded.get(key) or '-'} → {getattr(device, key) or '-'}"
        for key in IDENTITY
        if recorded.get(key) != getattr(device, key)
    ]
    if changed:
        raise SsdlabError(f"{device_path} is now another device: {', '.join(changed)}")
    if writes:
        _refuse_unsafe(device_path, device)


def check_writable(
    device_path: str | Path, confirm: str | None, device: DeviceInfo | None = None
) -> DeviceInfo:
    """The device, if it passes every safety check and ``confirm`` names it; else refused.

    ``confirm`` must be the device's kernel name (``loop3`` or ``/dev/loop3``) or its serial;
    ``device``: :func:`check_readable` of ``device_path``, when the caller has it.
    """
    device = device or check_readable(device_path)
    who = _refuse_unsafe(device_path, device)
    names = {device.name, f"/dev/{device.name}"} | ({device.serial} if device.serial else set())
    expected = f"its kernel name {device.name}" + (
        f" or its serial {device.serial}" if device.serial else ""
    )
    if confirm is None:
        raise SsdlabError(
            f"{who} passed the safety checks, but every write test destroys all data on it. "
            f"To confirm that this is the drive to erase, pass {CONFIRM_OPTION} with "
            f"{expected} (e.g. {CONFIRM_OPTION} {device.name})."
        )
    if confirm not in names:
        raise SsdlabError(
            f"{CONFIRM_OPTION} {confirm!r} does not match {who}: give {expected} "
            f"(or /dev/{device.name}). Nothing was written."
        )
    return device
