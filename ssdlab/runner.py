"""Run a suite: one fio process per step, raw results kept on disk, manifest kept current.

Layout of a results directory::

    manifest.json                 run, host, target, fio version, every step's status
    steps/NNN-<step>/job.fio      the exact job file fio ran
    steps/NNN-<step>/fio.json     fio's json+ output
    steps/NNN-<step>/fio_*.log    per-second bw/iops/lat logs and latency histogram logs
    steps/NNN-<step>/fio.stderr   fio's error output

A step runs in ``NNN-<step>.partial`` and is renamed when fio has exited; only the manifest
says whether it is complete. Re-running with the same results directory continues at the
first step that is not ``ok``: finished steps are neither repeated nor rewritten, and a
step that was interrupted or killed is run again from its start. Round blocks are judged
again from the rounds already on disk. Only the same run is continued: the suite as run, its
``--set`` overrides, scale, label (when given) and target must match the manifest's. One
process at a time writes to a results directory (``.ssdlab.lock``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
import secrets
import shutil
import signal
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Literal, TypeVar

import polars as pl
from rich.console import Console

from . import __version__
from .analysis.steady_state import steady_round
from .atomic import write_error
from .errors import InputError, SsdlabError
from .fio import (
    FioOutcome,
    fio_binary,
    fio_version,
    job_file,
    pinned_clocksource,
    raise_keyboard_interrupt,
    run_fio,
)
from .io import read_fio_json
from .layout import FIO_JSON, JOB_FILE, MANIFEST, RESERVE, step_dir
from .lock import results_lock
from .manifest import Manifest, StepRecord, TargetInfo, now
from .progress import RunDisplay
from .suite import Rounds, Step, Suite
from .sysinfo import host_info
from .tables import format_bw, format_iops
from .target import plan_target, prepare_target, purge, release_target
from .units import parse_size

DEFAULT_FILE_BYTES = 2**30
#: written at the start of a run and removed to make room for the manifest when the file
#: system fills up
RESERVE_BYTES = 2**20
_ENOSPC = os.strerror(errno.ENOSPC)
OnError = Literal["stop", "continue"]
T = TypeVar("T")


class RunHook:
    """Something to do around a run and each of its steps (telemetry, power sampling).

    ``before_step``/``after_step`` get the step's directory while it is still ``.partial``,
    so what they write there is kept with the step's raw results. An ``SsdlabError`` from a
    hook becomes a note on the step (or the run) and never loses a measurement.
    """

    def start(self, out: Path, manifest: Manifest) -> None:
        """Before the first step (or the first step of a resumed run)."""

    def before_step(self, step_dir: Path, record: StepRecord) -> None:
        """After the job file is written, just before fio starts."""

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        """Just after fio exits, whatever the outcome."""

    def finish(self, out: Path, manifest: Manifest) -> None:
        """After the last step, also when the run fails or is interrupted."""


class RunInterrupted(SsdlabError):
    """The user stopped the run; everything measured so far is kept."""


class StepFailed(SsdlabError):
    """A step's fio run failed; earlier results are kept."""


def _needs(step: Step) -> int | None:
    """Bytes of the target a step works on: its absolute size + offset; None for a share."""
    if not step.size or "%" in step.size:
        return None
    offset = parse_size(step.offset) if step.offset and "%" not in step.offset else 0
    return parse_size(step.size) + offset


def default_file_size(suite: Suite, scale: float = 1.0) -> int:
    """Bytes a file target needs: the largest absolute size + offset of any step (``suite``
    is already scaled), or 1 GiB x ``scale`` when every step works on a share (``75%``) of
    the target, which scaling leaves as it is."""
    needs = [n for s in suite.all_steps() if (n := _needs(s)) is not None]
    return max(needs, default=int(DEFAULT_FILE_BYTES * scale))


def check_fits(suite: Suite, target: TargetInfo) -> None:
    """SsdlabError when a step's absolute size + offset does not fit in ``target``."""
    if target.size_bytes is None:
        return
    for step in suite.all_steps():
        needs = _needs(step)
        if needs is not None and needs > target.size_bytes:
            raise SsdlabError(
                f"step '{step.name}' needs {needs} bytes of the target (size + offset) but "
                f"{target.path} holds {target.size_bytes}; give a larger --target-size or "
                "another target"
            )


def inspect_step(step_dir: Path) -> tuple[pl.DataFrame, str]:
    """fio's per-direction rows and a one-line headline; InputError when unusable."""
    jobs = read_fio_json(step_dir / FIO_JSON).jobs
    if jobs.is_empty():
        raise InputError(f"{step_dir / FIO_JSON}: holds no job results")
    errors = [e for e in jobs["error"].unique().to_list() if e]
    if errors:
        raise InputError(f"fio reported error {errors[0]} ({os.strerror(errors[0])})")
    iops = float(jobs["iops"].sum())
    bw = float(jobs["bw_bytes_s"].sum())
    p99 = jobs["clat_p99_ns"].max()
    tail = f"  clat p99 {p99 / 1000:,.1f} µs" if p99 is not None else ""
    return jobs, f"{format_iops(iops)}  {format_bw(bw)}{tail}"  # MB/s, as in reports


def no_io_error(step_dir: Path, notes: list[str]) -> str | None:
    """Why fio, exiting 0, did no I/O at all (its stderr and ``fio:`` notes, else a generic
    reason); None when it did some, or when its output is unusable (``inspect`` says why)."""
    try:
        jobs = read_fio_json(step_dir / FIO_JSON).jobs
    except InputError:
        return None
    if jobs.is_empty() or jobs["io_bytes"].sum() > 0:  # no jobs: inspect_step says so
        return None
    said: list[str] = []
    with contextlib.suppress(OSError):
        said = (step_dir / "fio.stderr").read_text(errors="replace").splitlines()
    lines = [line.strip() for line in said if line.strip()]
    text = "; ".join(dict.fromkeys(lines + [n for n in notes if n.startswith("fio:")]))
    return "fio did no I/O" + (f": {text[:400]}" if text else "")


def disk_full(error: str, step_dir: Path, target: TargetInfo | None) -> str:
    """``error`` as one line naming the full file system when fio failed for want of space:
    its ENOSPC, or a failure without a word on stderr while the file system of the step
    directory or of a file target is full (fio could not even write its messages)."""
    files = [str(step_dir)] + ([target.path] if target and target.kind == "file" else [])
    if found := re.search(rf"on file (.+?): {_ENOSPC}", error):
        files = [found[1]]
    elif _ENOSPC not in error:
        with contextlib.suppress(OSError):
            if (step_dir / "fio.stderr").stat().st_size:
                return error
        files = [f for f in files if _full(f)]
    if not files:
        return error
    return str(write_error(files[-1], OSError(errno.ENOSPC, _ENOSPC)))


def _full(path: str) -> bool:
    try:
        return os.statvfs(path).f_bavail == 0
    except OSError:
        return False


def tracked_value(jobs: pl.DataFrame, metric: str, direction: str | None) -> float:
    """A round's tracked variable: rates summed over directions, latencies IOPS-weighted."""
    if direction:
        jobs = jobs.filter(pl.col("direction") == direction)
    if jobs.is_empty():
        raise InputError(f"no {direction or 'any'} direction to track")
    if metric in ("iops", "bw_bytes_s"):
        return float(jobs[metric].sum())
    return float((jobs[metric] * jobs["iops"]).sum() / jobs["iops"].sum())


@dataclasses.dataclass
class _Run:
    manifest: Manifest
    out: Path
    display: RunDisplay
    on_error: OnError
    hooks: list[RunHook] = dataclasses.field(default_factory=list)
    failures: list[str] = dataclasses.field(default_factory=list)

    def call(self, notes: list[str], method: str, *args: object) -> None:
        """Call ``method`` on every hook; their user-facing errors become notes."""
        for hook in self.hooks:
            try:
                getattr(hook, method)(*args)
            except SsdlabError as exc:
                notes.append(f"{type(hook).__name__}.{method}: {exc}")
                self.display.print(f"warning: {exc}")

    def save(self) -> None:
        save_manifest(self.manifest, self.out)

    def step(self, step: Step, block: str | None = None, round_no: int | None = None) -> StepRecord:
        """Run ``step`` unless it is already ``ok``; return its record."""
        record = self.manifest.record(step.name)
        if record is not None and record.status == "ok":
            self.display.add_planned(-step.planned_s)
            return record
        if record is None:
            index = len(self.manifest.steps) + 1
            record = StepRecord(
                index=index,
                name=step.name,
                dir=f"{index:03d}-{step.name}",
                workload=step,
                block=block,
                round=round_no,
            )
            self.manifest.steps.append(record)
        self._execute(record, step)
        return record

    def launch(self, step_dir: Path, record: StepRecord) -> FioOutcome:
        """Run fio on the step's job file, with ``--readonly`` for a step that does not write
        (a fleet member runs it as a fio client instead)."""
        return run_fio(
            step_dir / JOB_FILE,
            step_dir / FIO_JSON,
            on_status=self.display.fio_status,
            readonly=record.workload is not None and not record.workload.writes,
        )

    def run_items(self, suite: Suite) -> None:
        """Every step and round block of ``suite``; failures kept by ``on_error=continue``
        end it with :class:`StepFailed`."""
        for item in suite.steps:
            if isinstance(item, Rounds):
                self.rounds(item)
            else:
                self.step(item)
        if self.failures:
            raise StepFailed(f"{len(self.failures)} step(s) failed: " + "; ".join(self.failures))

    def execute(
        self,
        record: StepRecord,
        job: str,
        label: str,
        planned_s: float,
        inspect: Callable[[Path], T],
    ) -> tuple[FioOutcome, str | None, T | None]:
        """Run the fio ``job`` text as the step of ``record``: in its ``.partial`` directory,
        hooks around fio, then ``inspect(step_dir)`` (an InputError becomes the step's error),
        the rename and the manifest update. Returns fio's outcome, the error, what ``inspect``
        returned."""
        final = step_dir(self.out, record)
        partial = final.with_name(final.name + ".partial")
        for old in (final, partial):
            shutil.rmtree(old, ignore_errors=True)
        try:
            partial.mkdir(parents=True)
            (partial / JOB_FILE).write_text(job)
        except OSError as exc:
            raise write_error(partial / JOB_FILE, exc) from None
        record.status, record.started, record.ended, record.error = "running", now(), None, None
        record.notes = []
        try:
            self.save()
            self.call(record.notes, "before_step", partial, record)
            self.display.start_step(label, planned_s)
            outcome = self.launch(partial, record)
            record.notes += [n for n in outcome.notes if n.startswith("fio:")]  # fio's warnings
            self.call(record.notes, "after_step", partial, record)
            error, inspected = outcome.error, None
            if error is None:
                error = no_io_error(partial, outcome.notes)
            if error is None or outcome.interrupted:
                try:
                    inspected = inspect(partial)
                except InputError as exc:
                    error = error or str(exc)
            if error and not outcome.interrupted:
                error = disk_full(error, partial, self.manifest.target)
            os.replace(partial, final)
            record.ended = now()
            record.status = "interrupted" if outcome.interrupted else ("failed" if error else "ok")
            record.error = error
        except BaseException as exc:  # never left "running": the run's last save records it
            if record.status == "running":
                record.status, record.ended = "failed", now()
                record.error = str(exc) if isinstance(exc, SsdlabError) else f"stopped: {exc!r}"
            raise
        self.save()
        return outcome, error, inspected

    def _execute(self, record: StepRecord, step: Step) -> None:
        target = self.manifest.target
        assert target is not None
        record.direct = step.direct and target.direct_supported
        header = f"ssdlab {__version__}: suite {self.manifest.suite}, step {step.name}"
        job = job_file(
            step,
            target.path,
            direct=record.direct,
            header=header,
            clocksource=self.manifest.fio_clocksource,
        )
        label = f"[{record.index}] {step.name}"
        outcome, error, headline = self.execute(
            record, job, label, step.planned_s, lambda d: inspect_step(d)[1]
        )
        self.display.end_step(
            f"{step.name}: {headline if record.status == 'ok' else f'{record.status}: {error}'}"
        )
        if outcome.interrupted:
            raise RunInterrupted(
                f"interrupted during step '{step.name}'; results so far are in {self.out} "
                "(run the same command again to continue)"
            )
        if error:
            message = f"step '{step.name}' failed: {error}"
            if self.on_error == "stop":
                raise StepFailed(message)
            self.failures.append(message)

    def rounds(self, block: Rounds) -> None:
        """Rounds of ``block`` until its tracked variable is steady or ``max`` rounds."""
        values: list[float] = []
        per_round = sum(s.planned_s for s in block.steps)
        for round_no in range(1, block.max + 1):
            if round_no > block.window:
                self.display.add_planned(per_round)
            for step in block.round_steps(round_no):
                self.step(step, block.name, round_no)
            tracked = self.manifest.record(block.tracked_name(round_no))
            assert tracked is not None
            try:
                if tracked.status != "ok":
                    raise InputError(f"tracked step {tracked.name} {tracked.status}")
                jobs = inspect_step(step_dir(self.out, tracked))[0]
                values.append(tracked_value(jobs, block.metric, block.direction))
            except InputError as exc:
                self._determine(block, values, {"steady": False, "reason": str(exc)})
                return
            state = steady_round(values, block.window, block.max)
            status = "steady" if state and state.steady else f"not steady ({len(values)} rounds)"
            self.display.print(f"{block.name}: round {round_no}/{block.max}, {status}")
            if state is not None:
                self._determine(block, values, dataclasses.asdict(state))
                return

    def _determine(self, block: Rounds, values: list[float], state: dict) -> None:
        """Record a block's determination; ``round_values`` holds every round's value."""
        entry = {"block": block.name, "metric": block.metric, "direction": block.direction}
        entry |= {"track": block.track, "window": block.window, "max_rounds": block.max}
        entry |= {"round_values": values}
        self.manifest.steady_state = [
            d for d in self.manifest.steady_state if d["block"] != block.name
        ] + [entry | state]
        self.save()


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


def _settings(values: Mapping[str, str] | Collection[str]) -> str:
    if isinstance(values, Mapping):
        values = [f"{k}={v}" for k, v in sorted(values.items())]
    return " ".join(sorted(values)) or "none"


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
    """A new manifest, or the one in ``out`` of the run to resume: refused (one line naming
    every difference) unless it is the same suite as run (with the same fio options opted
    in to) and, for what is given, the same label, ``--set`` overrides (``params``), scale
    and target."""
    allowed = list(suite.allowed_fio_options)
    definition = suite.model_dump(mode="json")
    if not (out / MANIFEST).exists():
        return Manifest(
            run_id=f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
            label=label or (target.name if target else "temporary file"),
            suite=suite.name,
            suite_description=suite.description,
            suite_definition=definition,
            host=host_info(),
            scale=1.0 if scale is None else scale,
            params=None if params is None else dict(params),
            allowed_fio_options=allowed,
        )
    manifest = Manifest.load(out)
    differences = []
    if manifest.suite_definition != definition:
        differences.append(f"suite {manifest.suite!r} with other steps or settings")
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
    if target_info is not None and recorded is not None:
        differences += target_differences(recorded, target_info)
    if differences:
        held = f"target {_describe(recorded)}" if recorded else f"suite {manifest.suite!r}"
        asked = f"; this command targets {_describe(target_info)}" if target_info else ""
        raise SsdlabError(
            f"--out {out} holds a run of {held}{asked}: {'; '.join(differences)}; "
            "use another --out to start a new run"
        )
    return manifest


@contextlib.contextmanager
def guard_run(out: Path, what: str) -> Iterator[None]:
    """While a run writes to ``out``: hold its lock (a second writer is refused), keep
    running when the terminal goes away (SIGHUP ignored), stop as on Ctrl-C on SIGTERM, and
    keep space in reserve for the manifest (see :func:`save_manifest`)."""
    with results_lock(out, what), _run_signals():
        reserve = out / RESERVE
        with contextlib.suppress(OSError):
            reserve.write_bytes(os.urandom(RESERVE_BYTES))  # not zeros: compressed away
        try:
            yield
        finally:
            reserve.unlink(missing_ok=True)


@contextlib.contextmanager
def _run_signals() -> Iterator[None]:
    """SIGHUP ignored, SIGTERM a KeyboardInterrupt (signals are the main thread's only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {signal.SIGHUP: signal.SIG_IGN, signal.SIGTERM: raise_keyboard_interrupt}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
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


def end_status(exc: BaseException) -> Literal["interrupted", "failed"]:
    """A run's status when it ends by ``exc``."""
    return "interrupted" if isinstance(exc, RunInterrupted | KeyboardInterrupt) else "failed"


def run_suite(
    suite: Suite,
    out: Path,
    *,
    target: Path | None = None,
    target_size: int | None = None,
    label: str | None = None,
    destroy_data: str | None = None,
    purge_first: bool = False,
    on_error: OnError = "stop",
    scale: float = 1.0,
    params: Mapping[str, str] | None = None,
    hooks: list[RunHook] | None = None,
    console: Console | None = None,
) -> Manifest:
    """Run every step of ``suite`` not yet ``ok`` in ``out``; return the final manifest.

    ``on_error="continue"`` records a failed step and goes on; the run then ends with
    :class:`StepFailed` listing the failures. ``purge_first`` purges the target before the
    first step of a new run. ``scale`` and ``params`` (the ``--set`` overrides as given) are
    recorded (the suite passed is already scaled and built with them), as are the fio options
    it opted in to; a resumed run must match them, its label when given, and its target.
    """
    binary = fio_binary()
    size_bytes = target_size or default_file_size(suite, scale)
    writes = suite.writes or purge_first
    with guard_run(out, "run"):
        planned = plan_target(
            target, out, size_bytes=size_bytes, writes=writes, destroy_data=destroy_data
        )
        manifest = open_manifest(
            out,
            suite,
            label,
            target,
            params=params or {},
            scale=scale,
            target_info=planned,
        )
        check_fits(suite, planned)
        fresh = not manifest.steps
        manifest.target = prepare_target(
            target, out, size_bytes=size_bytes, writes=writes, planned=planned
        )
        try:
            if purge_first and fresh:
                manifest.purge = purge(manifest.target)
            if fresh:  # a resumed run keeps timing itself the way it started
                manifest.fio_clocksource = pinned_clocksource(manifest.host)
            manifest.fio_version = fio_version(binary)
            manifest.ssdlab_version = __version__
            manifest.status, manifest.ended = "running", None
            manifest.started = manifest.started or now()
            save_manifest(manifest, out)
        except BaseException:
            release_target(manifest.target)
            raise
        display = RunDisplay(f"suite {suite.name}", suite.planned_s, console)
        run = _Run(manifest, out, display, on_error, hooks or [])
        try:
            run.call(manifest.notes, "start", out, manifest)
            with display:
                run.run_items(suite)
            manifest.status = "complete"
        except BaseException as exc:
            manifest.status = end_status(exc)
            raise
        finally:
            try:
                run.call(manifest.notes, "finish", out, manifest)
            finally:
                release_target(manifest.target)  # first: it may free the space the save needs
                manifest.ended = now()
                save_manifest(manifest, out)
    return manifest
