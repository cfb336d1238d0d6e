"""Host lists for fleet runs: ``HOST[:PORT][=TARGET],...`` on the command line, or a file with
one host per line.

A hosts file line is ``HOST[:PORT][=TARGET]`` too, or its fields separated by spaces or commas:
``HOST [PORT] [TARGET]`` or ``HOST[:PORT] TARGET`` (so fio's own ``--client`` list files,
``ip,port`` per line, work as they are). ``#`` starts a comment. IPv6 addresses go in
brackets when a port follows on the command line (``[fd00::7]:8765``). The same host may be
listed once per target: each host and target pair gets its own results directory.

Targets are absolute paths, normalised (``//`` collapsed, ``.`` and ``..`` resolved) and made
of letters, digits and ``. _ + @ - /`` only: fio reads ``:`` in a file name as a list of
files, and ``,``, ``=``, ``#``, ``$`` or spaces mean something in host lists or job files.

:func:`judge_targets` decides whether a fleet may use its targets (see docs/fleet.md): on this
machine exactly as a local run does, on another host only with ``--destroy-data`` naming it.

:class:`LocalTarget` is one of several targets of this machine in one run (``ssdlab run
--target A --target B``, see :mod:`.local`): a member served by a fio server of its own.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import posixpath
import re
import socket
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..devices import CONFIRM_OPTION, check_readable, check_writable
from ..errors import InputError, SsdlabError
from ..fio_options import check_target
from ..layout import FLEET_FILE, POWER_DIR
from ..manifest import TargetInfo
from ..target import refuse_new_file_in_dev

#: fio's default ``--server`` port.
DEFAULT_PORT = 8765
#: Where a host without ``=TARGET`` runs: a file fio lays out to the suite's size. ``token`` is
#: random per fleet root (kept in its fleet.json), so nobody can plant that path beforehand.
DEFAULT_TARGET = "/var/tmp/ssdlab-fleet-{slug}-{token}.tmp"
_HOST = re.compile(r"^[A-Za-z0-9_.:-]+$")
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._+@/-]*$")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-")


@dataclass(frozen=True)
class Host:
    """One fio server and the target it tests (a path on that host)."""

    host: str
    port: int = DEFAULT_PORT
    target: str | None = None  # None: ssdlab's default file (:func:`default_target`)

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
    def name(self) -> str:
        """``host:port /target``: unique within a fleet, used as the run's label."""
        return f"{self.server} {self.target or 'default file'}"

    @property
    def dirname(self) -> str:
        """The results directory of this host and target under the fleet's root."""
        return _slug(f"{self.host}-{self.port}-{self.target or 'default'}")

    def target_path(self, token: str) -> str:
        """The target, or the default file of a fleet whose token is ``token``."""
        return self.target or DEFAULT_TARGET.format(
            slug=_slug(f"{self.host}-{self.port}"), token=token
        )


#: What fio's client of a :class:`LocalTarget` connects to: a link to its server's socket in
#: the step's directory (fio names the client and its log files by the address it is given,
#: and a path would put a ``/`` in their names); fio's JSON then says ``localhost``.
LOCAL_LINK = "localhost"
#: The server of every :class:`LocalTarget` in messages (also the key of its facts).
THIS_MACHINE = "this machine"


@dataclass(frozen=True)
class LocalTarget(Host):
    """A target of this machine in a run of several (``--target`` repeated): a member served
    by its own fio server on the Unix socket ``socket`` (set once the server runs), named by
    its path, its results in ``dir`` under the run's root. ``port`` 0: no TCP server (a fleet
    on fio's default port would be relayed to ``host``)."""

    host: str = "localhost"
    port: int = 0
    socket: str = ""
    dir: str = ""

    @property
    def server(self) -> str:
        return THIS_MACHINE

    @property
    def fio_address(self) -> str:
        return f"sock:{LOCAL_LINK}"

    @property
    def name(self) -> str:
        return self.target or ""

    @property
    def dirname(self) -> str:
        return self.dir

    def serving(self, socket_path: str) -> LocalTarget:
        """This target, served by the fio server listening on ``socket_path``."""
        return replace(self, socket=socket_path)


def local_targets(paths: Sequence[str | Path], where: str = "--target") -> list[LocalTarget]:
    """The targets of a run of several on this machine: each made absolute and normalised
    (symlinks are resolved when judged), each results directory named after its path with
    every run of other characters than letters, digits, ``.`` and ``_`` made one ``-`` (a
    short hash of the path added where two would share a name, or one would be a name the
    run's root uses itself). InputError when a target is listed twice, by another path too
    (a symlink or hard link to it, another node of the same device), or is no path a single
    ``--target`` may be (:func:`~ssdlab.fio_options.check_target`)."""
    normal = [_local_path(str(p), where) for p in paths]
    seen: dict[object, str] = {}
    for path in normal:
        keys = _identities(path)
        for key in keys:
            if key in seen:
                same = "" if seen[key] == path else f" ({seen[key]} is the same target)"
                raise InputError(f"{where}: {path} is listed twice{same}: list each target once")
        seen |= dict.fromkeys(keys, path)
    slugs = [_slug(path) or "root" for path in normal]
    taken = {POWER_DIR, FLEET_FILE}
    dirs = [
        f"{slug}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"
        if slugs.count(slug) > 1 or slug in taken or slug.startswith(".")
        else slug
        for slug, path in zip(slugs, normal, strict=True)
    ]
    return [LocalTarget(target=path, dir=d) for path, d in zip(normal, dirs, strict=True)]


def _local_path(text: str, where: str) -> str:
    """A target of this machine made absolute and normalised; InputError unless it is a
    path a single ``--target`` may be (:func:`~ssdlab.fio_options.check_target`)."""
    path = posixpath.normpath(re.sub("/+", "/", os.path.abspath(text)))
    try:
        check_target(path)
    except SsdlabError as exc:
        raise InputError(f"{where}: {exc}") from None
    return path


def _identities(path: str) -> list[object]:
    """What makes two paths the same target: the path, where it leads, and the device or
    file it is (a block device's number, a file's device and inode)."""
    keys: list[object] = [path, os.path.realpath(path)]
    try:
        st = os.stat(path)
    except OSError:
        return keys
    keys.append(
        ("block", st.st_rdev) if stat.S_ISBLK(st.st_mode) else ("file", st.st_dev, st.st_ino)
    )
    return keys


def _port(text: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError(f"{where}: port must be a number from 1 to 65535, not {text!r}")
    return int(text)


def _host(text: str, where: str) -> str:
    if not _HOST.match(text):
        raise InputError(f"{where}: {text!r} is not a host name or address")
    return text


def _target(text: str, where: str) -> str:
    """``text`` normalised; InputError when it is relative or holds other characters."""
    if not text.startswith("/"):
        raise InputError(f"{where}: target {text!r} must be an absolute path on that host")
    if not _SAFE_PATH.match(text):
        raise InputError(
            f"{where}: target {text!r}: a path may hold only letters, digits and . _ + @ - /"
        )
    return posixpath.normpath(re.sub("/+", "/", text))


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


def is_this_machine(name: str) -> bool:
    """Whether every address ``name`` resolves to is this machine's (loopback, or one a
    socket can bind here): only then may ssdlab judge the target by its own files."""
    try:
        addresses = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return bool(addresses) and all(_own(family, addr) for family, _, _, _, addr in addresses)


def _own(family: socket.AddressFamily, address: tuple) -> bool:
    if ipaddress.ip_address(address[0].partition("%")[0]).is_loopback:
        return True
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.bind((address[0], 0, *address[2:]))
    except OSError:
        return False
    return True


def confirmed_names(destroy_data: str | None) -> set[str]:
    """The names ``--destroy-data`` gives, comma-separated."""
    return {c.strip() for c in (destroy_data or "").split(",") if c.strip()}


def confirmed_name(
    device: str, serial: str | None, confirmed: set[str], host: str = ""
) -> str | None:
    """Which of the ``--destroy-data`` names ``confirmed`` names the device ``device`` (its
    kernel name, also as a /dev path, or its serial; ``HOST:NAME`` for that host only)."""
    names = {device, f"/dev/{device}", serial}
    mine = (c.removeprefix(f"{host}:") if host else c for c in sorted(confirmed))
    return next((c for c in mine if c in names), None)


def _judge_local(host: Host, path: str, writes: bool, confirmed: set[str]) -> TargetInfo:
    """``path`` on this machine, symlinks resolved, judged as a local run judges its target:
    a block device by the safety checks of :mod:`ssdlab.devices`, else a regular file."""
    real = os.path.realpath(path)
    local = isinstance(host, LocalTarget)  # its path says it all
    server = "" if local else f"{host.server}: "
    where = ("" if local else f"{host.server} ") + path
    where += f" (resolves to {real})" if real != path else ""
    if local:  # what a single --target may be; a host list's paths are stricter
        try:
            check_target(real)
        except SsdlabError as exc:
            raise SsdlabError(f"{where}: {exc}") from None
    elif not _SAFE_PATH.match(real):
        raise SsdlabError(f"{where}: a path may hold only letters, digits and . _ + @ - /")
    try:
        mode: int | None = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise SsdlabError(f"{where}: cannot inspect it: {exc.strerror}") from None
    if mode is not None and stat.S_ISBLK(mode):
        try:
            device = check_readable(real)
            if writes:
                name = confirmed_name(device.name, device.serial, confirmed, host.host)
                device = check_writable(real, name)
        except SsdlabError as exc:
            raise SsdlabError(f"{server}{exc}") from None
        return TargetInfo(
            path=real,
            kind="block",
            size_bytes=device.size_bytes,
            device=device.model_dump(exclude={"children"}),
        )
    if mode is not None and not stat.S_ISREG(mode):
        raise SsdlabError(f"{where}: target must be a regular file or a block device")
    if mode is None and not writes:
        raise SsdlabError(f"{where}: a read-only suite needs an existing target")
    if not os.path.isdir(os.path.dirname(real)):
        raise SsdlabError(f"{where}: the target's directory does not exist")
    try:
        refuse_new_file_in_dev(real)
    except SsdlabError as exc:
        raise SsdlabError(f"{server}{exc}") from None
    return TargetInfo(path=real, kind="file", size_bytes=os.stat(real).st_size if mode else None)


def described_target(path: str) -> TargetInfo:
    """A target on another host, as far as its path tells: a block device under /dev."""
    return TargetInfo(path=path, kind="block" if path.startswith("/dev/") else "file")


def judge_targets(
    hosts: Sequence[Host], token: str, *, writes: bool, destroy_data: str | None, local: set[str]
) -> dict[Host, TargetInfo]:
    """What each host's fio will open, once judged safe; SsdlabError (one line) otherwise.

    On this machine (``host.server`` in ``local``) symlinks are resolved and the target is
    judged as a local run judges it; each device or file may be listed once. On another host
    any path may be a symlink to a drive: a writing suite needs every target except the
    default file named by ``destroy_data`` (comma-separated ``HOST:PATH`` or ``PATH``; a /dev
    path also by its kernel name). ``token`` names the default files.
    """
    confirmed = confirmed_names(destroy_data)
    targets: dict[Host, TargetInfo] = {}
    seen: dict[str, Host] = {}
    unconfirmed = []
    for host in hosts:
        path = host.target_path(token)
        if host.server in local:
            try:
                info = _judge_local(host, path, writes, confirmed)
            except SsdlabError as exc:
                if writes and len(hosts) > 1 and CONFIRM_OPTION in str(exc):
                    raise SsdlabError(
                        f"{exc} Several devices: name each of them, comma-separated."
                    ) from None
                raise
            first = seen.setdefault(info.path, host)
            if first != host:
                raise SsdlabError(
                    f"{first.name} and {host.name} are the same target on this machine "
                    f"({info.path}): list it once"
                )
        else:
            info = described_target(path)
            names = {path, f"{host.host}:{path}"}
            if info.kind == "block":
                names.add(posixpath.basename(path))
            if writes and host.target is not None and not names & confirmed:
                unconfirmed.append(f"{host.host}:{path}")
        targets[host] = info
    if unconfirmed:
        raise SsdlabError(
            "refusing to write to targets on other hosts without confirmation: "
            f"{', '.join(unconfirmed)}. ssdlab cannot see another host's files and devices "
            "(any path there may be a symlink to a drive); make sure they hold nothing you "
            f"need, then name them with {CONFIRM_OPTION} (comma-separated HOST:PATH, e.g. "
            f"{unconfirmed[0]}; a /dev path also by its kernel name)"
        )
    return targets
