"""Import several trees of fio output as separate runs in one command (``ssdlab import
--each``): each tree becomes ``ROOT/<tree name>``, a tree that fails is reported and the others
still import.

Start-up is paid once, and trees import side by side, one process per CPU, each forked from
this one (so it need not load Python, polars and the registry's fio formats again). Forking
is only done where it is safe: on Linux, before polars has started its thread pool in this
process (a forked child would wait forever on a pool whose threads it does not have);
elsewhere trees import one after the other in this process. A child reports progress and its
outcome through a pipe; Ctrl-C (or a signal that ends this process) interrupts every child,
and each removes what it had begun."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from .errors import InputError, SsdlabError
from .formats import FORMATS, Format
from .importer import ImportReport, import_results, made_by_import
from .layout import MANIFEST


@dataclass
class TreeImport:
    """One tree of :func:`import_each`: where it goes, and its report or the error that
    stopped it."""

    tree: Path
    out: Path
    report: ImportReport | None = None
    error: SsdlabError | None = None


def _normal(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))


def _nested(a: Path, b: Path) -> bool:
    """Whether one of the (normalised) paths is the other or lies inside it."""
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def plan_each(trees: Sequence[Path], root: Path) -> list[TreeImport]:
    """``ROOT/<tree name>`` for every tree; InputError naming the problem when two trees
    have the same name, an output already holds results, or an output and a tree overlap
    (one inside the other), so nothing is imported."""
    plan = [TreeImport(tree, root / _normal(tree).name) for tree in trees]
    seen: dict[str, Path] = {}
    for item in plan:
        name = item.out.name
        if not name or name in (".", ".."):
            raise InputError(f"{item.tree}: a tree needs a name to import into {root}/<name>")
        if name in seen:
            raise InputError(f"{seen[name]} and {item.tree} would both import into {item.out}")
        seen[name] = item.tree
        if (item.out / MANIFEST).exists():
            raise InputError(f"{item.out} already holds results; import into a new directory")
        for other in plan:
            if _nested(_normal(item.out), _normal(other.tree)):
                raise InputError(f"{item.out} (for {item.tree}) overlaps the tree {other.tree}")
    return plan


def import_each(
    trees: Sequence[Path],
    root: Path,
    *,
    strict: bool = False,
    workers: int | None = None,
    on_start: Callable[[TreeImport], None] | None = None,
    on_file: Callable[[int, int], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    on_done: Callable[[TreeImport], None] | None = None,
) -> list[TreeImport]:
    """Import every tree into ``ROOT/<tree name>`` (checked first by :func:`plan_each`),
    ``workers`` at a time (default: one per CPU; 1: one after the other in this process); a
    tree whose import raises a user error (``strict`` makes a skipped file one) keeps it in
    ``error`` and the other trees go on. ``on_start``/``on_done`` frame each tree (in the
    order trees start and end); ``on_file`` and ``on_status`` are
    :func:`~ssdlab.importer.import_results`'."""
    plan = plan_each(trees, root)
    workers = min(len(plan), workers or os.cpu_count() or 1)
    callbacks = _Callbacks(on_start, on_file, on_status, on_done)
    formats = FORMATS.all("fio")  # once, for every tree
    if workers > 1 and _can_fork():
        _import_forked(plan, workers, strict, callbacks, formats)
        return plan
    for item in plan:
        callbacks.start(item)
        try:
            item.report = import_results(
                [item.tree],
                item.out,
                strict=strict,
                on_file=on_file,
                on_status=on_status,
                formats=formats,
            )
        except SsdlabError as exc:
            item.error = exc
        callbacks.done(item)
    return plan


@dataclass
class _Callbacks:
    on_start: Callable[[TreeImport], None] | None
    on_file: Callable[[int, int], None] | None
    on_status: Callable[[str], None] | None
    on_done: Callable[[TreeImport], None] | None

    def start(self, item: TreeImport) -> None:
        if self.on_start:
            self.on_start(item)

    def done(self, item: TreeImport) -> None:
        if self.on_done:
            self.on_done(item)


def _threads() -> list[str]:
    """The names of this process's threads (Linux)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as fh:
                names.append(fh.read().strip())
        except OSError:  # the thread has ended
            continue
    return names


def _can_fork() -> bool:
    """Whether a forked child could use polars and this process's locks: Linux, no other
    Python thread running, and polars' thread pool (threads ``polars-N``) and async runtime
    (``tokio-*``) not started in this process."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False
    try:
        names = _threads()
    except OSError:
        return False
    return not any(
        name.startswith("tokio") or (name.startswith("polars-") and name[7:].isdigit())
        for name in names
    )


def _child(conn: Connection, item: TreeImport, strict: bool, formats: list[Format[Any]]) -> None:
    """A forked child's work: import one tree, telling the parent through ``conn``. Its
    first SIGINT or SIGTERM (Ctrl-C reaches the whole process group; the parent's end sends
    SIGTERM) interrupts it like Ctrl-C, and it removes what it had begun; later ones are
    ignored, so that they cannot cut that clean-up short."""
    from .fio import die_with_parent

    die_with_parent()
    interrupted = False

    def interrupt(signum: int, frame: object) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # as the parent was started
            signal.signal(sig, interrupt)
    try:
        conn.send(("start",))
        report = import_results(
            [item.tree],
            item.out,
            strict=strict,
            on_file=lambda done, total: conn.send(("file", done, total)),
            on_status=lambda text: conn.send(("status", text)),
            formats=formats,
        )
        conn.send(("end", report, None))
    except SsdlabError as exc:
        try:
            conn.send(("end", None, exc))
        except Exception:  # an error that does not pickle: its message
            conn.send(("end", None, SsdlabError(str(exc))))
    except KeyboardInterrupt:
        os._exit(130)  # what it had begun is removed; the parent is being interrupted too
    except BaseException:  # a bug: the parent raises it with this traceback
        conn.send(("crash", traceback.format_exc()))


def _import_forked(
    plan: list[TreeImport],
    workers: int,
    strict: bool,
    callbacks: _Callbacks,
    formats: list[Format[Any]],
) -> None:
    """Import the trees of ``plan`` in forked children, ``workers`` at a time."""
    context = multiprocessing.get_context("fork")
    waiting = list(plan)
    running: dict[Connection, tuple[TreeImport, multiprocessing.Process, Path | None]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                item = waiting.pop(0)
                reader, writer = context.Pipe(duplex=False)
                made = made_by_import(item.out)
                child = context.Process(target=_child, args=(writer, item, strict, formats))
                child.start()
                writer.close()
                running[reader] = (item, child, made)
            for reader in wait(list(running)):
                item, child, made = running[reader]
                try:
                    message = reader.recv()
                except EOFError:  # the child has ended
                    del running[reader]
                    reader.close()
                    child.join()
                    if item.report is None and item.error is None:
                        _lost(item, child.exitcode, made)
                        callbacks.done(item)
                    continue
                _message(item, message, callbacks)
    finally:
        for _, child, _ in running.values():
            if child.is_alive():
                os.kill(child.pid, signal.SIGTERM)
        for _, child, _ in running.values():
            child.join()


def _lost(item: TreeImport, exitcode: int | None, made: Path | None) -> None:
    """A child that ended without a word (killed, out of memory): what it had begun is
    removed, and its tree's error says how it ended."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
    code = exitcode or 0
    try:
        name = signal.Signals(-code).name
    except ValueError:  # a real-time signal has no name
        name = f"signal {-code}"
    how = f"was killed by {name}" if code < 0 else f"exited with {code}"
    item.error = SsdlabError(f"its import process {how} before it finished")


def _message(item: TreeImport, message: tuple, callbacks: _Callbacks) -> None:
    """What a child said, passed on to the callbacks."""
    kind, *args = message
    if kind == "start":
        callbacks.start(item)
    elif kind == "file" and callbacks.on_file:
        callbacks.on_file(*args)
    elif kind == "status" and callbacks.on_status:
        callbacks.on_status(*args)
    elif kind == "end":
        item.report, item.error = args
        callbacks.done(item)
    elif kind == "crash":
        raise RuntimeError(f"importing {item.tree} failed in its process:\n{args[0]}")
