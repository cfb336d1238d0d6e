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

import contextlib
import hashlib
import ipaddress
import os
import posixpath
import re
import socket
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..devices import CONFIRM_OPTION
from ..errors import InputError, SsdlabError
from ..fio_options import check_target
from ..layout import FLEET_FILE, POWER_DIR
from ..manifest import TargetInfo
from ..stack import identities
from ..target import judge_target

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


def _parts(path: str) -> dict[object, str]:
    """What the judged target ``path`` is made of, each part named: its path, and the file
    it is or every device and file of its block device's stack
    (:func:`~ssdlab.stack.identities`); two targets that share a part share bytes."""
    parts: dict[object, str] = {path: path}
    with contextlib.suppress(FileNotFoundError):  # a file the run will create
        parts |= identities(path)
    return parts


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


def _judge_local(
    host: Host, path: str, writes: bool, confirmed: set[str], own_dir: Path | None, unsure: bool
) -> TargetInfo:
    """``path`` on this machine judged as a local run judges its target
    (:func:`~ssdlab.target.judge_target`: symlinks resolved, a block device confirmed by a
    ``--destroy-data`` name for this host). A host list's paths must resolve to a path of
    safe characters, and when the server may be another machine (``unsure``) to itself: a
    link here may lead elsewhere there."""
    real = os.path.realpath(path)
    prefix = "" if isinstance(host, LocalTarget) else f"{host.server}: "
    if prefix and not _SAFE_PATH.match(real):
        raise SsdlabError(
            f"{prefix}{path} (resolves to {real}): a path may hold only letters, digits and "
            ". _ + @ - /"
        )
    if unsure and real != path:
        raise SsdlabError(
            f"{prefix}{path} resolves to {real} on this machine, but the server may be "
            "another machine (its address and the hostname it reports disagree): give a "
            "path that is no link"
        )
    try:
        return judge_target(
            path,
            writes=writes,
            confirm=lambda d: confirmed_name(d.name, d.serial, confirmed, host.host),
            own_dir=own_dir,
        )
    except SsdlabError as exc:
        raise SsdlabError(f"{prefix}{exc}") from None


def described_target(path: str) -> TargetInfo:
    """A target on another host, as far as its path tells: a block device under /dev."""
    return TargetInfo(path=path, kind="block" if path.startswith("/dev/") else "file")


def run_size(target: TargetInfo, file_bytes: int | None) -> TargetInfo:
    """Another machine's target as a run leaves it: a file of ``file_bytes`` when given
    (fio lays out a writing suite's file to that size)."""
    if target.kind != "file" or file_bytes is None:
        return target
    return target.model_copy(update={"size_bytes": file_bytes})


def judge_targets(
    hosts: Sequence[Host],
    token: str,
    *,
    writes: bool,
    destroy_data: str | None,
    local: set[str],
    unsure: Collection[str] = (),
    root: Path | None = None,
) -> dict[Host, TargetInfo]:
    """What each host's fio will open, once judged safe; SsdlabError (one line) otherwise.

    On this machine (``host.server`` in ``local``) the target is judged as a local run
    judges it (:func:`_judge_local`; ``root``: the run's root, each member's results
    directory in it its own); each device or file may be listed once. On another host any
    path may be a symlink to a drive: a writing suite needs every target except the default
    file named by ``destroy_data`` (comma-separated ``HOST:PATH`` or ``PATH``; a /dev path
    also by its kernel name). A server in ``unsure`` too may be this machine or another
    (:func:`servers_here`): a writing suite's target there must pass both rules, the local
    one wherever its directory exists here. ``token`` names the default files.
    """
    confirmed = confirmed_names(destroy_data)
    targets: dict[Host, TargetInfo] = {}
    seen: dict[object, Host] = {}
    unconfirmed = []
    for host in hosts:
        path = host.target_path(token)
        remote = host.server not in local or host.server in unsure
        if remote and writes and host.target is not None:
            names = {path, f"{host.host}:{path}"}
            if path.startswith("/dev/"):
                names.add(posixpath.basename(path))
            if not names & confirmed:  # refused: no need to judge it here as well
                unconfirmed.append(f"{host.host}:{path}")
                continue
        if not judged_here(host, token, writes=writes, local=local, unsure=unsure):
            targets[host] = described_target(path)
            continue
        own = root / host.dirname if root is not None else None
        try:
            info = _judge_local(host, path, writes, confirmed, own, host.server in unsure)
        except SsdlabError as exc:
            if writes and len(hosts) > 1 and CONFIRM_OPTION in str(exc):
                raise SsdlabError(
                    f"{exc} Several devices: name each of them, comma-separated."
                ) from None
            raise
        for key, part in _parts(info.path).items():
            first = seen.setdefault(key, host)
            if first != host:
                what = f"are the same target on this machine ({info.path})"
                if part != info.path:
                    what = f"share {part}"
                raise SsdlabError(f"{first.name} and {host.name} {what}: list it once")
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


def judged_here(
    host: Host, token: str, *, writes: bool, local: set[str], unsure: Collection[str]
) -> bool:
    """Whether :func:`judge_targets` judges ``host``'s target as this machine's: its server is
    in ``local``, and when it may be another machine too (``unsure``), the suite writes and
    the target's directory exists here (else fio there cannot write this machine's files)."""
    return host.server in local and (
        host.server not in unsure
        or (writes and os.path.isdir(posixpath.dirname(host.target_path(token))))
    )


def servers_here(
    hosts: Sequence[Host], hostnames: Mapping[str, str | None]
) -> tuple[set[str], set[str]]:
    """Which servers of ``hosts`` to judge as this machine: those at one of its addresses
    (:func:`is_this_machine`) or reporting its hostname (``hostnames``: what each probed
    server reported); and of those, the ones where the two disagree, which may be another
    machine as well (an ssh tunnel to this machine's address, another machine by the same
    name)."""
    me = socket.gethostname()
    here, unsure = set(), set()
    for h in hosts:
        named = hostnames.get(h.server)
        by_address = is_this_machine(h.host)
        by_name = named is not None and named.split(".")[0] == me.split(".")[0]
        if by_address or by_name:
            here.add(h.server)
            if named is not None and by_address != by_name:
                unsure.add(h.server)
    return here, unsure
