"""Ask fio servers who they are: one tiny ``null``-engine job per server, run as fio's client.

fio has no "ping": the only way to learn a server's fio version is to connect, and the client
prints the server's probe reply (``hostname=..., os=..., arch=..., fio=fio-3.33``) before it
sends a job. The probe job reads 4 KiB from the ``null`` engine, which touches no file.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..fio import fio_binary, fio_version
from ..io.fio_json import fio_version_tuple
from .hosts import Host

PROBE_JOB = "[ssdlab-probe]\nioengine=null\nrw=read\nbs=4k\nsize=4k\n"
DEFAULT_TIMEOUT_S = 10.0
_PROBE_REPLY = re.compile(
    r"hostname=(?P<hostname>[^,]*), be=\d+, \d+-bit, os=(?P<os>[^,]*), "
    r"arch=(?P<arch>[^,]*), fio=(?P<fio>[^,\s]+)"
)


@dataclass(frozen=True)
class ServerInfo:
    """What a fio server said about itself, or why it did not answer (``error``)."""

    server: str
    hostname: str | None = None
    os: str | None = None
    arch: str | None = None
    fio_version: str | None = None
    error: str | None = None


def parse_probe_reply(server: str, output: str) -> ServerInfo | None:
    """The server's self-description from fio client output, if it is there."""
    m = _PROBE_REPLY.search(output)
    if m is None:
        return None
    return ServerInfo(server, m["hostname"], m["os"], m["arch"], m["fio"])


def _failure(server: str, output: str, returncode: int) -> ServerInfo:
    lines = [line.removeprefix("fio: ") for line in output.splitlines() if line.strip()]
    why = "; ".join(dict.fromkeys(lines)) or f"fio exited with status {returncode}"
    return ServerInfo(server, error=f"no fio server answered: {why}")


def probe_servers(
    hosts: Sequence[Host], timeout_s: float = DEFAULT_TIMEOUT_S
) -> dict[str, ServerInfo]:
    """Probe every distinct server of ``hosts`` at once; keyed by ``Host.server``."""
    servers = {h.server: h for h in hosts}
    binary = fio_binary()
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as tmp:
        job = Path(tmp) / "probe.fio"
        job.write_text(PROBE_JOB)
        procs = {
            server: subprocess.Popen(
                [binary, f"--client={host.fio_address}", "--eta=never", job.name],
                cwd=tmp,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for server, host in servers.items()
        }
        deadline = time.monotonic() + timeout_s
        infos = {}
        for server, proc in procs.items():
            try:
                output = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                infos[server] = ServerInfo(
                    server, error=f"no answer within {timeout_s:g} s (host down or firewalled?)"
                )
                continue
            info = parse_probe_reply(server, output)
            infos[server] = info or _failure(server, output, proc.returncode)
    return infos


def version_mismatch(infos: Sequence[ServerInfo], client_version: str) -> str | None:
    """Why these servers and this client cannot work together (fio major versions
    differ), or ``None``."""
    versions = {"this host (the fio client)": client_version} | {
        i.server: i.fio_version for i in infos if i.fio_version
    }
    majors = {fio_version_tuple(v)[0] for v in versions.values()}
    if len(majors) < 2:
        return None
    listing = ", ".join(f"{v} on {where}" for where, v in versions.items())
    return (
        f"fio major versions differ ({listing}): fio's client/server protocol changes between "
        "versions; install the same fio version on every host and on this one"
    )


def check_fleet(
    hosts: Sequence[Host], timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[list[ServerInfo], str]:
    """Every server's answer, and this host's fio version."""
    return list(probe_servers(hosts, timeout_s).values()), fio_version()
