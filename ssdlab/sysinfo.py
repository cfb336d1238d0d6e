"""Facts about the host a run happens on, recorded in every manifest."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from pydantic import BaseModel


class HostInfo(BaseModel):
    hostname: str
    kernel: str
    os: str
    cpu_model: str
    cpu_count: int
    memory_bytes: int | None = None
    python: str


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def host_info() -> HostInfo:
    """Hostname, kernel, OS, CPU and memory of this machine."""
    return HostInfo(
        hostname=socket.gethostname(),
        kernel=platform.release(),
        os=_os_name(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count() or 1,
        memory_bytes=_memory_bytes(),
        python=platform.python_version(),
    )
