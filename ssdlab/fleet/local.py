"""Fio servers on this machine for a run of several of its targets in lockstep (``ssdlab run
--target A --target B``, see :mod:`.targets`): what lets :func:`~ssdlab.fleet.run.run_fleet`
drive them as it drives hosts.

Each target gets its own ``fio --server`` on a Unix socket in a private directory (mode 0700:
nobody else on the machine can send it a job, unlike a TCP port), started by ssdlab and
always stopped by it, with every process the server started (:func:`local_servers`). The
servers run in sessions of their own, so a Ctrl-C at the terminal reaches only ssdlab and its
fio clients, which stop the jobs and collect what they measured before the servers go.

fio names a client, and the log files it writes, by the address it was given; an absolute
socket path would put ``/`` in those names, so each step's fio client connects to a link to
its server's socket in the step's directory (:class:`SocketLink`), which fio's JSON then
names ``localhost``. A member is a target of this machine, so its manifest has this
machine's facts, its target is prepared (a file created or grown with data, ``--purge``) as
by a local run, and SMART snapshots are taken of each device (:func:`local_fleet_hook`).

The servers die with ssdlab, even when it is killed outright (SIGKILL), but their directory
is then left behind: the run's root lists it (:data:`~ssdlab.layout.SERVERS_RECORD`), and
the next run of that root removes it once no process uses it.
"""

from __future__ import annotations

import contextlib
import copy
import os
import platform
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..atomic import write_text_atomic
from ..errors import SsdlabError
from ..execute import FleetHook, RunHook
from ..fio import die_with_parent, fio_binary
from ..layout import SERVERS_RECORD
from ..manifest import Manifest, StepRecord, TargetInfo
from ..session import ready_run
from ..sysinfo import host_info
from ..target import plan_target, prepare_target
from .hosts import LOCAL_LINK, THIS_MACHINE, LocalTarget
from .probe import ServerInfo

#: seconds a server may take to listen, and to exit once asked
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
#: the longest path a Unix socket may have (Linux ``sun_path``, its final NUL excluded)
MAX_SOCKET_PATH = 107
#: the servers' private directory (under TMPDIR), holding ``N.sock`` and ``N.log`` only
SERVERS_PREFIX = "ssdlab-fio-"
_SERVER_FILE = re.compile(r"[0-9]+\.(sock|log)")


def _children(pid: int) -> list[int]:
    """The child processes of every thread of ``pid`` (none when it is gone)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _pidfds(pid: int) -> list[int]:
    """Pidfds of the processes ``pid`` started, and theirs: a server's connection handlers
    and their jobs (which fio puts in sessions of their own). Taken while the server lives,
    so no pid can be another process's by then."""
    fds, level = [], [pid]
    while level:
        level = [c for p in level for c in _children(p)]
        for child in level:
            with contextlib.suppress(OSError):
                fds.append(os.pidfd_open(child))
    return fds


def _signal(fds: Sequence[int], sig: signal.Signals) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(fd, sig)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server and whatever it still runs (nothing once its clients are done; a step's
    jobs when a client was killed): SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT_S`."""
    fds = _pidfds(proc.pid)
    try:
        if proc.poll() is None:
            proc.terminate()
        _signal(fds, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        left = list(fds)
        while left and (wait := deadline - time.monotonic()) > 0:
            done, _, _ = select.select(left, [], [], wait)  # a pidfd reads when it exits
            left = [fd for fd in left if fd not in done]
        _signal(left, signal.SIGKILL)
    finally:
        for fd in fds:
            os.close(fd)


def _listening(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def _start(binary: str, directory: str, index: int, target: LocalTarget) -> subprocess.Popen:
    """``fio --server`` for ``target`` on ``directory/INDEX.sock``, listening when this
    returns; SsdlabError naming the target when it cannot start."""
    path = os.path.join(directory, f"{index}.sock")
    with open(os.path.join(directory, f"{index}.log"), "wb") as log:
        proc = subprocess.Popen(
            [binary, f"--server=sock:{path}"],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C at the terminal must not end it before its client
            preexec_fn=die_with_parent,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _listening(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                _stop(proc)
            said = Path(directory, f"{index}.log").read_text(errors="replace").strip()
            raise SsdlabError(
                f"{target.name}: its fio server (fio --server=sock:{path}) did not start"
                + (f": {' '.join(said.split())[:300]}" if said else "")
            )
        time.sleep(0.01)
    return proc


def _in_use(directory: Path) -> bool:
    """Whether a process works in ``directory`` or names it on its command line (a fio
    server, or a job it started)."""
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            cwd = os.readlink(proc / "cwd")
            if Path(cwd).is_relative_to(directory):
                return True
            if str(directory).encode() in (proc / "cmdline").read_bytes():
                return True
    return False


def _ours(directory: Path) -> bool:
    """Whether ``directory`` is a servers' directory of this user that no process uses (a
    server, or a job it started, works in it): named as :func:`local_servers` names them,
    holding nothing but sockets and server logs."""
    try:
        st = directory.lstat()
        files = [p.name for p in directory.iterdir()] if stat.S_ISDIR(st.st_mode) else [""]
    except OSError:
        return False
    return (
        directory.is_absolute()
        and directory.name.startswith(SERVERS_PREFIX)
        and st.st_uid == os.getuid()
        and all(_SERVER_FILE.fullmatch(name) for name in files)
        and not _in_use(directory)
    )


def _remove_stale(record: Path) -> list[str]:
    """Remove the servers' directories ``record`` names, left behind by runs killed outright
    (their servers die with them; see :func:`_ours`); the ones still in use are returned, to
    be removed by a later run."""
    try:
        listed = record.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError):
        listed = []
    kept = []
    for line in filter(None, listed):
        directory = Path(line)
        if _ours(directory):
            shutil.rmtree(directory, ignore_errors=True)
        elif directory.is_dir():
            kept.append(line)
    return kept


@contextlib.contextmanager
def local_servers(
    targets: Sequence[LocalTarget], root: Path | None = None
) -> Iterator[list[LocalTarget]]:
    """A fio server for each target, each target served by its own; every server, and what
    it runs, is stopped when the block ends, however it ends. With the run's ``root`` (its
    guard held), the servers' directory is listed in ``root/``
    :data:`~ssdlab.layout.SERVERS_RECORD` while they run, and those that runs killed outright
    left there are removed first."""
    binary = fio_binary()
    record = root / SERVERS_RECORD if root is not None else None
    kept = _remove_stale(record) if record is not None else []
    directory = tempfile.mkdtemp(prefix=SERVERS_PREFIX)  # mode 0700
    procs: list[subprocess.Popen[bytes]] = []
    try:
        if record is not None:
            write_text_atomic(record, "".join(f"{d}\n" for d in [*kept, directory]))
        if len(os.path.join(directory, f"{len(targets)}.sock")) > MAX_SOCKET_PATH:
            raise SsdlabError(
                f"the temporary directory {directory} has too long a path for a Unix socket: "
                "give TMPDIR a shorter one"
            )
        served = []
        for index, target in enumerate(targets):
            procs.append(_start(binary, directory, index, target))
            served.append(target.serving(os.path.join(directory, f"{index}.sock")))
        yield served
    finally:
        for proc in procs:
            _stop(proc)
        shutil.rmtree(directory, ignore_errors=True)
        if record is not None and kept:
            write_text_atomic(record, "".join(f"{d}\n" for d in kept))
        elif record is not None:
            record.unlink(missing_ok=True)


def local_info(fio: str) -> ServerInfo:
    """What a fleet knows of the servers on this machine, without probing them."""
    return ServerInfo(
        THIS_MACHINE,
        hostname=socket.gethostname(),
        os=platform.system(),
        arch=platform.machine(),
        fio_version=fio,
    )


def planned_local(judged: TargetInfo, out: Path, *, size_bytes: int, writes: bool) -> TargetInfo:
    """A judged target as :func:`ready_local` will leave it (a file grown to ``size_bytes``
    when the suite writes), changing nothing: what a step must fit in."""
    if judged.kind == "block":
        return judged
    return plan_target(Path(judged.path), out, size_bytes=size_bytes, writes=writes)


def ready_local(
    manifest: Manifest,
    out: Path,
    judged: TargetInfo,
    *,
    size_bytes: int,
    writes: bool,
    purge_first: bool,
) -> None:
    """A member on this machine as a local run sets it up: this machine's facts, the target
    prepared (a file created or grown to ``size_bytes`` with data when the suite writes; its
    O_DIRECT support found), purged before the first step with ``purge_first``, and fio's
    clocksource pinned as a local run pins it."""
    manifest.host = host_info()
    manifest.target = prepare_target(
        Path(judged.path), out, size_bytes=size_bytes, writes=writes, planned=judged
    )
    ready_run(manifest, purge_first)


class SocketLink(RunHook):
    """The link to a member's fio server in each step's directory, there while fio runs
    (see the module documentation)."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path

    def before_step(self, step_dir: Path, record: StepRecord) -> None:
        link = step_dir / LOCAL_LINK
        try:
            link.unlink(missing_ok=True)
            link.symlink_to(self.socket_path)
        except OSError as exc:
            raise SsdlabError(f"cannot link {link} to its fio server: {exc.strerror}") from None

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        with contextlib.suppress(OSError):
            (step_dir / LOCAL_LINK).unlink()


class _EachTarget:
    """A hook every target of this machine runs on its own (SMART snapshots of its device):
    a copy of ``hook`` per member, as a local run of that target would have."""

    def __init__(self, hook: RunHook) -> None:
        self.hook = hook

    def start(self) -> None:
        """Each member's copy starts with the member."""

    def member(self, out: Path, manifest: Manifest) -> RunHook | None:
        return copy.copy(self.hook)

    def finish(self) -> None:
        """Each member's copy finishes with the member."""


def local_fleet_hook(hook: RunHook, root: Path) -> FleetHook:
    """``hook`` on a lockstep run of targets of this machine rooted at ``root``: SMART
    snapshots of each device, as a local run takes them; anything else as on a fleet
    (:meth:`~ssdlab.execute.RunHook.on_fleet`: one power meter for the run)."""
    from ..telemetry.hooks import SmartHook

    if isinstance(hook, SmartHook):
        return _EachTarget(hook)
    return hook.on_fleet(root)
