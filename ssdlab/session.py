"""Setting up a run: its id, its manifest (new or resumed), its target and its guard.

Every runner (a suite, ACT trials, each member of a fleet) starts the same way: a results
directory guarded by :func:`guard_run` (lock, signals, space in reserve), a manifest opened by
:func:`new_manifest` or resumed (refused when it is another run), a target planned,
locked and prepared (:func:`set_up_local`; a fleet judges remote targets instead), readied
for its first step (:func:`ready_run`: purged, fio's clock pinned) and :func:`stamp`
recording what runs it. Steps then run through :class:`ssdlab.execute.StepExecutor`, whose
``running()`` closes the run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from . import __version__
from .atomic import write_error
from .errors import SsdlabError
from .fio import fio_version, pinned_clocksource, raise_keyboard_interrupt
from .layout import FLEET_FILE, LOCK_FILE, MANIFEST, RESERVE
from .lock import results_lock, target_lock
from .manifest import Manifest, TargetInfo, new_run_id, now
from .repeat import split_repeat
from .suite import Suite
from .sysinfo import file_system, host_info
from .target import plan_target, prepare_target, purge, release_target
from .units import format_size

#: written at the start of a run and removed to make room for the manifest when the file
#: system fills up
RESERVE_BYTES = 2**20


def new_manifest(
    suite: str, description: str, label: str | None, target: Path | None, **fields: Any
) -> Manifest:
    """The manifest of a new run on this machine (``fields``: more of its fields); the label
    defaults to the target's name."""
    return Manifest(
        run_id=new_run_id(),
        label=label or (target.name if target else "temporary file"),
        suite=suite,
        suite_description=description,
        host=host_info(),
        **fields,
    )


def _describe(info: TargetInfo) -> str:
    if info.temporary:
        return f"a temporary file of {info.size_bytes} bytes"
    device = info.device or {}
    identity = ", ".join(f"{k} {device.get(k) or '-'}" for k in ("serial", "model"))
    return f"{info.path} ({identity + ', ' if device else ''}{info.size_bytes} bytes)"


def target_differences(old: TargetInfo, new: TargetInfo) -> list[str]:
    """How the target of a resumed run differs from the one it ran on."""
    if old.temporary and new.temporary:  # the results directory may have moved
        differences = []
    elif old.temporary or new.temporary or old.kind != new.kind:
        differences = [f"target {_describe(old)} → {_describe(new)}"]
    elif os.path.realpath(old.path) != os.path.realpath(new.path):
        differences = [f"target {old.path} → {new.path}"]
    else:
        differences = []
    before, after = old.device or {}, new.device or {}
    differences += [
        f"{key} {before.get(key) or '-'} → {after.get(key) or '-'}"
        for key in ("serial", "model")
        if (before or after) and before.get(key) != after.get(key)
    ]
    if old.size_bytes != new.size_bytes:
        differences.append(f"target size {old.size_bytes} → {new.size_bytes} bytes")
    return differences


def _repeats(steps: list[dict[str, Any]]) -> int:
    """The ``--repeat`` a suite definition's steps were made with (1: none)."""
    return max((split_repeat(str(step.get("name")))[1] for step in steps), default=1)


def suite_differences(name: str, old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """How the suite definition ``new`` differs from the ``old`` one a run ran: ``--repeat``,
    then the steps added, removed or changed (repeats aside), else its other settings."""
    if old is None:
        return [f"suite {name!r} without a recorded definition"]
    differences = []
    if (was := _repeats(old["steps"])) != (asked := _repeats(new["steps"])):
        differences.append(f"--repeat {was} → {asked}")
    before, after = ({s.get("name"): s for s in d["steps"]} for d in (old, new))
    added = [n for n in after if n not in before and split_repeat(str(n))[1] == 1]
    removed = [n for n in before if n not in after and split_repeat(str(n))[1] == 1]
    changed = [n for n in after if n in before and after[n] != before[n]]
    for what, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            differences.append(f"suite {name!r}: steps {what}: {', '.join(map(str, names))}")
    rest = {k: v for k, v in old.items() if k != "steps"} != {
        k: v for k, v in new.items() if k != "steps"
    }
    if rest or not differences:
        differences.append(f"suite {name!r} with other settings")
    return differences


def _settings(values: Mapping[str, str] | Collection[str]) -> str:
    if isinstance(values, Mapping):
        values = [f"{k}={v}" for k, v in sorted(values.items())]
    return " ".join(sorted(values)) or "none"


def check_out(out: Path, *, fleet: bool) -> None:
    """SsdlabError (one line naming ``out`` and what it holds) when ``out`` holds the other
    kind of run: a fleet's root (``fleet.json``) for a single run, a single run
    (``manifest.json``) for a run of several targets or hosts (``fleet``)."""
    if not fleet and (out / FLEET_FILE).exists():
        raise SsdlabError(
            f"--out {out} holds a run of several targets or hosts ({FLEET_FILE}, one results "
            "directory each), not a single run: use another --out"
        )
    if fleet and (out / MANIFEST).exists():
        try:
            held = f"a single run of suite {Manifest.load(out).suite!r}"
        except SsdlabError:
            held = "a single run"
        raise SsdlabError(
            f"--out {out} holds {held} ({MANIFEST}), not a run of several targets or hosts: "
            "use another --out"
        )


def open_manifest(
    out: Path,
    suite: Suite,
    label: str | None,
    target: Path | None,
    *,
    params: Mapping[str, str] | None = None,
    scale: float | None = None,
    target_info: TargetInfo | None = None,
) -> Manifest:
    """A new manifest for a run of ``suite``, or the one in ``out`` of the run to resume:
    refused when ``out`` is a fleet's root (:func:`check_out`), and (one line naming every
    difference) unless it is the same suite as run (with the same fio options opted in to)
    and, for what is given, the same label, ``--set`` overrides (``params``), scale and
    target."""
    check_out(out, fleet=False)
    allowed = list(suite.allowed_fio_options)
    definition = suite.model_dump(mode="json")
    if not (out / MANIFEST).exists():
        return new_manifest(
            suite.name,
            suite.description,
            label,
            target,
            suite_definition=definition,
            scale=1.0 if scale is None else scale,
            params=None if params is None else dict(params),
            allowed_fio_options=allowed,
        )
    manifest = Manifest.load(out)
    differences = []
    if manifest.suite_definition != definition:
        differences += suite_differences(manifest.suite, manifest.suite_definition, definition)
    if label is not None and label != manifest.label:
        differences.append(f"label {manifest.label!r} → {label!r}")
    if None not in (params, manifest.params) and dict(params or {}) != manifest.params:
        differences.append(f"--set {_settings(manifest.params or {})} → {_settings(params or {})}")
    if manifest.allowed_fio_options not in (None, allowed):
        differences.append(
            f"--allow-fio-option {_settings(manifest.allowed_fio_options or ())} → "
            f"{_settings(allowed)}"
        )
    if scale is not None and scale != manifest.scale:
        differences.append(f"--scale {manifest.scale:g} → {scale:g}")
    recorded = manifest.target
    moved = target_differences(recorded, target_info) if target_info and recorded else []
    differences += moved
    if differences:
        held = f"target {_describe(recorded)}" if recorded else f"suite {manifest.suite!r}"
        asked = f"; this command targets {_describe(target_info)}" if moved and target_info else ""
        raise SsdlabError(
            f"--out {out} holds a run of {held}{asked}: {'; '.join(differences)}; "
            "use another --out to start a new run"
        )
    return manifest


def resumed(out: Path, suite: str, planned: TargetInfo, what: str) -> Manifest | None:
    """The manifest in ``out`` of a run of ``suite`` (not a suite file: ACT's trials) to
    resume on ``planned``, None without one; refused for a fleet's root, imported results,
    another suite's run, or ``what`` on another target."""
    check_out(out, fleet=False)
    if not (out / MANIFEST).exists():
        return None
    manifest = Manifest.load(out)
    if manifest.source == "import":
        raise SsdlabError(f"{out} holds imported results; use another --out for {what}")
    if manifest.suite != suite:
        raise SsdlabError(f"{out} holds a run of suite {manifest.suite!r}; use another --out")
    if manifest.target is not None and (
        differences := target_differences(manifest.target, planned)
    ):
        raise SsdlabError(
            f"{out} holds {what} on {manifest.target.path}, not on this command's target: "
            f"{'; '.join(differences)}; use another --out"
        )
    return manifest


def stamp(manifest: Manifest, fio: str) -> None:
    """Record what runs the run (fio's version ``fio``, ssdlab's) and that it runs now."""
    manifest.fio_version = fio
    manifest.ssdlab_version = __version__
    manifest.status, manifest.ended = "running", None
    manifest.started = manifest.started or now()


def described(info: TargetInfo) -> TargetInfo:
    """A prepared target with what a review says of it: a file's file system
    (:func:`~ssdlab.sysinfo.file_system`, by the file's device number)."""
    if info.kind != "file" or info.file_system is not None:
        return info
    try:
        return info.model_copy(update={"file_system": file_system(info.path)})
    except OSError:
        return info


def ready_run(manifest: Manifest, purge_first: bool) -> None:
    """A new run's last preparation of its target: purged with ``purge_first``, fio's
    clocksource pinned; a resumed run (steps recorded) keeps how it started. The target is
    :func:`described` (a fleet's member prepares it without :func:`set_up_local`)."""
    assert manifest.target is not None
    manifest.target = described(manifest.target)
    if not manifest.steps:
        if purge_first:
            manifest.purge = purge(manifest.target)
        manifest.fio_clocksource = pinned_clocksource(manifest.host)


@contextlib.contextmanager
def set_up_local(
    out: Path,
    target: Path | None,
    *,
    size_bytes: int,
    writes: bool,
    destroy_data: str | None,
    binary: str,
    open_run: Callable[[TargetInfo], Manifest],
    ready: Callable[[Manifest], None] = lambda manifest: None,
) -> Iterator[Manifest]:
    """A run on this machine, ready for its first step (enter inside :func:`guard_run`): the
    target planned (judged, nothing changed) and locked while the block runs
    (:func:`~ssdlab.lock.target_lock`: one run per target), the manifest from
    ``open_run(planned)`` (new or resumed; it refuses another run's), the target prepared,
    ``ready(manifest)`` (what a runner adds), the versions stamped and the manifest saved.
    The target is released when anything after its preparation fails. ``binary`` is fio's
    (:func:`~ssdlab.fio.fio_binary`, looked up before the guard so that a missing fio
    creates nothing); refused when ``out`` is a fleet's root (:func:`check_out`)."""
    check_out(out, fleet=False)
    planned = plan_target(
        target, out, size_bytes=size_bytes, writes=writes, destroy_data=destroy_data
    )
    with target_lock(planned, writes=writes):
        manifest = open_run(planned)
        manifest.target = described(
            prepare_target(target, out, size_bytes=size_bytes, writes=writes, planned=planned)
        )
        try:
            ready(manifest)
            stamp(manifest, fio_version(binary))
            save_manifest(manifest, out)
        except BaseException:
            release_target(manifest.target)
            raise
        yield manifest


@contextlib.contextmanager
def guard_run(out: Path, what: str) -> Iterator[None]:
    """While a run writes to ``out``: hold its lock (a second writer is refused), keep
    running when the terminal goes away (SIGHUP ignored), stop as on Ctrl-C on SIGTERM, and
    keep space in reserve for the manifest (see :func:`save_manifest`). A directory it
    created is removed again when the run ends before writing anything to it."""
    created = not out.exists()
    try:
        with results_lock(out, what), _run_signals():
            reserve = out / RESERVE
            try:
                reserve.write_bytes(os.urandom(RESERVE_BYTES))  # not zeros: compressed away
            except OSError as exc:  # without it a full disk could leave the run `running`
                reserve.unlink(missing_ok=True)
                raise SsdlabError(
                    f"{write_error(reserve, exc)}: a run keeps {format_size(RESERVE_BYTES)} "
                    "in reserve to save its manifest when the disk fills; free some space or "
                    "use another --out"
                ) from None
            try:
                yield
            finally:
                reserve.unlink(missing_ok=True)
    except BaseException:
        if created:  # refused before anything was written: leave no empty results directory
            with contextlib.suppress(OSError):
                if [p.name for p in out.iterdir()] == [LOCK_FILE]:
                    (out / LOCK_FILE).unlink()
                    out.rmdir()
        raise


#: the signals that stop a run, in the order they reached the runs :func:`guard_run` guarded
_STOPPED_BY: list[int] = []


def stop_signal() -> int | None:
    """The first SIGINT or SIGTERM that reached a run :func:`guard_run` guarded (the command
    line exits with 128 + it), None when none did."""
    return _STOPPED_BY[0] if _STOPPED_BY else None


@contextlib.contextmanager
def _run_signals() -> Iterator[None]:
    """SIGHUP ignored, SIGTERM a KeyboardInterrupt (signals are the main thread's only); the
    SIGINT and SIGTERM that arrive are noted for :func:`stop_signal` through Python's wakeup
    file descriptor, whichever handler runs (fio's run puts its own in place)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {signal.SIGHUP: signal.SIG_IGN, signal.SIGTERM: raise_keyboard_interrupt}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    noted, wakeup = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    outer = signal.set_wakeup_fd(wakeup, warn_on_full_buffer=False)
    if outer == -1:  # the outermost guarded run of this process
        _STOPPED_BY.clear()
    try:
        yield
    finally:
        signal.set_wakeup_fd(outer)
        with contextlib.suppress(BlockingIOError):
            stops = (signal.SIGINT, signal.SIGTERM)
            _STOPPED_BY.extend(n for n in os.read(noted, 4096) if n in stops)
        os.close(noted)
        os.close(wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def save_manifest(manifest: Manifest, out: Path) -> None:
    """Save the manifest of a run; on a full file system, give up the space
    :func:`guard_run` kept in reserve and try once more."""
    try:
        manifest.save(out)
    except SsdlabError:
        if not (out / RESERVE).exists():
            raise
        (out / RESERVE).unlink()
        manifest.save(out)
