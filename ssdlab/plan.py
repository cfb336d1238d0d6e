"""What a run would do, checked, running nothing (``ssdlab plan``, ``ssdlab run --dry-run``).

:func:`plan` builds the suite as :func:`ssdlab.runner.run` builds it
(:func:`~ssdlab.runner.prepare_run`), plans each target as the run would find it (its kind,
size and drive; whether the suite's steps fit in it), says whether each results directory
already holds the run (it resumes) and checks every job file with ``fio --parse-only``.
Nothing is written: not the target (a file is not created, grown or opened for writing; a
device is only looked at), not the results directory (no lock, no manifest); the job files
it checks live in a temporary directory. What the run would refuse is listed in
:attr:`Plan.problems`, one line each, not raised. :attr:`Plan.estimate` says how long the run
would take (:mod:`ssdlab.estimate`: a size-based step from its bytes at its target class's
default rate, bounded by its time cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .errors import SsdlabError
from .estimate import RUN_START_S, Rates, StepTime, TargetClass, suite_seconds
from .fio import fio_binary, fio_version, pinned_clocksource
from .layout import MANIFEST, TEMP_TARGET
from .manifest import TargetInfo
from .runner import (
    PreparedRun,
    RunOptions,
    check_fits,
    check_job_files,
    default_file_size,
    prepare_run,
    suite_jobs,
)
from .session import check_out, open_manifest
from .suite import Suite
from .sysinfo import host_info
from .target import MIN_FILE_BYTES, plan_target

if TYPE_CHECKING:
    from .fleet.hosts import LocalTarget
    from .fleet.targets import Mode

__all__ = ["HOST_PLAN_TARGET", "Estimate", "Plan", "PlannedTarget", "Resume", "plan"]

#: the target the job files of a fleet are checked with when its first host tests its
#: default file (``fio --parse-only`` opens nothing)
HOST_PLAN_TARGET = "/var/tmp/ssdlab-plan.bin"


@dataclass(frozen=True)
class Resume:
    """A results directory that already holds the run: ``done`` steps ``ok``, ``complete``
    when nothing is left to run."""

    out: Path
    done: int
    complete: bool


@dataclass(frozen=True)
class PlannedTarget:
    """One target of a plan: its ``name`` (its path, or a host's ``HOST:PORT TARGET``), its
    results directory ``out``, the ``target`` as the run would find it (None for a host's:
    fio servers are not contacted; and when ``refused``, which says why) and, when ``out``
    holds the run already, how far it got."""

    name: str
    out: Path
    target: TargetInfo | None = None
    refused: str | None = None
    resume: Resume | None = None


@dataclass(frozen=True)
class Estimate:
    """How long a run would take (:data:`~ssdlab.estimate.RUN_START_S` counted once):
    ``seconds`` with every round block at its ``max`` rounds
    (what the run plans for), ``steady_s`` when each block is steady after its first window;
    ``steps``: each step's estimate by its name in the suite (a round block's and a load
    sweep's steps once, by their own names), on a target of ``target_class``."""

    seconds: float
    steady_s: float
    steps: dict[str, StepTime]
    target_class: TargetClass

    @property
    def from_bytes(self) -> list[str]:
        """The steps estimated from their bytes and a rate (size-based, bytes known)."""
        return [name for name, time in self.steps.items() if time.planned_bytes is not None]

    @classmethod
    def of(cls, suite: Suite, rates: Rates) -> Estimate:
        """The estimate of ``suite`` with ``rates``."""
        return cls(
            RUN_START_S + suite_seconds(suite, rates),
            RUN_START_S + suite_seconds(suite, rates, most=False),
            {step.name: rates.step_time(step) for step in suite.all_steps()},
            rates.target_class,
        )


@dataclass(frozen=True)
class Plan:
    """What ``ssdlab run`` would do with the same options. ``kind``: one ``target`` (a file,
    a device or a temporary file: ``targets[0].target.temporary``), several ``targets`` of
    this machine run in ``mode``, or ``hosts`` (fio servers); ``writes``: the run writes to
    its targets (the suite writes, or purges); ``size_bytes``: the size file targets are laid
    out to; ``job_files``: the job files checked with fio (``fio_version``); ``problems``:
    why the run would fail before its first step, in the order it would find them (empty
    when it would start); ``estimate``: how long it would take on its first target."""

    suite: Suite
    out: Path
    scale: float
    kind: Literal["target", "targets", "hosts"]
    mode: Mode
    writes: bool
    size_bytes: int
    targets: list[PlannedTarget]
    job_files: int
    fio_version: str
    problems: list[str]
    estimate: Estimate


def plan(options: RunOptions) -> Plan:
    """The plan of a run with ``options`` (see the module documentation); SsdlabError for
    options the run refuses before it looks at any target (as :func:`ssdlab.runner.run`)."""
    prepared = prepare_run(options)
    binary = fio_binary()
    o, suite = options, prepared.suite
    problems: list[str] = []
    size = max(o.target_size or default_file_size(suite, o.scale), MIN_FILE_BYTES)  # as run
    writes = suite.writes or o.purge
    kind: Literal["target", "targets", "hosts"]
    members: list[tuple[TargetInfo, bool]] = []  # several: the targets and if on this machine
    if o.hosts:
        kind = "hosts"
        targets, path, members = _plan_hosts(prepared, o.hosts, problems, size=size)
    elif len(o.targets) > 1:
        from .fleet.hosts import local_targets

        kind = "targets"
        several = local_targets(o.targets)  # refused: listed twice, a path fio cannot take
        targets = _plan_targets(prepared, several, problems, size=size, writes=writes)
        members = [(t.target, True) for t in targets if t.target is not None]
        path = several[0].name
    else:
        kind = "target"
        single = _plan_target(prepared, problems, size=size, writes=writes)
        targets, path = [single], single.target.path if single.target else single.name
    jobs = suite_jobs(suite, path, pinned_clocksource(host_info()))
    problems += check_job_files(jobs, binary=binary)
    first = next((t.target for t in targets if t.target is not None), None)
    slowest = Rates.slowest(members)  # several run in lockstep: as the fleet's bar plans
    return Plan(
        suite=suite,
        out=o.out,
        scale=o.scale,
        kind=kind,
        mode=prepared.mode,
        writes=writes,
        size_bytes=size,
        targets=targets,
        job_files=len(jobs),
        fio_version=fio_version(binary),
        problems=problems,
        estimate=Estimate.of(suite, Rates.of(first, size) if kind == "target" else slowest),
    )


def _plan_hosts(
    prepared: PreparedRun,
    hosts: str,
    problems: list[str],
    *,
    size: int,
) -> tuple[list[PlannedTarget], str, list[tuple[TargetInfo, bool]]]:
    """The hosts of a fleet (not contacted) and the target their job files are checked with
    (the first host's, or :data:`HOST_PLAN_TARGET` for its default file); their targets
    judged as the run judges them before it starts (those on this machine's addresses as
    local ones; elsewhere, writing needs ``--destroy-data``), as the run plans with them
    (a written file of ``size``), each with whether it is on this machine."""
    from .fleet.hosts import judge_targets, parse_hosts, run_size, servers_here
    from .fleet.store import fleet_token

    o = prepared.options
    listed = parse_hosts(hosts)
    members: list[tuple[TargetInfo, bool]] = []
    try:
        token = fleet_token(o.out, prepared.suite, listed, "hosts")
        local, _ = servers_here(listed, {})  # not probed: by their addresses
        writes = prepared.suite.writes or o.purge
        judged = judge_targets(
            listed, token, writes=writes, destroy_data=o.destroy_data, local=local, root=o.out
        )
        laid_out = size if prepared.suite.writes else None
        members = [(run_size(t, laid_out), h.server in local) for h, t in judged.items()]
    except SsdlabError as exc:
        problems.append(str(exc))
    targets = [PlannedTarget(host.name, prepared.options.out / host.dirname) for host in listed]
    path = listed[0].target or HOST_PLAN_TARGET  # parse_hosts lists one at least
    return targets, path, members


def _plan_target(
    prepared: PreparedRun, problems: list[str], *, size: int, writes: bool
) -> PlannedTarget:
    """The one target of a single run (a temporary file when none is given)."""
    o, suite = prepared.options, prepared.suite
    given = o.targets[0] if o.targets else None
    name = str((o.out / TEMP_TARGET if given is None else given).absolute())
    info: TargetInfo | None = None
    refused = None
    try:
        if given is None and not o.out.is_dir():  # no results directory yet: nothing to judge
            planned = TargetInfo(path=name, kind="file", size_bytes=size, temporary=True)
        else:
            planned = plan_target(
                given, o.out, size_bytes=size, writes=writes, destroy_data=o.destroy_data
            )
        check_fits(suite, planned)
        info = planned
    except SsdlabError as exc:
        refused = str(exc)
        problems.append(f"target: {exc}")
    resume = _resume(prepared, o.out, o.label, problems)
    return PlannedTarget(name, o.out, info, refused, resume)


def _plan_targets(
    prepared: PreparedRun,
    listed: list[LocalTarget],
    problems: list[str],
    *,
    size: int,
    writes: bool,
) -> list[PlannedTarget]:
    """Several targets of this machine: each one's results directory, checks (judged as the
    run judges them; one problem per target) and state."""
    from .fleet.hosts import THIS_MACHINE, judge_targets
    from .fleet.local import planned_local
    from .fleet.store import fleet_token

    o, suite = prepared.options, prepared.suite
    try:
        fleet_token(o.out, suite, listed, prepared.mode)
    except SsdlabError as exc:
        problems.append(str(exc))
    planned = []
    for target in listed:
        directory = o.out / target.dir
        info: TargetInfo | None = None
        refused = None
        try:
            judged = judge_targets(
                [target],
                "plan",
                writes=writes,
                destroy_data=o.destroy_data,
                local={THIS_MACHINE},
                root=o.out,
            )[target]
            info = planned_local(judged, directory, size_bytes=size, writes=writes)
            check_fits(suite, info)
        except SsdlabError as exc:
            info, refused = None, str(exc)
            problems.append(f"target {target.name}: {exc}")
        label = f"{o.label} {target.name}" if o.label else target.name
        resume = _resume(prepared, directory, label, problems)
        planned.append(PlannedTarget(target.name, directory, info, refused, resume))
    return planned


def _resume(
    prepared: PreparedRun, out: Path, label: str | None, problems: list[str]
) -> Resume | None:
    """How far ``out`` got when it holds this run (it resumes); a problem when it holds
    another."""
    try:
        check_out(out, fleet=False)  # a fleet's root holds no single run
        if not (out / MANIFEST).exists():
            return None
        manifest = open_manifest(
            out,
            prepared.suite,
            label,
            None,
            params=prepared.params,
            scale=prepared.options.scale,
        )
    except SsdlabError as exc:
        problems.append(str(exc))
        return None
    done = sum(s.status == "ok" for s in manifest.steps)
    return Resume(out, done, manifest.status == "complete")
