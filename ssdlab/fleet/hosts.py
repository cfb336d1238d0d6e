"""Host lists for fleet runs: ``HOST[:PORT][=TARGET],...`` on the command line, or a file with
one host per line.

A hosts file line is ``HOST[:PORT][=TARGET]`` too, or its fields separated by spaces or commas:
``HOST [PORT] [TARGET]`` or ``HOST[:PORT] TARGET`` (so fio's own ``--client`` list files,
``ip,port`` per line, work as they are). ``#`` starts a comment. IPv6 addresses go in
brackets when a port follows on the command line (``[fd00::7]:8765``). The same host may be
listed once per target: each host and target pair gets its own results directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

#: fio's default ``--server`` port.
DEFAULT_PORT = 8765
#: Where a host without ``=TARGET`` runs (a file, laid out by fio to the suite's size).
DEFAULT_TARGET = "/var/tmp/ssdlab-fleet-{slug}.tmp"
_HOST = re.compile(r"^[A-Za-z0-9_.:-]+$")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-")


@dataclass(frozen=True)
class Host:
    """One fio server and the target it tests (a path on that host)."""

    host: str
    port: int = DEFAULT_PORT
    target: str | None = None

    @property
    def ipv6(self) -> bool:
        return ":" in self.host

    @property
    def server(self) -> str:
        """``host:port`` (``[v6]:port``), how ssdlab names the server in messages."""
        return f"[{self.host}]:{self.port}" if self.ipv6 else f"{self.host}:{self.port}"

    @property
    def fio_address(self) -> str:
        """The server as fio's ``--client`` takes it."""
        return f"ip6:{self.host},{self.port}" if self.ipv6 else f"{self.host},{self.port}"

    @property
    def target_path(self) -> str:
        return self.target or DEFAULT_TARGET.format(slug=_slug(f"{self.host}-{self.port}"))

    @property
    def is_block(self) -> bool:
        return self.target_path.startswith("/dev/")

    @property
    def name(self) -> str:
        """``host:port /target``: unique within a fleet, used as the run's label."""
        return f"{self.server} {self.target_path}"

    @property
    def dirname(self) -> str:
        """The results directory of this host and target under the fleet's root."""
        return _slug(f"{self.host}-{self.port}-{self.target_path}")


def _port(text: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError(f"{where}: port must be a number from 1 to 65535, not {text!r}")
    return int(text)


def _host(text: str, where: str) -> str:
    if not _HOST.match(text):
        raise InputError(f"{where}: {text!r} is not a host name or address")
    return text


def _target(text: str, where: str) -> str:
    if not text.startswith("/"):
        raise InputError(f"{where}: target {text!r} must be an absolute path on that host")
    return text


def parse_host(text: str, where: str = "--hosts") -> Host:
    """One ``HOST[:PORT][=TARGET]``; ``where`` names the source in error messages."""
    left, _, target = text.strip().partition("=")
    port = str(DEFAULT_PORT)
    if left.startswith("["):
        host, bracket, rest = left[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise InputError(f"{where}: {text!r}: write an IPv6 address as [ADDRESS]:PORT")
        port = rest[1:] or port
    elif left.count(":") == 1:
        host, port = left.split(":")
    else:
        host = left  # a name, an IPv4 address, or an IPv6 address without a port
    return Host(
        _host(host, where),
        _port(port, where),
        _target(target.strip(), where) if target.strip() else None,
    )


def _parse_line(line: str, where: str) -> Host:
    fields = [f for f in re.split(r"[\s,]+", line) if f]
    if len(fields) == 1:
        return parse_host(fields[0], where)
    if len(fields) > 3:
        raise InputError(f"{where}: expected HOST [PORT] [TARGET], got {line!r}")
    if len(fields) == 3 or fields[1].isdigit():
        host, port, rest = _host(fields[0], where), _port(fields[1], where), fields[2:]
    else:  # HOST[:PORT] TARGET
        first = parse_host(fields[0], where)
        host, port, rest = first.host, first.port, fields[1:]
    return Host(host, port, _target(rest[0], where) if rest else None)


def parse_hosts(text_or_file: str | Path) -> list[Host]:
    """Hosts from a hosts file (a path that exists) or a comma-separated ``--hosts`` list."""
    path = Path(text_or_file)
    if isinstance(text_or_file, Path) or path.is_file():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read hosts file: {exc}") from None
        hosts = [
            _parse_line(line.split("#", 1)[0], f"{path}:{number}")
            for number, line in enumerate(lines, start=1)
            if line.split("#", 1)[0].strip()
        ]
        source = str(path)
    else:
        hosts = [parse_host(item) for item in str(text_or_file).split(",") if item.strip()]
        source = "--hosts"
    if not hosts:
        raise InputError(f"{source}: no hosts listed")
    seen: dict[str, Host] = {}
    for host in hosts:
        if host.dirname in seen:
            raise InputError(f"{source}: {host.name} is listed twice")
        seen[host.dirname] = host
    return hosts
