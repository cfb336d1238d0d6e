"""``ssdlab plan`` (and ``ssdlab run --dry-run``): what a run would do, checked, run nothing.

It prints the steps, their planned time and the target with its size, and checks every job
file with ``fio --parse-only``. Nothing is written: not the target (a file is not created,
grown or opened for writing; a device is only looked at), not the results directory (no lock,
no manifest); the job files it checks live in a temporary directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from ..console import plural
from ..errors import SsdlabError
from . import stderr

if TYPE_CHECKING:
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
    target: Path | None,
    target_size: int | None,
    label: str | None,
    destroy_data: str | None,
    purge: bool,
    scale: float,
    params: dict[str, str],
    hosts: str | None,
) -> None:
    """Print what ``ssdlab run`` would do with these options and check it (see the module
    docstring); SsdlabError, after the plan, when the run would fail before its first step."""
    from rich.console import Console

    from ..fio import fio_binary, fio_version, pinned_clocksource
    from ..layout import MANIFEST
    from ..runner import check_fits, check_job_files, default_file_size
    from ..sysinfo import host_info

    binary = fio_binary()
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
        from ..fleet import parse_hosts

        listed = parse_hosts(hosts)
        out_console.print(
            f"on {plural(len(listed), 'host')} (fio servers are not contacted by a plan):"
        )
        for host in listed:  # its name says its target ("default file": under /var/tmp)
            out_console.print(escape(f"  {host.name} -> {out / host.dirname}"))
        if suite.writes:
            out_console.print(f"file targets are laid out to {_bytes(size)}")
        path = listed[0].target or "/var/tmp/ssdlab-plan.bin" if listed else "/dev/null"
    else:
        from ..session import open_manifest
        from ..target import TEMP_TARGET, plan_target

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
                what = "block device" if info.kind == "block" else "file"
                device = info.device or {}
                identity = ", ".join(str(device[k]) for k in ("model", "serial") if device.get(k))
                info_text = f"{info.path} ({what}{', ' + identity if identity else ''}): " + (
                    _bytes(info.size_bytes)
                )
                if info.kind == "file" and writes:
                    info_text += " once created or grown by the run"
            out_console.print(escape(f"target: {info_text}"))
        except SsdlabError as exc:
            problems.append(f"target: {exc}")
        if (out / MANIFEST).exists():
            try:
                manifest = open_manifest(out, suite, label, target, params=params, scale=scale)
                done = sum(s.status == "ok" for s in manifest.steps)
                out_console.print(
                    escape(f"{out} holds this run: {plural(done, 'step')} done, it resumes")
                )
            except SsdlabError as exc:
                problems.append(str(exc))
    problems += check_job_files(
        suite, path, clocksource=pinned_clocksource(host_info()), binary=binary
    )
    if problems:
        for problem in problems[:-1]:
            stderr().print(f"[red]error:[/] {escape(problem)}", soft_wrap=True, highlight=False)
        raise SsdlabError(problems[-1])
    jobs = plural(suite_files(suite), "job file")
    out_console.print(f"fio --parse-only: {jobs} ok ({escape(fio_version(binary))})")


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
