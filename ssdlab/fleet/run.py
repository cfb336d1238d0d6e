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
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from .. import __version__
from ..atomic import write_text_atomic
from ..errors import InputError, SsdlabError
from ..fio import FioOutcome, fio_binary, fio_version
from ..layout import FLEET_FILE
from ..manifest import Manifest, StepRecord, TargetInfo, now
from ..progress import RunDisplay
from ..results import load
from ..runner import (
    FIO_JSON,
    JOB_FILE,
    OnError,
    RunInterrupted,
    _Run,
    default_file_size,
    guard_run,
    open_manifest,
    target_differences,
)
from ..suite import Rounds, Step, Suite
from ..sysinfo import HostInfo
from .aggregate import all_clients
from .hosts import Host, described_target, is_this_machine, judge_targets
from .probe import DEFAULT_TIMEOUT_S, ServerInfo, probe_servers, version_mismatch

#: Seconds a step may overrun its planned time before its host counts as hung.
DEFAULT_GRACE_S = 300.0
STEP_KEYS = ["step", "block", "round"]
_EXITED = re.compile(r"^client <(?P<host>.*)>: exited with error (?P<code>\d+)")
_DISCONNECTED = re.compile(r"^client: host=(?P<host>.*) disconnected")
_SERVER_SAYS = re.compile(r"^<[^>]*> (?P<text>fio: .*)")


class FleetFailed(SsdlabError):
    """Some hosts failed or were unreachable; the others' results are kept."""


@dataclass
class Fleet:
    """A loaded fleet root: its members and the fleet-level row of every step."""

    path: Path
    suite: str
    members: pl.DataFrame
    aggregate: pl.DataFrame

    @property
    def results_dirs(self) -> list[Path]:
        """Each host and target's results directory (for reports and comparisons)."""
        return [self.path / d for d in self.members["dir"]]


def load_fleet(root: str | Path) -> Fleet:
    """Read ``ROOT/fleet.json``: ``members`` (host, port, target, dir, label, status,
    error, the server's own hostname and fio version) and ``aggregate`` (per step x direction:
    ``clients`` that completed it, fio's All-clients sums, merged latencies, percentiles)."""
    path = Path(root) / FLEET_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        members = pl.DataFrame(data["members"], infer_schema_length=None)
        aggregate = pl.DataFrame(data["aggregate"], infer_schema_length=None)
        suite = data["suite"]
    except FileNotFoundError:
        raise InputError(f"{root}: not an ssdlab fleet directory (no {FLEET_FILE})") from None
    except (OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path}: unreadable fleet file: {exc}") from None
    return Fleet(Path(root), suite, members, aggregate)


def _with_filesize(suite: Suite, size_bytes: int) -> Suite:
    """The suite with fio's ``filesize`` on every step: fio creates or grows a remote file
    target to the size a local run preallocates (shares such as ``75%`` are of that size)."""

    def sized(step: Step) -> Step:
        return step.model_copy(update={"options": {"filesize": size_bytes} | step.options})

    items = [
        item.model_copy(update={"steps": [sized(s) for s in item.steps]})
        if isinstance(item, Rounds)
        else sized(item)
        for item in suite.steps
    ]
    return suite.model_copy(update={"steps": items})


class _SuiteOrder:
    """Where a step is in suite order: (item, round, sub-step); unknown steps go last."""

    def __init__(self, suite: Suite):
        self._position: dict[tuple[str | None, str], int] = {}
        for i, item in enumerate(suite.steps):
            self._position[(None, item.name)] = i
            if isinstance(item, Rounds):
                self._position |= {(item.name, s.name): j for j, s in enumerate(item.steps)}

    def __call__(self, name: str, block: str | None, round_no: int | None) -> tuple[int, int, int]:
        last = len(self._position)
        if block is None or round_no is None:
            return self._position.get((None, name), last), 0, 0
        sub = name.removeprefix(f"{block}-r{round_no:02d}-")
        item = self._position.get((None, block), last)
        return item, round_no, self._position.get((block, sub), last)


class _Gate:
    """Lockstep across hosts; see the module documentation."""

    def __init__(self, order: _SuiteOrder, display: RunDisplay, hosts: int):
        self._cond = threading.Condition()
        self._order = order
        self._display = display
        self._total = self._active = hosts
        self._waiting: dict[str, tuple[tuple[int, int, int], Step]] = {}
        self._released: set[str] = set()
        self._aborted = False

    def wait(self, who: str, record: StepRecord, step: Step) -> None:
        """Block until ``who`` may start ``step``."""
        with self._cond:
            self._waiting[who] = (self._order(record.name, record.block, record.round), step)
            self._release()
            while who not in self._released:
                if self._aborted:
                    del self._waiting[who]
                    raise RunInterrupted(f"interrupted before step '{step.name}' started")
                self._cond.wait()
            self._released.discard(who)

    def leave(self) -> None:
        """A host is done (finished, failed or stopped): the others no longer wait for it."""
        with self._cond:
            self._active -= 1
            self._release()

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    def _release(self) -> None:
        if self._aborted or not self._waiting or len(self._waiting) < self._active:
            return
        first = min(key for key, _ in self._waiting.values())
        batch = [who for who, (key, _) in self._waiting.items() if key == first]
        step = self._waiting[batch[0]][1]
        for who in batch:
            del self._waiting[who]
        self._released.update(batch)
        self._display.start_step(
            f"{step.name} on {len(batch)} of {self._total} hosts", step.planned_s
        )
        self._cond.notify_all()


@dataclass
class _ClientOutcome:
    """How one host's fio client ended (the runner's ``FioOutcome`` interface)."""

    error: str | None
    interrupted: bool
    notes: list[str] = field(default_factory=list)  # fio's warnings are in the step's files


def _client_lines(step_dir: Path) -> list[str]:
    """fio's messages: the non-JSON lines of the output file (client mode writes them there)
    and fio's stderr."""
    lines: list[str] = []
    for name in (FIO_JSON, "fio.stderr"):
        with contextlib.suppress(OSError):
            text = (step_dir / name).read_text(errors="replace")
            lines += [s for s in text.splitlines() if s.strip() and s[0] not in " \t{}"]
    return lines


def _client_error(host: Host, lines: list[str], returncode: int) -> str | None:
    """What went wrong on ``host``, from fio's client messages; ``None`` when nothing did."""
    said = list(dict.fromkeys(m["text"] for line in lines if (m := _SERVER_SAYS.match(line))))
    detail = f": {'; '.join(said)}" if said else ""
    for line in lines:
        if m := _EXITED.match(line):
            return f"fio on {host.server} exited with status {m['code']}{detail}"
        if _DISCONNECTED.match(line):
            return (
                f"lost the connection to {host.server} during the step (its fio server died, "
                f"or the host or network went down){detail}"
            )
        if "failed to connect" in line or line.startswith("fio: connect"):
            reasons = [s.removeprefix("fio: ") for s in lines if s.startswith("fio: ")]
            return f"cannot connect to {host.server}: {'; '.join(reasons)}"
    if returncode:
        text = "; ".join(dict.fromkeys(lines))[:400]
        return f"fio client exited with status {returncode}" + (f": {text}" if text else "")
    return None


class _Fleet:
    """What the hosts' runs share: the gate, the display and the running fio clients."""

    def __init__(self, gate: _Gate, display: RunDisplay, grace_s: float, readonly: bool):
        self.gate = gate
        self.display = display
        self.grace_s = grace_s
        self.readonly = readonly
        self.binary = fio_binary()
        self.aborted = False
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._interrupted: set[int] = set()

    def run_client(self, host: Host, step_dir: Path, step: Step) -> _ClientOutcome:
        """Run the step's job on ``host``'s fio server; results land in ``step_dir``."""
        # stdout, not --output: fio passes its command line to the server, which would
        # create an empty file of that name in its working directory
        cmd = [self.binary, f"--client={host.fio_address}", "--output-format=json+", JOB_FILE]
        if self.readonly:  # the server refuses any write, also laying out a file to read
            cmd.insert(2, "--readonly")
        with (
            (step_dir / FIO_JSON).open("wb") as stdout,
            (step_dir / "fio.stderr").open("wb") as stderr,
            self._lock,
        ):
            if self.aborted:
                return _ClientOutcome("interrupted", interrupted=True)
            proc = subprocess.Popen(
                cmd, cwd=step_dir, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
            )
            self._procs.add(proc)
        hung = False
        try:
            proc.wait(timeout=step.planned_s + self.grace_s if step.runtime_s else None)
        except subprocess.TimeoutExpired:
            hung = True
            proc.kill()  # a hung server cannot send results: no point asking it to stop
            proc.wait()
        with self._lock:
            self._procs.discard(proc)
            interrupted = proc.pid in self._interrupted
        if interrupted:
            return _ClientOutcome("interrupted", interrupted=True)
        if hung:
            return _ClientOutcome(
                f"no answer from {host.server} {self.grace_s:g} s after the step's planned end "
                "(host hung or unreachable); its fio client was stopped",
                interrupted=False,
            )
        return _ClientOutcome(
            _client_error(host, _client_lines(step_dir), proc.returncode), interrupted=False
        )

    def abort(self) -> None:
        """Ctrl-C: stop every client (fio stops the remote jobs and sends what they measured)
        and release the hosts waiting for a step."""
        with self._lock:
            self.aborted = True
            for proc in self._procs:
                if proc.poll() is None:
                    self._interrupted.add(proc.pid)
                    proc.send_signal(signal.SIGINT)
        self.gate.abort()

    def kill(self) -> None:
        """A second Ctrl-C: kill the clients (the remote jobs run to the end of the step)."""
        with self._lock:
            for proc in self._procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()


class _HostDisplay:
    """A host's messages on the fleet's display, prefixed with the host; progress is the
    fleet's (the gate starts each step), so the runner's progress calls do nothing here."""

    def __init__(self, display: RunDisplay, name: str):
        self._display = display
        self._name = name

    def print(self, message: str) -> None:
        self._display.print(f"{self._name}: {message}")

    end_step = print

    def start_step(self, label: str, planned_s: float) -> None:
        """Steps start through the gate, which reports them for the whole fleet."""

    def add_planned(self, seconds: float) -> None:
        """The fleet's plan does not grow per host."""


@dataclasses.dataclass(kw_only=True)
class _Member(_Run):
    """One host and target's run: the runner's steps and round blocks, with each step started
    through the gate and run by fio's client against the host's server."""

    host: Host
    fleet: _Fleet
    suite: Suite
    error: str | None = None
    crash: BaseException | None = None
    finished: threading.Event = dataclasses.field(default_factory=threading.Event)

    def run_all(self) -> None:
        """Every step not yet ``ok``; the outcome goes to the manifest and ``error``."""
        manifest = self.manifest
        try:
            self.run_items(self.suite)
            manifest.status = "complete"
        except RunInterrupted:
            manifest.status = "interrupted"
        except SsdlabError as exc:
            manifest.status, self.error = "failed", str(exc)
        except BaseException as exc:  # a bug: reported by run_fleet once every host is done
            manifest.status, self.error, self.crash = "failed", f"internal error: {exc!r}", exc
        finally:
            self.fleet.gate.leave()
            manifest.ended = now()
            self.save()
            self.finished.set()

    def _execute(self, record: StepRecord, step: Step) -> None:
        """The runner's step, started through the gate (all hosts in lockstep)."""
        self.fleet.gate.wait(self.host.dirname, record, step)
        super()._execute(record, step)

    def launch(self, step_dir: Path, record: StepRecord) -> FioOutcome:
        """fio as the client of this host's server."""
        assert record.workload is not None
        return self.fleet.run_client(self.host, step_dir, record.workload)


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
    """Record the host, its server and the target in a manifest about to run."""
    manifest.host = _remote_host(host, info)
    manifest.fio_version = info.fio_version or ""
    manifest.ssdlab_version = __version__
    manifest.scale = scale
    manifest.status, manifest.started, manifest.ended = "running", manifest.started or now(), None
    note = (
        f"fleet member: fio server {host.server} (reports hostname {info.hostname}, "
        f"{info.os} {info.arch}), driven from {socket.gethostname()} with {client_version}"
    )
    manifest.notes = [n for n in manifest.notes if not n.startswith("fleet member:")] + [note]


def _fleet_rows(root: Path, dirs: list[str], order: _SuiteOrder) -> pl.DataFrame:
    """The fleet-level row of every step x direction over the members' ``ok`` steps, in
    suite order."""
    summaries, hists = [], []
    for name in dirs:
        try:
            results = load(root / name)
        except InputError:
            continue  # nothing completed on that host yet
        summaries.append(results.summary.filter(pl.col("status") == "ok"))
        hists.append(results.latency_hist.filter(pl.col("status") == "ok"))
    if not summaries:
        return pl.DataFrame()
    summary = pl.concat(summaries, how="diagonal_relaxed")
    rows = all_clients(summary, pl.concat(hists, how="diagonal_relaxed"), STEP_KEYS)
    keys = [(order(*r[:3]), r[3]) for r in rows.select(*STEP_KEYS, "direction").iter_rows()]
    return rows[sorted(range(rows.height), key=keys.__getitem__)]


def _write_fleet(
    root: Path, suite: Suite, order: _SuiteOrder, token: str, members: list[dict[str, Any]]
) -> None:
    """``fleet.json``: the members, the default files' token and the fleet-level rows."""
    rows = _fleet_rows(root, [m["dir"] for m in members], order)
    data = {
        "format_version": 1,
        "suite": suite.name,
        "updated": now().isoformat(),
        "default_token": token,
        "members": members,
        "aggregate": rows.fill_nan(None).to_dicts() if rows.width else [],
    }
    write_text_atomic(root / FLEET_FILE, json.dumps(data, indent=2) + "\n")


def _fleet_token(root: Path, suite: Suite, hosts: Sequence[Host]) -> str:
    """The default files' token of the fleet in ``root``, new for a new fleet; SsdlabError
    when ``root`` holds a fleet of another suite, hosts or targets."""
    path = root / FLEET_FILE
    if not path.exists():
        return secrets.token_hex(8)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        old_suite, token = data["suite"], data.get("default_token") or secrets.token_hex(8)
        stored = {Host(m["host"], m["port"], m["target"]).name for m in data["members"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SsdlabError(f"{path}: unreadable fleet file: {exc}") from None
    if old_suite != suite.name:
        raise SsdlabError(
            f"{root} holds a fleet run of suite {old_suite!r}: use another --out for {suite.name!r}"
        )
    listed = {Host(h.host, h.port, h.target_path(token)).name for h in hosts}
    differences = [
        f"{what}: {', '.join(sorted(names))}"
        for what, names in (("not listed now", stored - listed), ("new", listed - stored))
        if names
    ]
    if differences:
        raise SsdlabError(
            f"{root} holds a fleet run of other hosts or targets ({'; '.join(differences)}): "
            "list the same hosts and targets to resume it, or use another --out"
        )
    return token


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


def _member_entry(
    host: Host, target: str, manifest: Manifest, info: ServerInfo | None, error: str | None
) -> dict[str, Any]:
    return {
        "host": host.host,
        "port": host.port,
        "target": target,
        "dir": host.dirname,
        "label": manifest.label,
        "status": "unreachable" if info is not None and info.error else manifest.status,
        "error": error,
        "server_hostname": info.hostname if info else None,
        "fio_version": info.fio_version if info else manifest.fio_version or None,
        "steps_ok": sum(s.status == "ok" for s in manifest.steps),
    }


def _wait(members: list[_Member]) -> None:
    """Until every host's run is over. Not ``Thread.join``: Python 3.11 can mark a running
    thread as stopped when Ctrl-C interrupts a join."""
    while not all(m.finished.is_set() for m in members):
        time.sleep(0.1)


def _local_servers(hosts: Sequence[Host], infos: dict[str, ServerInfo]) -> set[str]:
    """The servers on this machine: at one of its addresses, and (when probed) answering
    with its hostname; this machine's address may lead elsewhere (an ssh tunnel)."""
    here = socket.gethostname()
    return {
        h.server
        for h in hosts
        if is_this_machine(h.host)
        and (h.server not in infos or infos[h.server].hostname in (None, here))
    }


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
    console: Console | None = None,
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
    """
    if not hosts:
        raise SsdlabError("no hosts to run on")
    with guard_run(out_root, "fleet run"):
        token = _fleet_token(out_root, suite, hosts)
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
        infos = probe_servers(pending, probe_timeout_s) if pending else {}
        client_version = fio_version()
        problem = version_mismatch(list(infos.values()), client_version)
        if problem:
            raise SsdlabError(problem)
        reached = [h for h in pending if infos[h.server].error is None]
        targets = judge_targets(
            reached,
            token,
            writes=suite.writes,
            destroy_data=destroy_data,
            local=_local_servers(reached, infos),
        )
        for h in reached:
            _same_target(out_root / h.dirname, manifests[h.dirname], targets[h])
        file_bytes = target_size or default_file_size(suite, scale)
        sized = _with_filesize(suite, file_bytes)  # fio lays out a writing suite's files

        entries: dict[str, tuple[ServerInfo | None, str | None]] = {}
        display = RunDisplay(
            f"suite {suite.name} on {len(pending)} hosts", suite.planned_s, console
        )
        order = _SuiteOrder(suite)
        gate = _Gate(order, display, len(reached))
        fleet = _Fleet(gate, display, grace_s, readonly=not suite.writes)
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
            manifest.target = targets[host]
            file = suite.writes and manifest.target.kind == "file"
            if file:
                manifest.target.size_bytes = file_bytes
            _prepare(manifest, host, info, scale, client_version)
            manifest.save(out_root / host.dirname)
            members.append(
                _Member(
                    manifest=manifest,
                    out=out_root / host.dirname,
                    display=_HostDisplay(display, host.name),  # type: ignore[arg-type]
                    on_error=on_error,
                    host=host,
                    fleet=fleet,
                    suite=sized if file else suite,
                )
            )

        def write_fleet() -> None:
            _write_fleet(
                out_root,
                suite,
                order,
                token,
                [
                    _member_entry(
                        h,
                        h.target_path(token),
                        manifests[h.dirname],
                        *entries.get(h.dirname, (None, None)),
                    )
                    for h in hosts
                ],
            )

        write_fleet()  # a fleet killed outright is still resumed with its default files
        threads = [threading.Thread(target=m.run_all, daemon=True) for m in members]
        try:  # guard_run makes SIGTERM a KeyboardInterrupt, as Ctrl-C is
            with display:
                for thread in threads:
                    thread.start()
                try:
                    _wait(members)
                except KeyboardInterrupt:
                    display.print("stopping every host's fio client…")
                    fleet.abort()
                    try:
                        _wait(members)
                    except KeyboardInterrupt:
                        fleet.kill()
                        _wait(members)
        finally:
            for m in members:
                entries[m.host.dirname] = (infos[m.host.server], m.error)
            write_fleet()
        for m in members:
            if m.crash is not None:
                raise m.crash
        if fleet.aborted:
            raise RunInterrupted(
                f"interrupted; results so far are in {out_root} (run the same command again to "
                "continue every host where it stopped)"
            )
        failed = [(h, e) for h in hosts if (e := entries.get(h.dirname, (None, None))[1])]
        if failed:
            listing = "; ".join(f"{h.name}: {error}" for h, error in failed)
            raise FleetFailed(
                f"{len(failed)} of {len(hosts)} hosts failed ({listing}); every host's results are "
                f"in {out_root} (run the same command again to resume the failed hosts)"
            )
        return load_fleet(out_root)
