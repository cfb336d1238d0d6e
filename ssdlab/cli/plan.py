"""``ssdlab plan`` (and ``ssdlab run --dry-run``): prints the :class:`~ssdlab.plan.Plan` of a
run (the steps, their planned time, each target with its size and state, the job files fio
checked); :func:`ssdlab.plan.plan` makes it, running and writing nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from ..console import plural
from ..errors import SsdlabError
from ..units import format_hms
from . import stderr

if TYPE_CHECKING:
    from rich.console import Console

    from ..estimate import StepTime
    from ..manifest import TargetInfo
    from ..plan import Plan, Resume
    from ..suite import Step, Suite


def _bytes(n: int | None) -> str:
    """``10,000,000,000 bytes (9.3 GiB)``: exact, and in the kernel's binary units."""
    if n is None:
        return "size unknown"
    from ..units import format_capacity

    return f"{n:,} bytes ({format_capacity(n)})"


def _row(index: str, step: Step, estimate: StepTime, rounds: str = "") -> tuple[str, ...]:
    mix = f" {step.rwmixread}/{100 - step.rwmixread}" if step.rwmixread is not None else ""
    if estimate.planned_bytes is not None:
        time = f"{format_hms(estimate.seconds)} ({estimate.describe()})"
    elif step.loops:
        time = f"{step.loops} x size" + (
            f", at most {format_hms(step.cap_s)}" if step.runtime_s else ""
        )
    else:
        time = format_hms(step.cap_s) + (f" (ramp {step.ramp_s:g} s)" if step.ramp_s else "")
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


def plan_table(suite: Suite, steps: dict[str, StepTime]) -> object:
    """The suite's steps as a table (``steps``: their estimates by name): a round block's
    steps once, with their rounds."""
    from rich.table import Table

    from ..suite import Rounds, Sweep

    table = Table(header_style="bold", box=None, pad_edge=False)
    for column in ("#", "Step", "rw", "bs", "QD x jobs", "engine", "Time", "Span", ""):
        table.add_column(column, overflow="fold")  # a narrow terminal: names folded, never cut
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
                table.add_row(*_row("", step, steps[step.name], f" (x up to {item.max})"))
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
            workload = item.workload
            table.add_row(*_row("", workload, steps[workload.name], f" (x {item.runs})"))
            n = last
        else:
            n += 1
            table.add_row(*_row(str(n), item, steps[item.name]))
    return table


#: how several targets of this machine run, as a plan says it
_MODES = {
    "lockstep": "in lockstep (each step starts on every target together)",
    "sequence": "in sequence (the whole suite on each target in turn)",
}


def print_plan(plan: Plan) -> None:
    """Print ``plan`` (:func:`ssdlab.plan.plan`); after it, its problems as errors, the last
    one raised as SsdlabError."""
    from ..console import stdout_console

    suite = plan.suite
    console = stdout_console()
    lines = [
        f"suite {suite.name}: {suite.description.splitlines()[0] if suite.description else ''}"
    ]
    rounds = suite.has_rounds
    count = f"{'up to ' if rounds else ''}{plural(suite.max_steps, 'fio run')}"
    estimate = plan.estimate
    planned = f"planned {format_hms(estimate.seconds)}"
    if rounds and estimate.steady_s < estimate.seconds:
        planned += (
            f" at most; {format_hms(estimate.steady_s)} if every round block is steady after its "
            "first window"
        )
    if plan.scale != 1:
        planned += f" (scale {plan.scale:g})"
    sized = estimate.from_bytes
    if sized:
        its = "its bytes" if len(sized) == 1 else "their bytes"
        planned += f", {plural(len(sized), 'size-based step')} estimated from {its} (Time)"
    if capped := [s for s in suite.all_steps() if s.loops and s.name not in sized]:
        caps = "its time cap" if len(capped) == 1 else "their time caps (or 0 s without one)"
        planned += f", {plural(len(capped), 'size-based step')} of unknown bytes at {caps}"
    lines.append(f"{count}, {planned}")
    for line in lines:
        console.print(escape(line.rstrip(": ")))
    console.print(plan_table(suite, estimate.steps))
    if plan.kind == "hosts":
        hosts = plural(len(plan.targets), "host")
        console.print(f"on {hosts} (fio servers are not contacted by a plan):")
        for host in plan.targets:  # its name says its target ("default file": under /var/tmp)
            console.print(escape(f"  {host.name} -> {host.out}"))
        if plan.writes:
            console.print(f"file targets are laid out to {_bytes(plan.size_bytes)}")
    elif plan.kind == "targets":
        of = plural(len(plan.targets), "target")
        console.print(escape(f"on {of} of this machine, {_MODES[plan.mode]}:"))
        for target in plan.targets:
            text = _target_text(target.target, plan) if target.target else "refused (see below)"
            console.print(escape(f"  {target.name} -> {target.out}: {text}"), highlight=False)
            _print_resume(console, target.resume, "    ")
    else:
        (target,) = plan.targets
        if target.target:
            console.print(escape(f"target: {_target_text(target.target, plan)}"))
        _print_resume(console, target.resume)
    if plan.problems:
        for problem in plan.problems[:-1]:
            stderr().print(f"[red]error:[/] {escape(problem)}", soft_wrap=True, highlight=False)
        raise SsdlabError(plan.problems[-1])
    jobs = plural(plan.job_files, "job file")
    console.print(f"fio --parse-only: {jobs} ok ({escape(plan.fio_version)})")


def _target_text(info: TargetInfo, plan: Plan) -> str:
    """A planned target: its path, kind, the drive's model and serial, its size."""
    if info.temporary:
        return f"a temporary file of {_bytes(plan.size_bytes)} in {plan.out}, removed afterwards"
    what = "block device" if info.kind == "block" else "file"
    device = info.device or {}
    identity = ", ".join(str(device[k]) for k in ("model", "serial") if device.get(k))
    text = f"{info.path} ({what}{', ' + identity if identity else ''}): {_bytes(info.size_bytes)}"
    grown = info.kind == "file" and plan.writes
    return text + (" once created or grown by the run" if grown else "")


def _print_resume(console: Console, resume: Resume | None, indent: str = "") -> None:
    """Say that a results directory holds this run (it resumes)."""
    if resume is None:
        return
    state = (
        "complete, nothing left to run"
        if resume.complete
        else f"{plural(resume.done, 'step')} done, it resumes"
    )
    console.print(escape(f"{indent}{resume.out} holds this run: {state}"), highlight=False)
