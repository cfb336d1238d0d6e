"""Facts about the host a run happens on, recorded in every manifest."""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path

from pydantic import BaseModel

CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
MOUNTINFO = "/proc/self/mountinfo"
DMI = "/sys/class/dmi/id"
#: the most of a /proc or /sys file read (mountinfo of thousands of mounts fits)
PROC_LIMIT = 4 * 2**20
#: what DMI's ``sys_vendor`` and ``product_name`` say of a virtual machine, and the
#: hypervisor's name as systemd-detect-virt gives it
DMI_HYPERVISORS = (
    ("qemu", "qemu"),
    ("kvm", "kvm"),
    ("vmware", "vmware"),
    ("virtualbox", "oracle"),
    ("innotek", "oracle"),
    ("xen", "xen"),
    ("bochs", "bochs"),
    ("parallels", "parallels"),
    ("bhyve", "bhyve"),
    ("openstack", "openstack"),
    ("google compute engine", "google"),
    ("virtual machine", "microsoft"),  # Hyper-V: "Microsoft Corporation" / "Virtual Machine"
    ("amazon ec2", "amazon"),  # EC2's own hypervisor; its *.metal instances are not
)
#: what ``virtualization`` records for a host that is no virtual machine
BARE_METAL = "none"
#: what it records when only the CPU's ``hypervisor`` flag says it is one
UNIDENTIFIED = "unidentified"


class HostInfo(BaseModel):
    hostname: str
    kernel: str
    os: str
    cpu_model: str
    cpu_count: int | None = None  # None: unknown (a remote fio server)
    memory_bytes: int | None = None
    python: str
    clocksource: str | None = None  # the kernel's, e.g. "tsc" or "kvm-clock"
    invariant_tsc: bool | None = None  # constant_tsc and nonstop_tsc: fio trusts such a TSC
    # the hypervisor of a virtual machine (systemd-detect-virt's name, e.g. "kvm"),
    # BARE_METAL, or None: not known (not recorded, a remote fio server, no sign either way)
    virtualization: str | None = None


#: file systems whose files live in memory (no figure of such a file describes a drive)
MEMORY_FS_TYPES = frozenset({"tmpfs", "ramfs"})


class FileSystem(BaseModel):
    """The file system holding a file target, from the mount of its device number in
    /proc/self/mountinfo (``type`` and ``source`` None when no mount has that number)."""

    device: str  # the file's st_dev as major:minor
    type: str | None = None  # ext4, xfs, tmpfs, ...
    source: str | None = None  # what is mounted: /dev/nvme0n1p2, tmpfs, server:/export


def _read_proc(path: str) -> str | None:
    """The text of a /proc or /sys file, at most :data:`PROC_LIMIT` bytes; None when it
    cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(PROC_LIMIT).decode(errors="replace")
    except OSError:
        return None


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _cpuinfo(key: str) -> str | None:
    """The first ``key : value`` of /proc/cpuinfo."""
    for line in (_read_proc("/proc/cpuinfo") or "").splitlines():
        if line.startswith(key):
            return line.split(":", 1)[1].strip()
    return None


def _invariant_tsc() -> bool | None:
    flags = _cpuinfo("flags")
    return None if flags is None else {"constant_tsc", "nonstop_tsc"} <= set(flags.split())


def _kernel_clocksource() -> str | None:
    try:
        return Path(CLOCKSOURCE).read_text().strip() or None
    except OSError:
        return None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def _detect_virt() -> str | None:
    """systemd-detect-virt's answer for a virtual machine (containers aside): its
    hypervisor's name, :data:`BARE_METAL`, or None when it is not installed or fails."""
    program = shutil.which("systemd-detect-virt")
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "--vm"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout.strip()
    if done.returncode not in (0, 1) or not re.fullmatch(r"[a-z0-9_-]{1,40}", name):
        return None
    return name


def _dmi_hypervisor() -> str | None:
    """The hypervisor DMI's vendor and product name say (:data:`DMI_HYPERVISORS`),
    :data:`BARE_METAL` when they name none, None without DMI."""
    texts = [_read_proc(f"{DMI}/{name}") for name in ("sys_vendor", "product_name")]
    if all(text is None for text in texts):
        return None
    said = " ".join(text.strip().lower() for text in texts if text)
    if said.endswith(".metal"):  # an EC2 bare-metal instance
        return BARE_METAL
    return next((name for sign, name in DMI_HYPERVISORS if sign in said), BARE_METAL)


def virtualization() -> str | None:
    """Whether this machine is a virtual machine, by the first that knows:
    systemd-detect-virt, DMI's vendor and product, the CPU's ``hypervisor`` flag (x86);
    the hypervisor's name, :data:`BARE_METAL`, :data:`UNIDENTIFIED` (only the flag says
    so) or None (no sign either way)."""
    detected = _detect_virt()
    if detected is not None:
        return detected
    flags = _cpuinfo("flags")
    dmi = _dmi_hypervisor()
    if dmi not in (None, BARE_METAL):
        return dmi
    if flags is not None and "hypervisor" in flags.split():
        return UNIDENTIFIED
    return BARE_METAL if dmi == BARE_METAL and flags is not None else None


def file_system(path: str | Path) -> FileSystem:
    """The file system of the existing file ``path``: the mount in /proc/self/mountinfo
    whose device number is the file's (every mount of one file system has its type and
    source); OSError when the file cannot be inspected."""
    st = os.stat(path)
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    for line in (_read_proc(MOUNTINFO) or "").splitlines():
        fields = line.split(" ")
        if len(fields) < 10 or fields[2] != device or "-" not in fields[6:]:
            continue
        rest = fields[fields.index("-", 6) + 1 :]
        if len(rest) >= 2:
            return FileSystem(device=device, type=_unescape(rest[0]), source=_unescape(rest[1]))
    return FileSystem(device=device)


def _unescape(text: str) -> str:
    """mountinfo's octal escapes (a blank is ``\\040``) undone."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def host_info() -> HostInfo:
    """Hostname, kernel, OS, CPU, memory and clocks of this machine."""
    return HostInfo(
        hostname=socket.gethostname(),
        kernel=platform.release(),
        os=_os_name(),
        cpu_model=_cpuinfo("model name") or platform.processor() or platform.machine(),
        cpu_count=os.cpu_count() or 1,
        memory_bytes=_memory_bytes(),
        python=platform.python_version(),
        clocksource=_kernel_clocksource(),
        invariant_tsc=_invariant_tsc(),
        virtualization=virtualization(),
    )
