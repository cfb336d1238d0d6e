"""fio's client driving a host's ``fio --server``: the fleet's launcher of steps.

One client process per host and target and step writes fio's json+ output (stdout) and its
messages into the step's directory; what went wrong on the host is read from fio's client
messages. With ``on_status``, each client's connection goes through a :class:`.live.Relay`,
which reports the host's live rates from fio's own ETA replies.
"""

from __future__ import annotations

import contextlib
import functools
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..fio import FioStatus, fio_binary
from ..layout import FIO_JSON, JOB_FILE
from ..manifest import StepRecord
from ..suite import Step
from .hosts import Host, LocalTarget
from .live import Relay

_EXITED = re.compile(r"^client <(?P<host>.*)>: exited with error (?P<code>\d+)")
_DISCONNECTED = re.compile(r"^client: host=(?P<host>.*) disconnected")
_SERVER_SAYS = re.compile(r"^<[^>]*> (?P<text>fio: .*)")


@dataclass
class ClientOutcome:
    """How one host's fio client ended (an :class:`ssdlab.execute.Outcome`)."""

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


class Clients:
    """A fleet's running fio clients, one per host and target, each stopped after
    ``grace_s`` past its step's planned end; with ``readonly``, fio's ``--readonly``.
    ``on_status`` gets each host's (``Host.name``) live status while its step runs, when fio
    tells it (see :mod:`.live`), and None when the step has ended there."""

    def __init__(
        self,
        grace_s: float,
        readonly: bool,
        on_status: Callable[[str, FioStatus | None], None] | None = None,
    ):
        self.grace_s = grace_s
        self.readonly = readonly
        self.on_status = on_status
        self.binary = fio_binary()
        self.aborted = False
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._interrupted: set[int] = set()

    def run(self, host: Host, step_dir: Path, step: Step) -> ClientOutcome:
        """Run the step's job on ``host``'s fio server; results land in ``step_dir``."""
        on_status = self.on_status
        if on_status is None:
            return self._run(host, step_dir, step, host.fio_address)
        try:
            with Relay(host, step_dir, functools.partial(on_status, host.name)) as relay:
                return self._run(host, step_dir, step, relay.address)
        finally:
            on_status(host.name, None)

    def _run(self, host: Host, step_dir: Path, step: Step, address: str) -> ClientOutcome:
        # stdout, not --output: fio passes its command line to the server, which would
        # create an empty file of that name in its working directory
        cmd = [self.binary, f"--client={address}", "--output-format=json+", JOB_FILE]
        if self.readonly:  # the server refuses any write, also laying out a file to read
            cmd.insert(2, "--readonly")
        with (
            (step_dir / FIO_JSON).open("wb") as stdout,
            (step_dir / "fio.stderr").open("wb") as stderr,
            self._lock,
        ):
            if self.aborted:
                return ClientOutcome("interrupted", interrupted=True)
            proc = subprocess.Popen(
                cmd, cwd=step_dir, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
            )
            self._procs.add(proc)
        hung = False
        try:
            proc.wait(timeout=step.cap_s + self.grace_s if step.runtime_s else None)
        except subprocess.TimeoutExpired:
            hung = True
            proc.kill()  # a hung server cannot send results: no point asking it to stop
            proc.wait()
        with self._lock:
            self._procs.discard(proc)
            interrupted = proc.pid in self._interrupted
        if interrupted:
            return ClientOutcome("interrupted", interrupted=True)
        if hung:
            return ClientOutcome(
                f"no answer from {host.server} {self.grace_s:g} s after the step's planned end "
                "(host hung or unreachable); its fio client was stopped",
                interrupted=False,
            )
        return ClientOutcome(
            _client_error(host, _client_lines(step_dir), proc.returncode), interrupted=False
        )

    def abort(self) -> None:
        """Ctrl-C: stop every client (fio stops the remote jobs and sends what they
        measured)."""
        with self._lock:
            self.aborted = True
            for proc in self._procs:
                if proc.poll() is None:
                    self._interrupted.add(proc.pid)
                    proc.send_signal(signal.SIGINT)

    def kill(self) -> None:
        """A second Ctrl-C: kill the clients (the remote jobs run to the end of the step)."""
        with self._lock:
            for proc in self._procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()


@dataclass
class FioClient:
    """The launcher of one fleet member's steps: fio's client of ``host``'s server."""

    clients: Clients
    host: Host

    @property
    def target_here(self) -> bool:
        """A target of this machine (several ``--target``'s): checked before every step."""
        return isinstance(self.host, LocalTarget)

    def launch(self, step_dir: Path, record: StepRecord) -> ClientOutcome:
        assert record.workload is not None
        return self.clients.run(self.host, step_dir, record.workload)
