"""Facts about the host a run happens on, recorded in every manifest."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from pydantic import BaseModel

CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"


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
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
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
    )
