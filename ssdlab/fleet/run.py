"""Run a suite on many hosts at once through fio's client/server mode.

Each host runs ``fio --server``; ssdlab is the client. Every host and target pair gets its own
results directory under the fleet's root, a complete run that :func:`ssdlab.load`, reports
and comparisons read as they read any other (the manifest names the host, its fio server
and the target). ``ROOT/fleet.json`` lists the members and keeps the fleet-level row of every
step (see :mod:`ssdlab.fleet.aggregate`).

Design: one fio client process per host and target and step, all started together. fio's
own fan-out (one client driving every server) was the alternative; it was not chosen because

- the results of one client process are one file for all hosts: its exit status, its error
  lines (``<hostname> fio: ...`` names the server's own hostname, not the address) and its
  logs (``<prefix>_iops.1.log.<host>``) cannot be told apart when one server tests two
  drives, the usual lab set-up;
- a separate client per host writes fio's unmodified json+ and the host-suffixed logs
  straight into that host's step directory, so nothing is split or rewritten afterwards;
- a host that dies, hangs or errors ends only its own client: the other hosts' results are
  complete and saved as soon as their client exits, whatever happens to the others.

The price is that fio's ``All clients`` entry (fio prints it only for several clients in one
process) is computed by ssdlab, the way fio computes it.

Steps run in lockstep: before a step, a host waits until every host still running has reached
a step, and the hosts at the earliest step in suite order start it together. A resumed
host therefore catches up alone, and a host that is steady earlier in a round block waits
for the others. fio's client never gives up on a server that stops answering, so a step that
overruns its planned time by ``grace_s`` is stopped and marked failed.

What the user sees: the gate starts each step on the fleet's display at its place in the
suite (round blocks planned at their most rounds; each step estimated as a local run's, with
the default rates of the slowest member's target class and the largest target,
:meth:`~ssdlab.estimate.Rates.slowest`) and counts the hosts still running it; each
host's results and round verdicts are lines prefixed with the host. fio's client prints no
status line while it writes JSON (its ETA display is skipped for JSON output, also with
``--eta=always`` or ``--output-format=json+,normal``), and ``--status-interval`` in client
mode only adds each interval's job entries to the one JSON document printed at the end (not
live, and they would count every job again). But the client still asks every server for its
ETA each second, so each client's connection goes through a relay (:mod:`.live`) that reads
the replies: a host on fio's default port gets a row with fio's own progress, ETA and live
rates, the step's row their sum; the step's progress is its time run against its planned
time and the hosts still running it, or, for a size-based step when every member's target
has one size, the least share of its bytes any host's fio reports done.

Several targets of this machine (``ssdlab run --target A --target B``) run in lockstep the
same way: each :class:`~ssdlab.fleet.hosts.LocalTarget` is a member served by a fio server of
its own on this machine (:mod:`.local`), judged, prepared and described as a local run's
target, and ``fleet.json`` says ``mode: lockstep``.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from ..console import plural
from ..errors import SsdlabError
from ..estimate import Rates, suite_seconds
from ..execute import Display, FleetHook, RunHook, RunInterrupted, StepExecutor
from ..fio import fio_version
from ..lock import target_lock
from ..manifest import Manifest, TargetInfo, now
from ..progress import RunDisplay
from ..runner import (
    OnError,
    SuiteSteps,
    check_fits,
    check_job_files,
    default_file_size,
    suite_jobs,
)
from ..session import guard_run, open_manifest, stamp, target_differences
from ..suite import Rounds, Step, Suite, Sweep
from ..sysinfo import HostInfo
from .client import Clients, FioClient
from .gate import Gate, SuiteOrder
from .hosts import (
    THIS_MACHINE,
    Host,
    LocalTarget,
    described_target,
    judge_targets,
    judged_here,
    run_size,
    servers_here,
)
from .local import SocketLink, local_fleet_hook, local_info, planned_local, ready_local
from .probe import DEFAULT_TIMEOUT_S, ServerInfo, probe_servers, version_mismatch
from .store import Fleet, fleet_token, load_fleet, member_entry, write_fleet

#: Seconds a step may overrun its planned time before its host counts as hung.
DEFAULT_GRACE_S = 300.0


class FleetFailed(SsdlabError):
    """Some hosts failed or were unreachable; the others' results are kept."""


def _with_filesize(suite: Suite, size_bytes: int) -> Suite:
    """The suite with fio's ``filesize`` on every step: fio creates or grows a remote file
    target to the size a local run preallocates (shares such as ``75%`` are of that size)."""

    def sized(step: Step) -> Step:
        return step.model_copy(update={"options": {"filesize": size_bytes} | step.options})

    items = [
        item.model_copy(update={"steps": [sized(s) for s in item.steps]})
        if isinstance(item, Rounds)
        else item.model_copy(update={"workload": sized(item.workload)})
        if isinstance(item, Sweep)
        else sized(item)
        for item in suite.steps
    ]
    return suite.model_copy(update={"steps": items})


class _HostDisplay:
    """A host's messages on the fleet's display, prefixed with the host; progress is the
    fleet's (the gate starts each step where it is in the suite and counts the hosts still
    running it), so the runner's other progress calls do nothing here."""

    def __init__(self, display: Display, name: str, gate: Gate, who: str):
        self._display = display
        self._name = name
        self._gate = gate
        self._who = who

    def print(self, message: str) -> None:
        self._display.print(f"{self._name}: {message}")

    def end_step(self, message: str) -> None:
        self.print(message)
        self._gate.done(self._who)

    def start_step(self, label: str, planned_s: float, planned_bytes: int | None = None) -> None:
        """Steps start through the gate, which reports them for the whole fleet."""

    def add_planned(self, seconds: float) -> None:
        """The fleet plans every round block at its most rounds; one host's early end
        does not shorten it (the next step's place in the suite moves the bar on)."""

    def skip(self, seconds: float) -> None:
        """The bar starts at the step the hosts resume at (its place in the suite)."""


@dataclass
class _Member:
    """One host and target's run: the suite's steps through ``executor`` (fio's client of the
    host's server), each started through the gate."""

    host: Host
    executor: StepExecutor
    steps: SuiteSteps
    suite: Suite
    gate: Gate
    error: str | None = None
    crash: BaseException | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def run_all(self) -> None:
        """Every step not yet ``ok``; the outcome goes to the manifest and ``error``."""
        try:
            with self.executor.running():
                self.steps.run(self.suite)
        except RunInterrupted:
            pass
        except SsdlabError as exc:
            self.error = str(exc)
        except BaseException as exc:  # a bug: reported by run_fleet once every host is done
            self.error, self.crash = f"internal error: {exc!r}", exc
        finally:
            self.gate.leave(self.host.dirname)
            self.finished.set()


def _remote_host(host: Host, info: ServerInfo) -> HostInfo:
    """What the manifest can say about a remote host: fio's probe gives OS and architecture,
    not the kernel or CPU model."""
    return HostInfo(
        hostname=host.host,
        kernel="unknown (remote fio server)",
        os=info.os or "unknown",
        cpu_model=info.arch or "unknown",
        python="n/a",
    )


def _prepare(
    manifest: Manifest, host: Host, info: ServerInfo, scale: float, client_version: str
) -> None:
    """Record the host, its server and the target in a manifest about to run (a target of
    this machine has its facts already: :func:`~ssdlab.fleet.local.ready_local`)."""
    if not isinstance(host, LocalTarget):
        manifest.host = _remote_host(host, info)
    manifest.scale = scale
    stamp(manifest, info.fio_version or "")
    note = (
        f"fleet member: fio server {host.server} (reports hostname {info.hostname}, "
        f"{info.os} {info.arch}), driven from {socket.gethostname()} with {client_version}"
    )
    if isinstance(host, LocalTarget):
        note = (
            "fleet member: one of several targets of this machine run in lockstep, through "
            f"a fio server of its own on a private socket, with {client_version}"
        )
    manifest.notes = [n for n in manifest.notes if not n.startswith("fleet member:")] + [note]


def _same_target(out: Path, manifest: Manifest, target: TargetInfo) -> None:
    """A resumed host must run on what its earlier steps ran on: the same path (a symlink may
    have moved) and, for a device on this machine, the same drive (serial, model, size)."""
    old = manifest.target
    if not manifest.steps or old is None:
        return
    if (old.path, old.kind) != (target.path, target.kind):
        raise SsdlabError(
            f"{out} ran on {old.kind} {old.path}, but its target now is {target.kind} "
            f"{target.path}: use another --out for another target"
        )
    if (
        target.kind == "block"
        and target.device
        and (differences := target_differences(old, target))
    ):
        raise SsdlabError(
            f"{out} ran on another drive at {target.path} ({'; '.join(differences)}): use "
            "another --out for another drive"
        )


def _each(hooks: list[FleetHook], method: str, display: Display) -> None:
    """Call ``method`` on every fleet hook; their user-facing errors become warnings."""
    for hook in hooks:
        try:
            getattr(hook, method)()
        except SsdlabError as exc:
            display.print(f"warning: {exc}")


def _wait(members: list[_Member]) -> None:
    """Until every host's run is over. Not ``Thread.join``: Python 3.11 can mark a running
    thread as stopped when Ctrl-C interrupts a join."""
    while not all(m.finished.is_set() for m in members):
        time.sleep(0.1)


def run_fleet(
    suite: Suite,
    hosts: Sequence[Host],
    out_root: Path,
    *,
    label: str | None = None,
    target_size: int | None = None,
    destroy_data: str | None = None,
    on_error: OnError = "stop",
    scale: float = 1.0,
    params: Mapping[str, str] | None = None,
    grace_s: float = DEFAULT_GRACE_S,
    probe_timeout_s: float = DEFAULT_TIMEOUT_S,
    hooks: Sequence[RunHook] = (),
    console: Console | None = None,
    purge_first: bool = False,
    guarded: bool = False,
) -> Fleet:
    """Run ``suite`` on every host at once, one results directory per host and target under
    ``out_root``; re-running with the same hosts and targets continues each host at its
    first step that is not ``ok``.

    A host that cannot be reached, dies or fails is marked in its manifest and in
    ``fleet.json`` while the others go on; the run then ends with :class:`FleetFailed`.
    ``on_error`` applies per host; ``params`` are the ``--set`` overrides, recorded and, like
    ``scale``, checked on resume. ``target_size`` sizes file targets of a writing suite
    (default: what the suite needs). Targets are judged by
    :func:`~ssdlab.fleet.hosts.judge_targets` (``destroy_data`` confirms writing); a
    read-only suite runs fio with ``--readonly``, so no file is created, grown or written.
    ``hooks`` are those of :func:`ssdlab.runner.run_suite`, run on this machine as each says
    (:meth:`~ssdlab.execute.RunHook.on_fleet`; telemetry: :mod:`ssdlab.telemetry.hooks`).

    ``hosts`` may instead be targets of this machine, each served (:mod:`.local`): judged,
    prepared and purged (``purge_first``) as by a local run, with SMART snapshots of each
    device (:func:`~ssdlab.fleet.local.local_fleet_hook`). ``guarded``: the caller holds
    ``out_root``'s guard (:func:`~ssdlab.session.guard_run`), as a run of targets of this
    machine does while their servers run.
    """
    if not hosts:
        raise SsdlabError("no hosts to run on")
    local = [h for h in hosts if isinstance(h, LocalTarget)]
    if local and len(local) < len(hosts):
        raise SsdlabError("targets of this machine and hosts cannot run in one fleet")
    if purge_first and not local:
        raise SsdlabError("--purge does not apply with --hosts")
    noun, mode = ("target", "lockstep") if local else ("host", "hosts")
    fleet_hooks = [  # refusals before anything runs
        local_fleet_hook(hook, out_root) if local else hook.on_fleet(out_root) for hook in hooks
    ]
    what = f"{mode} run" if local else "fleet run"
    with contextlib.ExitStack() as held:
        if not guarded:
            held.enter_context(guard_run(out_root, what))
        token = fleet_token(out_root, suite, hosts, mode)
        manifests = {
            h.dirname: open_manifest(
                out_root / h.dirname,
                suite,
                f"{label} {h.name}" if label else h.name,
                None,
                params=params,
                scale=scale,
            )
            for h in hosts
        }  # every host's results must belong to this suite before anything runs
        pending = [h for h in hosts if manifests[h.dirname].status != "complete"]
        client_version = fio_version()
        remote = [h for h in pending if not isinstance(h, LocalTarget)]
        infos = probe_servers(remote, probe_timeout_s) if remote else {}
        if local:  # servers ssdlab started here: nothing to ask them
            infos[THIS_MACHINE] = local_info(client_version)
        problem = version_mismatch(list(infos.values()), client_version)
        if problem:
            raise SsdlabError(problem)
        reached = [h for h in pending if infos[h.server].error is None]
        here, unsure = (
            ({THIS_MACHINE}, set())
            if local
            else servers_here(reached, {s: i.hostname for s, i in infos.items()})
        )
        writes = suite.writes or purge_first
        targets = judge_targets(
            reached,
            token,
            writes=writes,
            destroy_data=destroy_data,
            local=here,
            unsure=unsure,
            root=out_root,
        )
        for h in reached:  # one run at a time on a target of this machine, for the whole run
            if judged_here(h, token, writes=writes, local=here, unsure=unsure):
                held.enter_context(target_lock(targets[h], writes=writes))
        file_bytes = target_size or default_file_size(suite, scale)
        for h in reached:
            _same_target(out_root / h.dirname, manifests[h.dirname], targets[h])
            if isinstance(h, LocalTarget):
                out = out_root / h.dirname
                check_fits(
                    suite,
                    planned_local(targets[h], out, size_bytes=file_bytes, writes=suite.writes),
                )
        sized = _with_filesize(suite, file_bytes)  # fio lays out a writing suite's files
        if reached:  # every job file parsed by this machine's fio before any host runs one
            problems = check_job_files(suite_jobs(sized, targets[reached[0]].path))
            if problems:
                more = f" (and {plural(len(problems) - 1, 'other step')})" * (len(problems) > 1)
                raise SsdlabError(problems[0] + more)
        for h in reached:  # before any manifest says it runs: a target that fails stops all
            if isinstance(h, LocalTarget):
                ready_local(
                    manifests[h.dirname],
                    out_root / h.dirname,
                    targets[h],
                    size_bytes=file_bytes,
                    writes=suite.writes,
                    purge_first=purge_first,
                )

        entries: dict[str, tuple[ServerInfo | None, str | None]] = {}
        member_targets = [
            (
                manifests[h.dirname].target or targets[h]  # a local one is ready: its size
                if isinstance(h, LocalTarget)
                else run_size(targets[h], file_bytes if suite.writes else None),
                h.server in here,
            )
            for h in reached
        ]
        rates = Rates.slowest(member_targets)
        title = f"suite {suite.name} on {plural(len(pending), noun)}"
        display = RunDisplay(title, suite_seconds(suite, rates), console)
        order = SuiteOrder(suite)
        sizes = {target.size_bytes for target, _ in member_targets}
        uniform = len(sizes) == 1 and None not in sizes
        gate = Gate(order, rates, display, len(reached), noun, bytes_progress=uniform)
        clients = Clients(grace_s, readonly=not suite.writes, on_status=display.host_status)
        members: list[_Member] = []
        for host in pending:
            info, manifest = infos[host.server], manifests[host.dirname]
            if info.error:
                if not manifest.steps:
                    manifest.host = None  # never reached: not this host's facts
                    manifest.target = described_target(host.target_path(token))
                manifest.status, manifest.ended = "failed", now()
                manifest.notes.append(
                    f"{now():%Y-%m-%d %H:%M:%SZ} {host.server} unreachable: {info.error}"
                )
                manifest.save(out_root / host.dirname)
                entries[host.dirname] = (info, info.error)
                display.print(f"{host.name}: {info.error}")
                continue
            out = out_root / host.dirname
            here = isinstance(host, LocalTarget)  # its target is ready: fio sizes nothing
            if not here:
                manifest.target = targets[host]
            assert manifest.target is not None
            file = suite.writes and manifest.target.kind == "file" and not here
            if file:
                manifest.target.size_bytes = file_bytes
            member_hooks = [hook for fh in fleet_hooks if (hook := fh.member(out, manifest))]
            if isinstance(host, LocalTarget):
                member_hooks.insert(0, SocketLink(host.socket))
            _prepare(manifest, host, info, scale, client_version)
            manifest.save(out)
            executor = StepExecutor(
                manifest,
                out,
                _HostDisplay(display, host.name, gate, host.dirname),
                FioClient(clients, host),
                member_hooks,
            )
            steps = SuiteSteps(executor, on_error, functools.partial(gate.wait, host.dirname))
            members.append(_Member(host, executor, steps, sized if file else suite, gate))

        def save_fleet() -> None:
            write_fleet(
                out_root,
                suite,
                order,
                token,
                [
                    member_entry(
                        h,
                        h.target_path(token),
                        manifests[h.dirname],
                        *entries.get(h.dirname, (None, None)),
                    )
                    for h in hosts
                ],
                mode,
            )

        save_fleet()  # a fleet killed outright is still resumed with its default files
        threads = [threading.Thread(target=m.run_all, daemon=True) for m in members]
        try:  # guard_run makes SIGTERM a KeyboardInterrupt, as Ctrl-C is
            _each(fleet_hooks if members else [], "start", display)
            with display:
                for thread in threads:
                    thread.start()
                try:
                    _wait(members)
                except KeyboardInterrupt:
                    display.print(f"stopping every {noun}'s fio client…")
                    clients.abort()
                    gate.abort()  # and release the hosts waiting for a step
                    try:
                        _wait(members)
                    except KeyboardInterrupt:
                        clients.kill()
                        _wait(members)
        finally:
            _each(fleet_hooks if members else [], "finish", display)
            for m in members:
                entries[m.host.dirname] = (infos[m.host.server], m.error)
            save_fleet()
        for m in members:
            if m.crash is not None:
                raise m.crash
        if clients.aborted:
            raise RunInterrupted(
                f"interrupted; results so far are in {out_root} (run the same command again to "
                f"continue every {noun} where it stopped)"
            )
        failed = [(h, e) for h in hosts if (e := entries.get(h.dirname, (None, None))[1])]
        if failed:
            raise FleetFailed(failures(failed, len(hosts), noun, out_root))
        return load_fleet(out_root)


def failures(failed: Sequence[tuple[Host, str]], total: int, noun: str, root: Path) -> str:
    """The line a run of several hosts or targets ends with when some of them failed."""
    listing = "; ".join(f"{h.name}: {error}" for h, error in failed)
    return (
        f"{len(failed)} of {plural(total, noun)} failed ({listing}); every {noun}'s results "
        f"are in {root} (run the same command again to resume the failed {noun}s)"
    )
