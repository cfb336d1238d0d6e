"""``ssdlab plan`` (and ``ssdlab run --dry-run``): what a run would do, checked, run nothing.

It prints the steps, their planned time and the target with its size, and checks every job
file with ``fio --parse-only``. Nothing is written: not the target (a file is not created,
grown or opened for writing; a device is only looked at), not the results directory (no lock,
no manifest); the job files it checks live in a temporary directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from ..console import plural
from ..errors import SsdlabError
from . import stderr

if TYPE_CHECKING:
    from rich.console import Console

    from ..fleet.hosts import LocalTarget
    from ..manifest import TargetInfo
    from ..suite import Step, Suite


def _hms(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _bytes(n: int | None) -> str:
    if n is None:
        return "size unknown"
    scale, unit = (1e12, "TB") if n >= 1e12 else (1e9, "GB") if n >= 1e9 else (1e6, "MB")
    return f"{n:,} bytes ({n / scale:,.2f} {unit})"


def _row(index: str, step: Step, rounds: str = "") -> tuple[str, ...]:
    mix = f" {step.rwmixread}/{100 - step.rwmixread}" if step.rwmixread is not None else ""
    if step.loops:
        time = f"{step.loops} x size" + (
            f", at most {_hms(step.planned_s)}" if step.runtime_s else ""
        )
    else:
        time = _hms(step.planned_s) + (f" (ramp {step.ramp_s:g} s)" if step.ramp_s else "")
    span = step.size or "whole target"
    if step.offset:
        span += f" from {step.offset}"
    return (
        index,
        step.name + rounds,
        step.rw + mix,
        step.bs,
        f"{step.iodepth} x {step.numjobs}",
        step.ioengine,
        time,
        span,
        "writes" if step.writes else "reads",
    )


def plan_table(suite: Suite) -> object:
    """The suite's steps as a table: a round block's steps once, with their rounds."""
    from rich.table import Table

    from ..suite import Rounds, Sweep

    table = Table(header_style="bold", box=None, pad_edge=False)
    for column in ("#", "Step", "rw", "bs", "QD x jobs", "engine", "Time", "Span", ""):
        table.add_column(column)
    n = 0
    for item in suite.steps:
        if isinstance(item, Rounds):
            last = n + item.max * len(item.steps)
            table.add_row(
                f"{n + 1}-{last}",
                f"{item.name}: rounds of these {plural(len(item.steps), 'step')} until "
                f"{item.track} {item.metric} is steady (window {item.window}), up to {item.max}",
            )
            for step in item.steps:
                table.add_row(*_row("", step, f" (x up to {item.max})"))
            n = last
        elif isinstance(item, Sweep):
            last = n + item.runs
            spec = item.sweep
            of = (
                f"{spec.max_iops:,.0f} IOPS (given)"
                if spec.max_iops is not None
                else "the IOPS its first, unlimited step measures"
            )
            fractions = ", ".join(f"{f * 100:g}" for f in spec.fractions)
            table.add_row(
                f"{n + 1}-{last}",
                f"{item.name}: load sweep at {fractions} % of {of} (fio rate_iops split over "
                f"the jobs), {'then unlimited; ' if spec.unlimited else ''}a rate counts as "
                f"reached at {spec.reach * 100:g} %",
            )
            table.add_row(*_row("", item.workload, f" (x {item.runs})"))
            n = last
        else:
            n += 1
            table.add_row(*_row(str(n), item))
    return table


def plan_run(
    suite: Suite,
    out: Path,
    *,
    targets: list[Path],
    targets_mode: str,
    target_size: int | None,
    label: str | None,
    destroy_data: str | None,
    purge: bool,
    scale: float,
    params: dict[str, str],
    hosts: str | None,
) -> None:
    """Print what ``ssdlab run`` would do with these options and check it (see the module
    docstring); SsdlabError, after the plan, when the run would fail before its first step.
    Several ``targets`` (run in ``targets_mode``): each one's results directory, checks and
    state."""
    from rich.console import Console

    from ..fio import fio_binary, fio_version, pinned_clocksource
    from ..fleet.hosts import local_targets, parse_hosts
    from ..runner import check_fits, check_job_files, default_file_size
    from ..sysinfo import host_info

    binary = fio_binary()
    # a target refused (listed twice, a path fio cannot take) before the plan is printed
    listed = parse_hosts(hosts) if hosts else []
    several = local_targets(targets) if len(targets) > 1 else []
    out_console = Console(width=200, highlight=False)
    lines = [
        f"suite {suite.name}: {suite.description.splitlines()[0] if suite.description else ''}"
    ]
    rounds = suite.has_rounds
    count = f"{'up to ' if rounds else ''}{plural(suite.max_steps, 'fio run')}"
    planned = f"planned {_hms(suite.planned_max_s)}"
    if rounds and suite.planned_s < suite.planned_max_s:
        planned += (
            f" at most; {_hms(suite.planned_s)} if every round block is steady after its "
            "first window"
        )
    if scale != 1:
        planned += f" (scale {scale:g})"
    lines.append(f"{count}, {planned}")
    for line in lines:
        out_console.print(escape(line.rstrip(": ")))
    out_console.print(plan_table(suite))

    problems: list[str] = []
    size = target_size or default_file_size(suite, scale)
    if hosts:
        from ..fleet.store import fleet_token

        try:
            fleet_token(out, suite, listed, "hosts")
        except SsdlabError as exc:
            problems.append(str(exc))
        out_console.print(
            f"on {plural(len(listed), 'host')} (fio servers are not contacted by a plan):"
        )
        for host in listed:  # its name says its target ("default file": under /var/tmp)
            out_console.print(escape(f"  {host.name} -> {out / host.dirname}"))
        if suite.writes:
            out_console.print(f"file targets are laid out to {_bytes(size)}")
        path = listed[0].target or "/var/tmp/ssdlab-plan.bin" if listed else "/dev/null"
    elif len(targets) > 1:
        path = _plan_targets(
            out_console,
            problems,
            suite,
            out,
            several,
            targets_mode,
            size=size,
            label=label,
            destroy_data=destroy_data,
            writes=suite.writes or purge,
            scale=scale,
            params=params,
        )
    else:
        from ..target import TEMP_TARGET, plan_target

        target = targets[0] if targets else None
        writes = suite.writes or purge
        path = str((out / TEMP_TARGET if target is None else target).absolute())
        try:
            if target is None:  # the results directory may not exist yet: nothing to look at
                info_text = f"a temporary file of {_bytes(size)} in {out}, removed afterwards"
            else:
                info = plan_target(
                    target, out, size_bytes=size, writes=writes, destroy_data=destroy_data
                )
                check_fits(suite, info)
                path = info.path
                info_text = _target_text(info, writes)
            out_console.print(escape(f"target: {info_text}"))
        except SsdlabError as exc:
            problems.append(f"target: {exc}")
        _resumes(out_console, problems, out, suite, label, params=params, scale=scale)
    problems += check_job_files(
        suite, path, clocksource=pinned_clocksource(host_info()), binary=binary
    )
    if problems:
        for problem in problems[:-1]:
            stderr().print(f"[red]error:[/] {escape(problem)}", soft_wrap=True, highlight=False)
        raise SsdlabError(problems[-1])
    jobs = plural(suite_files(suite), "job file")
    out_console.print(f"fio --parse-only: {jobs} ok ({escape(fio_version(binary))})")


def _target_text(info: TargetInfo, writes: bool) -> str:
    """A planned target: its path, kind, the drive's model and serial, its size."""
    what = "block device" if info.kind == "block" else "file"
    device = info.device or {}
    identity = ", ".join(str(device[k]) for k in ("model", "serial") if device.get(k))
    text = f"{info.path} ({what}{', ' + identity if identity else ''}): {_bytes(info.size_bytes)}"
    return text + (" once created or grown by the run" if info.kind == "file" and writes else "")


def _resumes(
    console: Console,
    problems: list[str],
    out: Path,
    suite: Suite,
    label: str | None,
    indent: str = "",
    **given: Any,
) -> None:
    """Say whether ``out`` holds this run (it resumes), or note why it cannot."""
    from ..layout import MANIFEST
    from ..session import check_out, open_manifest

    try:
        check_out(out, fleet=False)  # a fleet's root holds no single run
        if not (out / MANIFEST).exists():
            return
        manifest = open_manifest(out, suite, label, None, **given)
    except SsdlabError as exc:
        problems.append(str(exc))
        return
    done = sum(s.status == "ok" for s in manifest.steps)
    state = (
        "complete, nothing left to run"
        if manifest.status == "complete"
        else f"{plural(done, 'step')} done, it resumes"
    )
    console.print(escape(f"{indent}{out} holds this run: {state}"), highlight=False)


def _plan_targets(
    console: Console,
    problems: list[str],
    suite: Suite,
    out: Path,
    listed: Sequence[LocalTarget],
    mode: str,
    *,
    size: int,
    label: str | None,
    destroy_data: str | None,
    writes: bool,
    **given: Any,
) -> str:
    """The plan of several targets of this machine: each one's results directory, checks
    (judged as the run judges them; one problem per target) and state; returns the path the
    job files are checked with."""
    from ..fleet.hosts import THIS_MACHINE, judge_targets
    from ..fleet.local import planned_local
    from ..fleet.store import fleet_token
    from ..runner import check_fits

    how = {
        "lockstep": "in lockstep (each step starts on every target together)",
        "sequence": "in sequence (the whole suite on each target in turn)",
    }[mode]
    console.print(escape(f"on {plural(len(listed), 'target')} of this machine, {how}:"))
    try:
        fleet_token(out, suite, listed, mode)
    except SsdlabError as exc:
        problems.append(str(exc))
    path = listed[0].name
    for target in listed:
        directory = out / target.dir
        try:
            info = judge_targets(
                [target], "plan", writes=writes, destroy_data=destroy_data, local={THIS_MACHINE}
            )[target]
            info = planned_local(info, directory, size_bytes=size, writes=writes)
            check_fits(suite, info)
            text = _target_text(info, writes)
        except SsdlabError as exc:
            problems.append(f"target {target.name}: {exc}")
            text = "refused (see below)"
        console.print(escape(f"  {target.name} -> {directory}: {text}"), highlight=False)
        label_of = f"{label} {target.name}" if label else target.name
        _resumes(console, problems, directory, suite, label_of, "    ", **given)
    return path


def suite_files(suite: Suite) -> int:
    """Job files a plan checks: each step once (a round block's steps once, a load sweep's
    unlimited and first rate-limited step: :func:`ssdlab.runner.sweep_jobs`)."""
    from ..runner import sweep_jobs
    from ..suite import Rounds, Sweep

    files = 0
    for item in suite.steps:
        if isinstance(item, Sweep):
            files += len(sweep_jobs(item))
        else:
            files += len(item.steps) if isinstance(item, Rounds) else 1
    return files
