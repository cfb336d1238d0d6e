"""What lies beneath a block device, down to what finally holds its bytes: a loop device's
backing device or file (by the identity the kernel reports, not the path sysfs names),
device-mapper and md slaves, a partition's disk (:func:`resolve_stack`); and what a target is
made of (:func:`identities`), by which two targets, or two runs, are known to share bytes."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import struct
from pathlib import Path
from typing import NamedTuple

from .errors import SsdlabError
from .units import format_capacity

SYS_CLASS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")
#: How many devices deep a stack is followed; a deeper one is refused, not guessed at.
MAX_STACK_DEPTH = 16
#: ioctl(LOOP_GET_STATUS64) and the kernel's struct loop_info64 it fills: the backing file's
#: device, inode and rdev (its identity, which the path in sysfs alone is not), offset, limit.
_LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64 = struct.Struct("=5Q4I64s64s32s2Q")
#: What identifies a part of a stack: ``("block", device number)`` or ``("file", device, inode)``.
Key = tuple[str, int] | tuple[str, int, int]


class Layer(NamedTuple):
    """A block device or regular file beneath a block device, and the chain that reaches it
    (``loop5 -> loop4 at offset 1 MiB``)."""

    chain: str
    key: Key
    name: str | None = None  # kernel name of a block device
    file: Path | None = None  # a regular backing file: the bottom of the stack


def device_number(name: str) -> int:
    """The device number of the block device ``name``, from sysfs."""
    try:
        major, minor = (SYS_CLASS_BLOCK / name / "dev").read_text().split(":")
    except (OSError, ValueError):
        raise SsdlabError(f"{name}: sysfs does not describe it (it may have gone)") from None
    return os.makedev(int(major), int(minor))


def device_name(number: int) -> str:
    """The kernel name of the block device numbered ``number``."""
    link = SYS_DEV_BLOCK / f"{os.major(number)}:{os.minor(number)}"
    if not link.exists():
        raise SsdlabError(f"no block device {os.major(number)}:{os.minor(number)} exists")
    return Path(os.path.realpath(link)).name


def device_node(name: str) -> str:
    """``/dev/<name>``, once it is checked to be the block device ``name`` by its number."""
    path = f"/dev/{name.replace('!', '/')}"  # sysfs writes cciss/c0d0 as cciss!c0d0
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SsdlabError(f"{path}: cannot inspect it: {exc.strerror}") from None
    if not stat.S_ISBLK(st.st_mode) or st.st_rdev != device_number(name):
        raise SsdlabError(f"{path} is not the block device {name}")
    return path


def _kernel_dev(encoded: int) -> int:
    """A device number as the kernel encodes it in ioctl replies (huge_encode_dev)."""
    return os.makedev((encoded & 0xFFF00) >> 8, (encoded & 0xFF) | ((encoded >> 12) & 0xFFF00))


def loop_status(name: str) -> tuple[int, int, int, int, int] | None:
    """(device, inode, rdev, offset, size limit) of what the loop device ``name`` is attached
    to (rdev is 0 for a regular file), or ``None`` when it is attached to nothing."""
    try:
        fd = os.open(device_node(name), os.O_RDONLY | os.O_CLOEXEC)
        try:
            raw = fcntl.ioctl(fd, _LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None
        if exc.errno in (errno.EACCES, errno.EPERM):  # not root: what sysfs shows anyone
            return _sysfs_status(name)
        raise SsdlabError(
            f"{name}: cannot read what the loop device is attached to ({exc.strerror})"
        ) from None
    device, inode, rdev, offset, limit = _LOOP_INFO64.unpack(raw)[:5]
    return _kernel_dev(device), inode, _kernel_dev(rdev) if rdev else 0, offset, limit


def _sysfs_status(name: str) -> tuple[int, int, int, int, int] | None:
    """:func:`loop_status` for a user who may not open the loop device: the backing file's
    identity from the path sysfs names. A deleted backing file has no name left: its inode
    is given as 0 (``("file", device, 0)`` then stands for any file of that file system)."""
    directory = SYS_CLASS_BLOCK / name / "loop"
    try:
        text = (directory / "backing_file").read_text().removesuffix("\n")
        offset, limit = (int((directory / n).read_text()) for n in ("offset", "sizelimit"))
    except FileNotFoundError:
        return None  # attached to nothing
    except (OSError, ValueError) as exc:
        raise SsdlabError(
            f"{name}: cannot read what the loop device is attached to ({exc})"
        ) from None
    deleted = text.endswith(" (deleted)")
    try:
        st = os.stat(os.path.dirname(text) if deleted else text)
    except OSError as exc:
        raise SsdlabError(
            f"{name}: cannot inspect its backing file {text}: {exc.strerror}"
        ) from None
    if deleted:
        return st.st_dev, 0, 0, offset, limit
    rdev = st.st_rdev if stat.S_ISBLK(st.st_mode) else 0
    return st.st_dev, 0 if rdev else st.st_ino, rdev, offset, limit


def _backing_file(name: str, device: int, inode: int) -> Path:
    """The path of the regular file (``device``, ``inode``) the loop device ``name`` is
    attached to, checked by identity: the path sysfs names may since hold another file."""
    text = "?"
    try:
        text = (SYS_CLASS_BLOCK / name / "loop" / "backing_file").read_text().removesuffix("\n")
        st = os.stat(text)
    except OSError:
        st = None
    if st is None or (st.st_dev, st.st_ino) != (device, inode):
        raise SsdlabError(
            f"the backing file of {name}, {text}, is no longer at that path (deleted, moved "
            "or replaced), so what writing it reaches cannot be judged"
        )
    return Path(text)


def _where(offset: int, limit: int) -> str:
    """`` at offset 1 MiB, 16 MiB long`` (a limit), `` at offset 1 MiB`` or nothing."""
    if not offset and not limit:
        return ""
    long = f", {format_capacity(limit)} long" if limit else ""
    return f" at offset {format_capacity(offset)}{long}"


def _below(name: str, chain: str) -> list[Layer]:
    """What the block device ``name`` (reached by ``chain``) stands on, one level down."""
    block = SYS_CLASS_BLOCK / name
    if not block.exists():
        raise SsdlabError(f"{name}: sysfs does not describe it (it may have gone)")
    layers = []
    if (block / "loop").is_dir() and (status := loop_status(name)) is not None:
        device, inode, rdev, offset, limit = status
        if rdev:
            lower = device_name(rdev)
            lower_chain = f"{chain} -> {lower}{_where(offset, limit)}"
            layers.append(Layer(lower_chain, ("block", rdev), name=lower))
        else:
            file = _backing_file(name, device, inode)
            lower_chain = f"{chain} -> {file}{_where(offset, limit)}"
            layers.append(Layer(lower_chain, ("file", device, inode), file=file))
    for slave in sorted(path.name for path in (block / "slaves").glob("*")):
        layers.append(Layer(f"{chain} -> {slave}", ("block", device_number(slave)), name=slave))
    if (block / "partition").exists():
        disk = Path(os.path.realpath(block)).parent.name
        try:
            start = int((block / "start").read_text()) * 512  # in 512-byte sectors
        except (OSError, ValueError):
            raise SsdlabError(f"{name}: sysfs does not say where the partition starts") from None
        if not (SYS_CLASS_BLOCK / disk).exists():
            raise SsdlabError(f"{name}: the disk it is a partition of cannot be found")
        where = f"{chain} -> {disk}{_where(start, 0)}"
        layers.append(Layer(where, ("block", device_number(disk)), name=disk))
    return layers


def resolve_stack(name: str) -> list[Layer]:
    """Every block device and regular file beneath the block device ``name`` (a loop
    device's backing device or file, device-mapper and md slaves, a partition's disk), top
    down, each once. SsdlabError when part of it cannot be followed or it is deeper than
    :data:`MAX_STACK_DEPTH`."""
    layers: list[Layer] = []
    seen = {name}

    def follow(upper: str, chain: str, depth: int) -> None:
        if depth >= MAX_STACK_DEPTH:
            raise SsdlabError(f"{chain}: deeper than {MAX_STACK_DEPTH} devices")
        for layer in _below(upper, chain):
            if layer.name in seen:
                continue
            layers.append(layer)
            if layer.name is not None:
                seen.add(layer.name)
                follow(layer.name, layer.chain, depth + 1)

    follow(name, name, 0)
    return layers


def backing_files(device_path: str | Path) -> list[Path]:
    """Every regular file at the bottom of the stack of the block device ``device_path``
    (loop backing files, found by identity): a caller judges them as it judges file targets."""
    try:
        st = os.stat(device_path)
    except OSError as exc:
        raise SsdlabError(f"{device_path}: cannot inspect it: {exc.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise SsdlabError(f"{device_path} is not a block device")
    return [layer.file for layer in resolve_stack(device_name(st.st_rdev)) if layer.file]


def attached_loops() -> dict[Key, list[str]]:
    """The loop devices attached to each block device and regular file, by its :data:`Key`
    (loop registers no holder, so sysfs and lsblk do not show them above it)."""
    loops: dict[Key, list[str]] = {}
    for directory in sorted(SYS_CLASS_BLOCK.glob("loop*/loop")):
        status = loop_status(directory.parent.name)
        if status is not None:
            device, inode, rdev = status[:3]
            key: Key = ("block", rdev) if rdev else ("file", device, inode)
            loops.setdefault(key, []).append(directory.parent.name)
    return loops


def identities(path: str | Path) -> dict[Key, str]:
    """What the existing target ``path`` is made of, each part named for messages: a file
    itself, or a block device and every device and file of its stack (:func:`resolve_stack`)."""
    st = os.stat(path)
    if not stat.S_ISBLK(st.st_mode):
        return {("file", st.st_dev, st.st_ino): str(path)}
    name = device_name(st.st_rdev)
    parts: dict[Key, str] = {("block", st.st_rdev): f"/dev/{name}"}
    for layer in resolve_stack(name):
        parts[layer.key] = str(layer.file) if layer.file else f"/dev/{layer.name}"
    return parts
