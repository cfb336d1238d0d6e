"""One writer per results directory: an advisory ``flock`` on ``<dir>/.ssdlab.lock``.

Two ``ssdlab run`` or ``ssdlab import`` into the same ``--out`` at once would interleave
manifests and frames; the second one is refused with one line naming the holder. The lock
is the kernel's, so it goes away with the process that held it, however that ended; the
file itself stays (removing it would race with a process opening it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .atomic import write_error
from .errors import SsdlabError
from .layout import LOCK_FILE


@contextlib.contextmanager
def results_lock(directory: Path, what: str) -> Iterator[None]:
    """Hold the lock of ``directory`` (created if missing) while ``what`` (``"run"``,
    ``"import"``) writes to it; SsdlabError naming the holder when another process has it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(directory, exc) from None
    try:
        # never through a link: a planted one would have ssdlab truncate another file
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(directory / LOCK_FILE, flags, 0o644)
    except OSError as exc:
        raise write_error(directory / LOCK_FILE, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise SsdlabError(f"{directory}: cannot lock it: {exc.strerror}") from None
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise SsdlabError(
                f"{directory} is in use by another ssdlab process ({holder}); wait for it to "
                "end or choose another --out"
            ) from None
        with contextlib.suppress(OSError):  # the holder's name is a courtesy, not the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"ssdlab {what}, pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)
