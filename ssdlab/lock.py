"""One writer per results directory and one run per target: advisory ``flock`` locks.

Two ``ssdlab run`` or ``ssdlab import`` into the same ``--out`` at once would interleave
manifests and frames: :func:`results_lock` holds ``<dir>/.ssdlab.lock``. Two runs on the same
target at once would both write it (fio does not open it exclusively) and measure each
other: :func:`target_lock` holds a lock named after the target's identity (a file's device and
inode, the number of every device of a block device's stack and the files at its bottom) in
:func:`lock_directory`, for any ``--out``, reading runs too. The second one is refused with
one line naming the holder. The locks are the kernel's, so they go away with the process
that held them, however that ended; the files stay (removing one would race with a process
opening it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from . import stack
from .atomic import write_error
from .errors import SsdlabError
from .layout import LOCK_FILE
from .manifest import TargetInfo

#: Where the locks of targets live: the first of these that exists (``ssdlab`` in it).
LOCK_BASES = (Path("/run/lock"), Path("/var/lock"))
LOCK_SUBDIR = "ssdlab"
#: the most of a holder's command line a lock records, and of its record read back
COMMAND_CHARS = 500
_HOLDER_BYTES = 4 * COMMAND_CHARS

_held: dict[str, int] = {}  # the target locks this process holds, and how often
_held_guard = threading.Lock()


def _printable(text: str, limit: int = COMMAND_CHARS) -> str:
    """``text`` on one line (control characters as ``?``), at most ``limit`` characters."""
    one = "".join(c if c.isprintable() else "?" for c in text.strip())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _command() -> str:
    """This process's command line, as the user typed it (``ssdlab run ...``)."""
    argv = sys.argv or ["python"]
    first = Path(argv[0])
    ssdlab = first.name == "ssdlab" or first.parent.name == "ssdlab"  # python -m ssdlab
    return _printable(" ".join(["ssdlab" if ssdlab else first.name, *argv[1:]]))


def _open(path: Path) -> int:
    """A descriptor of the lock file ``path`` (created if missing), never through a link: a
    planted one would have ssdlab truncate another file. Read-only when the file is another
    user's (protected_regular refuses opening it to write; a read-only one locks as well).
    Never blocks (a FIFO planted there would); SsdlabError unless it is a regular file."""
    flags = os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
        except PermissionError:
            fd = os.open(path, os.O_RDONLY | flags)
    except OSError as exc:
        raise write_error(path, exc) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SsdlabError(
            f"{path}: a lock file must be a regular file, and this is not (a FIFO, device, "
            "socket or directory put there); remove it and run again"
        )
    return fd


@contextlib.contextmanager
def _flocked(path: Path, holder: str, refused: Callable[[str], str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``, with ``holder`` written in it; SsdlabError
    ``refused(what the holder wrote)`` when another process holds it."""
    fd = _open(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise SsdlabError(f"{path}: cannot lock it: {exc.strerror}") from None
            said = os.pread(fd, _HOLDER_BYTES, 0).decode(errors="replace")
            raise SsdlabError(refused(said)) from None
        with contextlib.suppress(OSError):  # the holder's name is a courtesy, not the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode(), 0)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def results_lock(directory: Path, what: str) -> Iterator[None]:
    """Hold the lock of ``directory`` (created if missing) while ``what`` (``"run"``,
    ``"import"``) writes to it; SsdlabError naming the holder when another process has it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(directory, exc) from None

    def refused(said: str) -> str:
        holder = _printable(said) or "another process"
        return (
            f"{directory} is in use by another ssdlab process ({holder}); wait for it to "
            "end or choose another --out"
        )

    with _flocked(directory / LOCK_FILE, f"ssdlab {what}, pid {os.getpid()}", refused):
        yield


def lock_directory() -> Path:
    """The directory of target locks: ``ssdlab`` in the first of :data:`LOCK_BASES` that
    exists (else in the temporary directory), created sticky and writable by all (mode
    1777, as /tmp); SsdlabError when it is not such a directory of root's or this user's
    (whoever owns it could swap the locks)."""
    base = next((b for b in LOCK_BASES if b.is_dir()), Path(tempfile.gettempdir()))
    directory = base / LOCK_SUBDIR
    try:
        os.mkdir(directory, 0o1777)
    except FileExistsError:
        pass
    except OSError as exc:
        raise write_error(directory, exc) from None
    else:
        os.chmod(directory, 0o1777)  # mkdir's mode is cut by the umask
    try:
        st = os.lstat(directory)
    except OSError as exc:
        raise write_error(directory, exc) from None
    if (
        not stat.S_ISDIR(st.st_mode)
        or st.st_uid not in (0, os.geteuid())
        or stat.S_IMODE(st.st_mode) & (stat.S_ISVTX | 0o777) != stat.S_ISVTX | 0o777
    ):
        raise SsdlabError(
            f"{directory}: ssdlab keeps its target locks there, but it is not a directory of "
            "root's (or yours) with mode 1777; remove it and run again"
        )
    return directory


def _file_keys(path: str | Path) -> list[str]:
    """A file's lock names: its name in its directory (by the directory's identity, so that a
    file not yet created has one) and, once it exists, its device and inode."""
    parent = os.stat(os.path.dirname(path))
    name = hashlib.sha256(os.path.basename(path).encode(errors="surrogateescape")).hexdigest()
    keys = [f"name-{parent.st_dev}-{parent.st_ino}-{name[:16]}"]
    with contextlib.suppress(FileNotFoundError):
        st = os.stat(path)
        keys.append(f"file-{st.st_dev}-{st.st_ino}")
    return keys


def target_keys(info: TargetInfo) -> list[str]:
    """The lock names of a judged target (on this machine): for a block device, the number
    of every device of its stack and the keys of the files at its bottom
    (:func:`ssdlab.stack.identities`), so that two runs whose stacks share any part exclude
    each other; for a file, its keys (:func:`_file_keys`)."""
    try:
        if info.kind == "block":
            keys = []
            for key, name in stack.identities(info.path).items():
                block = key[0] == "block"
                keys += (
                    [f"block-{os.major(key[1])}-{os.minor(key[1])}"] if block else _file_keys(name)
                )
            return keys
        return _file_keys(info.path)
    except OSError as exc:
        raise SsdlabError(f"target {info.path}: cannot inspect it: {exc.strerror}") from None


@contextlib.contextmanager
def _target_key(directory: Path, key: str, target: str, holder: str) -> Iterator[None]:
    """Hold the lock ``key`` of ``target``; already held by this process, hold it again (a
    run of several targets holds each one for its whole run, and each target's run too)."""
    with _held_guard:
        again = _held.get(key, 0) > 0
        if again:
            _held[key] += 1
    if again:
        try:
            yield
        finally:
            with _held_guard:
                _held[key] -= 1
        return

    def refused(said: str) -> str:
        verb, _, who = said.partition("\n")
        who = _printable(who) or "its pid is not recorded yet"
        verb = verb if verb in ("written", "read") else "used"
        return f"{target} is being {verb} by another ssdlab process ({who}); wait for it to end"

    with _flocked(directory / f"{key}.lock", holder, refused):
        with _held_guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _held_guard:
                del _held[key]


@contextlib.contextmanager
def target_lock(info: TargetInfo, *, writes: bool) -> Iterator[None]:
    """Hold the locks of the judged target ``info`` (:func:`target_keys`) while a run
    ``writes`` it or reads it; SsdlabError, one line naming the holder's pid and command,
    when another process holds one."""
    directory = lock_directory()
    holder = f"{'written' if writes else 'read'}\npid {os.getpid()}: {_command()}"
    with contextlib.ExitStack() as held:
        for key in dict.fromkeys(target_keys(info)):
            held.enter_context(_target_key(directory, key, info.path, holder))
        yield
