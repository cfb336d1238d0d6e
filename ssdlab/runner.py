"""Run a suite: one fio process per step, raw results kept on disk, manifest kept current.

Layout of a results directory::

    manifest.json                 run, host, target, fio version, every step's status
    steps/NNN-<step>/job.fio      the exact job file fio ran
    steps/NNN-<step>/fio.json     fio's json+ output
    steps/NNN-<step>/fio_*.log    per-second bw/iops/lat logs and latency histogram logs
    steps/NNN-<step>/fio.stderr   fio's error output

A step runs in ``NNN-<step>.partial`` and is renamed when fio has exited; only the manifest
says whether it is complete. Re-running with the same results directory continues at the
first step that is not ``ok``.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from rich.console import Console

from . import __version__
from .errors import InputError, SsdlabError
from .fio import fio_binary, fio_version, job_file, run_fio
from .io import read_fio_json
from .manifest import Manifest, StepRecord, now
from .progress import RunDisplay
from .suite import Step, Suite
from .sysinfo import host_info
from .target import prepare_target, release_target

FIO_JSON = "fio.json"
JOB_FILE = "job.fio"


class RunInterrupted(SsdlabError):
    """The user stopped the run; everything measured so far is kept."""


class StepFailed(SsdlabError):
    """A step's fio run failed; earlier results are kept."""


def _new_manifest(suite: Suite, label: str | None, target: Path | None) -> Manifest:
    stamp = now().strftime("%Y%m%dT%H%M%SZ")
    return Manifest(
        run_id=f"{stamp}-{secrets.token_hex(3)}",
        label=label or (target.name if target else "temporary file"),
        suite=suite.name,
        suite_description=suite.description,
        host=host_info(),
        steps=[
            StepRecord(index=i, name=s.name, dir=f"{i:03d}-{s.name}", workload=s)
            for i, s in enumerate(suite.steps, start=1)
        ],
    )


def _resume_manifest(out: Path, suite: Suite) -> Manifest:
    manifest = Manifest.load(out)
    planned = [s.workload for s in manifest.steps]
    if manifest.suite != suite.name or planned != list(suite.steps):
        raise SsdlabError(
            f"{out} holds a run of suite {manifest.suite!r} with other steps; "
            "use another --out to start a new run"
        )
    return manifest


def _step_summary(step_dir: Path) -> str:
    """One line of headline figures; raises InputError when fio's output is unusable."""
    jobs = read_fio_json(step_dir / FIO_JSON).jobs
    errors = [e for e in jobs["error"].unique().to_list() if e]
    if errors:
        raise InputError(f"fio reported error {errors[0]} ({os.strerror(errors[0])})")
    iops = float(jobs["iops"].sum())
    bw = float(jobs["bw_bytes_s"].sum())
    p99 = jobs["clat_p99_ns"].max()
    tail = f"  clat p99 {p99 / 1000:,.1f} µs" if p99 is not None else ""
    return f"{iops:,.0f} IOPS  {bw / 2**20:,.1f} MiB/s{tail}"


def _run_step(
    manifest: Manifest, record: StepRecord, step: Step, out: Path, display: RunDisplay
) -> None:
    assert manifest.target is not None
    final = out / "steps" / record.dir
    partial = final.with_name(final.name + ".partial")
    for old in (final, partial):
        shutil.rmtree(old, ignore_errors=True)
    partial.mkdir(parents=True)
    direct = step.direct and manifest.target.direct_supported
    header = (
        f"ssdlab {__version__}: suite {manifest.suite}, step {step.name}, run {manifest.run_id}"
    )
    (partial / JOB_FILE).write_text(
        job_file(step, manifest.target.path, direct=direct, header=header)
    )
    record.status, record.started, record.ended, record.error = "running", now(), None, None
    record.direct = direct
    manifest.save(out)

    outcome = run_fio(partial / JOB_FILE, partial / FIO_JSON, on_status=display.fio_status)
    error = outcome.error
    summary = ""
    if error is None or outcome.interrupted:
        try:
            summary = _step_summary(partial)
        except InputError as exc:
            error = error or str(exc)
    os.replace(partial, final)
    record.ended = now()
    record.status = "interrupted" if outcome.interrupted else ("failed" if error else "ok")
    record.error = error
    manifest.save(out)
    display.end_step(step, summary if record.status == "ok" else f"{record.status}: {error}")
    if outcome.interrupted:
        raise RunInterrupted(
            f"interrupted during step '{step.name}'; results so far are in {out} "
            "(run the same command again to continue)"
        )
    if error:
        raise StepFailed(f"step '{step.name}' failed: {error}")


def run_suite(
    suite: Suite,
    out: Path,
    *,
    target: Path | None = None,
    label: str | None = None,
    console: Console | None = None,
) -> Manifest:
    """Run every step of ``suite`` not yet ``ok`` in ``out``; return the final manifest."""
    binary = fio_binary()
    out.mkdir(parents=True, exist_ok=True)
    resuming = (out / "manifest.json").exists()
    manifest = _resume_manifest(out, suite) if resuming else _new_manifest(suite, label, target)
    manifest.target = prepare_target(target, out)
    manifest.fio_version = fio_version(binary)
    manifest.ssdlab_version = __version__
    manifest.status, manifest.started, manifest.ended = "running", manifest.started or now(), None
    manifest.save(out)
    todo = [(r, s) for r, s in zip(manifest.steps, suite.steps, strict=True) if r.status != "ok"]
    try:
        with RunDisplay(suite, [s for _, s in todo], console) as display:
            for position, (record, step) in enumerate(todo, start=1):
                display.start_step(position, len(todo), step)
                _run_step(manifest, record, step, out, display)
        manifest.status = "complete"
    except RunInterrupted:
        manifest.status = "interrupted"
        raise
    except SsdlabError:
        manifest.status = "failed"
        raise
    finally:
        manifest.ended = now()
        target_file = Path(manifest.target.path)
        if target_file.is_file():
            manifest.target.size_bytes = target_file.stat().st_size
        manifest.save(out)
        release_target(manifest.target)
    return manifest
