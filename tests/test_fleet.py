"""Many hosts at once: real ``fio --server`` processes on loopback addresses, driven by ssdlab
as fio's client, with a server killed mid-step, one unreachable, one failing its job."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.errors import InputError, SsdlabError
from ssdlab.estimate import STEP_START_S
from ssdlab.execute import FleetHook, RunHook
from ssdlab.facts import drive_facts
from ssdlab.fleet import (
    FleetFailed,
    Host,
    all_clients,
    load_fleet,
    parse_hosts,
    run_fleet,
)
from ssdlab.fleet.live import FIO_HEADER
from ssdlab.fleet.probe import parse_probe_reply, version_mismatch
from ssdlab.io import read_fio_json
from ssdlab.manifest import Manifest, StepRecord
from ssdlab.suite import Suite, load_suite
from ssdlab.units import format_hms

SUITE = """
name = "fleet-tiny"

[defaults]
runtime_s = 0.5
size = "8m"
ioengine = "psync"

[[steps]]
name = "fill"
rw = "write"
bs = "64k"

[[steps]]
name = "randread"
rw = "randread"
numjobs = 2
runtime_s = 2

[[steps]]
name = "mix"
rounds = { max = 2, window = 2, track = "rw70" }

[[steps.steps]]
name = "rw70"
rw = "randrw"
rwmixread = 70
ioengine = "null"
"""


#: ``python -c RUN_FLEET SUITE HOSTS OUT``: a fleet run in its own process, exit 130 when stopped
RUN_FLEET = (
    "import sys; from pathlib import Path\n"
    "from ssdlab.fleet import parse_hosts, run_fleet\n"
    "from ssdlab.runner import RunInterrupted\n"
    "from ssdlab.suite import load_suite\n"
    "try:\n"
    "    run_fleet(load_suite(sys.argv[1]), parse_hosts(sys.argv[2]), Path(sys.argv[3]))\n"
    "except RunInterrupted as exc:\n"
    "    print(exc, file=sys.stderr); sys.exit(130)\n"
)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@dataclass
class Server:
    """A ``fio --server`` in its own process group (connection handlers and jobs included)."""

    ip: str
    port: int
    proc: subprocess.Popen[bytes]

    def spec(self, target: Path | str) -> str:
        return f"{self.ip}:{self.port}={target}"

    def tree(self) -> list[int]:
        """The server, its connection handlers and their job processes (which fio puts in
        sessions of their own, out of reach of a process-group signal)."""
        pids, level = [self.proc.pid], [self.proc.pid]
        while level:
            level = [c for pid in level for c in _children(pid)]
            pids += level
        return pids

    def uses(self, path: Path) -> bool:
        """Whether one of the server's processes (its jobs) has ``path`` open."""
        for pid in self.tree():
            with contextlib.suppress(OSError):
                if any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir()):
                    return True
        return False

    def listening_or_exited(self) -> bool:
        """Whether the server listens on its port, or has exited (as when it cannot bind)."""
        return self.proc.poll() is not None or _listens(self.proc.pid, self.ip, self.port)

    def signal(self, sig: signal.Signals) -> None:
        """Signal every process of the server, as if its host crashed (SIGKILL) or hung.

        A listed process may have ended and its pid been reused since (pid_max is 32768 on
        many machines, and a test run starts tens of thousands of processes and threads), so
        each is pinned with a pidfd and signalled only if it is still fio."""
        for pid in self.tree():
            with contextlib.suppress(OSError):
                fd = os.pidfd_open(pid)
                try:
                    if Path(f"/proc/{pid}/comm").read_text().strip() == "fio":
                        signal.pidfd_send_signal(fd, sig)
                finally:
                    os.close(fd)


#: Ports for the servers of one test process: below the kernel's ephemeral range (32768 and
#: up by default, where client sockets get their ports), clear of the fixed ports other tests
#: use, and a block of its own for each pytest-xdist worker, so that parallel workers never
#: try the same port. A port is also checked free before use, and a server that cannot bind
#: it is started again on the next one (another program may hold a port of the block).
PORT_BASE, PORT_BLOCK, PORT_BLOCKS = 20000, 400, 20


def _port_block() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...; unset without -n
    index = int(worker[2:]) if worker[:2] == "gw" and worker[2:].isdigit() else 0
    low = PORT_BASE + (index % PORT_BLOCKS) * PORT_BLOCK
    return range(low, low + PORT_BLOCK)


@functools.cache
def _ports() -> Iterator[int]:
    return itertools.cycle(_port_block())


def _free_port(ip: str) -> int:
    """A port of this worker's block that nothing on ``ip`` uses now; each call the next one
    (the block is walked round), so that a port is not reused while a killed server's
    connections may linger."""
    block = _port_block()
    for port in itertools.islice(_ports(), len(block)):
        with socket.socket() as s:
            try:
                s.bind((ip, port))
            except OSError:
                continue
        return port
    raise AssertionError(f"no free port on {ip} in {block.start}-{block.stop - 1}")


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def _listens(pid: int, ip: str, port: int) -> bool:
    """Whether process ``pid`` itself listens on ``ip:port`` (not another program that holds
    the port), from the kernel's table of TCP sockets and the process's open files."""
    address = f"{struct.unpack('=I', socket.inet_aton(ip))[0]:08X}:{port:04X}"
    with contextlib.suppress(OSError):
        sockets = {
            f"socket:[{fields[9]}]"
            for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines())
            if fields[1] == address and fields[3] == "0A"  # TCP_LISTEN
        }
        return any(os.readlink(fd) in sockets for fd in Path(f"/proc/{pid}/fd").iterdir())
    return False


@contextlib.contextmanager
def fio_servers(home: Path) -> Iterator[Callable[..., Server]]:
    """Starts ``fio --server`` processes (working in ``home``); kills them all at the end."""
    servers: list[Server] = []

    def start(ip: str, port: int | None = None, hostname: str | None = None) -> Server:
        """A server on ``ip`` (on ``port``, or a free one); with ``hostname``, in a UTS
        namespace of its own, so that it answers as another machine (as through an ssh
        tunnel)."""
        for _ in range(1 if port else 5):  # a chosen port taken meanwhile: try another
            server = launch(ip, port or _free_port(ip), hostname)
            _wait_for(server.listening_or_exited, f"fio --server on {ip}:{server.port}")
            if server.proc.poll() is None:
                return server
            servers.remove(server)  # reaped: its pid may be another process's by now
        raise AssertionError(f"fio --server on {ip}:{server.port} exited: port in use?")

    def launch(ip: str, port: int, hostname: str | None) -> Server:
        command = ["fio", f"--server=ip:{ip},{port}"]
        if hostname:  # sh and unshare exec fio: the process started is the server
            command = ["unshare", "--uts", "sh", "-c", f'hostname {hostname} && exec "$@"', "-"]
            command += ["fio", f"--server=ip:{ip},{port}"]
        proc = subprocess.Popen(
            command,
            cwd=home,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        server = Server(ip, port, proc)
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.signal(signal.SIGCONT)
            server.signal(signal.SIGKILL)
            server.proc.wait()


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    with fio_servers(tmp_path_factory.mktemp("fio-server")) as start:  # servers write there
        yield start


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    path = tmp_path / "fleet.toml"
    path.write_text(SUITE)
    return load_suite(path)


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


@dataclass
class _BeforeStep(RunHook):
    """Calls ``action`` just before fio starts the step ``step`` of the fleet member writing
    ``out``, in that member's thread (:meth:`~ssdlab.execute.RunHook.before_step`): the step
    waits for it, so the action is never too late, however loaded the machine."""

    out: Path
    step: str
    action: Callable[[], None]

    def before_step(self, step_dir: Path, record: StepRecord) -> None:
        if record.name == self.step:
            self.action()

    def on_fleet(self, root: Path) -> FleetHook:
        return _ForMember(self)


@dataclass
class _ForMember:
    """The fleet hook of a :class:`_BeforeStep`: it runs for its member only."""

    hook: _BeforeStep

    def start(self) -> None:
        """Nothing before the fleet runs."""

    def member(self, out: Path, manifest: Manifest) -> RunHook | None:
        return self.hook if out == self.hook.out else None

    def finish(self) -> None:
        """Nothing after."""


#: fio's commands (``server.h``) a server sends only once a step's jobs have ended (TS, GS,
#: STOP, DU, IOLOG): fio's client cannot end a step before it has one of them
JOB_ENDED = {6, 7, 12, 13, 17}


class Cutoff:
    """A relay at ``ip`` (a port of its own) in front of fio server ``server``: a host whose
    step ends as the test says, however loaded the machine. It carries every connection
    both ways, but the first one opened after :meth:`arm` only until the server begins to
    send what the step measured (fio's client cannot end the step without it): then
    ``at_cut`` gets fio's client's connection, and nothing more from the server reaches it."""

    def __init__(self, ip: str, server: Server) -> None:
        self.ip = ip
        self.server = server
        self.listener = socket.create_server((ip, _free_port(ip)))
        self.port: int = self.listener.getsockname()[1]
        self.cut = threading.Event()
        self._at_cut: Callable[[socket.socket], None] | None = None
        self._sockets = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def spec(self, target: Path | str) -> str:
        return f"{self.ip}:{self.port}={target}"

    def arm(self, at_cut: Callable[[socket.socket], None]) -> None:
        self._at_cut = at_cut

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            try:
                upstream = socket.create_connection((self.server.ip, self.server.port))
            except OSError:  # the server is down: so is the client's connection
                client.close()
                continue
            self._sockets += [client, upstream]
            at_cut, self._at_cut = self._at_cut, None
            for source, sink, cut in ((client, upstream, None), (upstream, client, at_cut)):
                threading.Thread(target=self._carry, args=(source, sink, cut), daemon=True).start()

    def _carry(
        self,
        source: socket.socket,
        sink: socket.socket,
        at_cut: Callable[[socket.socket], None] | None,
    ) -> None:
        """Pass ``source`` on to ``sink`` command by command (fio's header says each one's
        length and opcode) until either end closes, or (``at_cut``) a step's results come."""
        buffer, left = b"", 0  # bytes not passed on yet; of them, the current command's
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                buffer += data
                ready = 0
                while ready < len(buffer):
                    if left:
                        step = min(left, len(buffer) - ready)
                        ready, left = ready + step, left - step
                        continue
                    if len(buffer) - ready < FIO_HEADER.size:
                        break
                    _, opcode, _, _, pdu_len, _, _ = FIO_HEADER.unpack_from(buffer, ready)
                    if at_cut is not None and opcode in JOB_ENDED:
                        sink.sendall(buffer[:ready])
                        self.cut.set()
                        at_cut(sink)
                        return
                    left = FIO_HEADER.size + pdu_len
                sink.sendall(buffer[:ready])
                buffer = buffer[ready:]
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.fixture
def cutoff() -> Iterator[Callable[[Server], Cutoff]]:
    """Starts a :class:`Cutoff` relay in front of a server; closes them all at the end."""
    relays: list[Cutoff] = []

    def start(server: Server) -> Cutoff:
        relays.append(Cutoff(server.ip, server))
        return relays[-1]

    try:
        yield start
    finally:
        for relay in relays:
            relay.close()


def test_parse_hosts_command_line_and_files(tmp_path: Path) -> None:
    assert parse_hosts("lab1,lab2:9000=/dev/nvme1n1,[fd00::7]:8766=/data/t.bin") == [
        Host("lab1"),
        Host("lab2", 9000, "/dev/nvme1n1"),
        Host("fd00::7", 8766, "/data/t.bin"),
    ]
    assert Host("fd00::7", 8766).fio_address == "ip6:fd00::7,8766"
    assert Host("lab2", 9000).fio_address == "lab2,9000"
    hosts = tmp_path / "hosts"
    hosts.write_text(
        "# lab A\n"
        "lab1 8765 /dev/nvme0n1\n"
        "lab1 8765 /dev/nvme1n1   # second drive, same server\n"
        "\n"
        "10.0.0.7,9000\n"  # fio's own --client list format
        "lab3 /mnt/t.bin\n"
        "lab4:8770=/dev/sdb\n"
    )
    assert (
        parse_hosts(hosts)
        == parse_hosts(str(hosts))
        == [
            Host("lab1", 8765, "/dev/nvme0n1"),
            Host("lab1", 8765, "/dev/nvme1n1"),
            Host("10.0.0.7", 9000),
            Host("lab3", 8765, "/mnt/t.bin"),
            Host("lab4", 8770, "/dev/sdb"),
        ]
    )
    assert len({h.dirname for h in parse_hosts(hosts)}) == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lab1 99999 /x\n", r"hosts:1: port must be a number from 1 to 65535, not '99999'"),
        ("lab1\nlab2 8765 relative.bin\n", r"hosts:2: target 'relative.bin' must be an absolute"),
        ("lab1 8765 /a\nlab1:8765=/a\n", r"hosts: lab1:8765 /a is listed twice"),
        ("lab1 a b c\n", r"hosts:1: expected HOST \[PORT\] \[TARGET\]"),
        ("# nothing\n", r"hosts: no hosts listed"),
    ],
)
def test_bad_hosts_file_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text(text)
    with pytest.raises(InputError, match=message):
        parse_hosts(hosts)


def test_bad_hosts_option() -> None:
    with pytest.raises(InputError, match=r"--hosts: 'lab\$1' is not a host name"):
        parse_hosts("lab$1")
    with pytest.raises(InputError, match=r"--hosts: '\[fd00::1\]x': write an IPv6 address"):
        parse_hosts("[fd00::1]x")


def test_version_mismatch_from_recorded_probe_replies() -> None:
    new = parse_probe_reply(
        "lab1:8765", "hostname=lab1, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1"
    )
    old = parse_probe_reply(
        "lab2:8765", "hostname=lab2, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-2.21, flags=1"
    )
    assert new is not None and old is not None
    assert (new.hostname, new.os, new.arch, new.fio_version) == (
        "lab1",
        "Linux",
        "x86-64",
        "fio-3.33",
    )
    assert version_mismatch([new], "fio-3.36") is None
    problem = version_mismatch([new, old], "fio-3.33")
    assert problem is not None
    assert "fio-2.21 on lab2:8765" in problem and "fio-3.33 on this host" in problem
    assert parse_probe_reply("lab3:8765", "fio: connect: Connection refused") is None


def test_fleet_check_reports_versions_and_dead_servers(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    a, b = start_server("127.0.0.2"), start_server("127.0.0.3")
    proc = ssdlab_cli("fleet", "check", f"{a.ip}:{a.port},{b.ip}:{b.port}")
    assert proc.returncode == 0, proc.stderr
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    for server in (a, b):
        line = next(x for x in proc.stdout.splitlines() if f"{server.ip}:{server.port}" in x)
        assert version in line and "Linux" in line and line.rstrip(" │").endswith("ok")
    dead = _free_port("127.0.0.4")
    hosts = tmp_path / "hosts"
    hosts.write_text(f"{a.ip} {a.port}\n127.0.0.4 {dead}\n")
    proc = ssdlab_cli("fleet", "check", hosts)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: 1 of 2 fio servers did not answer (127.0.0.4:")
    assert "Connection refused" in proc.stderr and "Traceback" not in proc.stderr


def test_all_clients_row_matches_fios_own(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    """The fleet row is computed the way fio's client computes ``All clients``: checked
    against fio's own entry from one client driving two servers."""
    servers = [start_server("127.0.0.2"), start_server("127.0.0.3")]
    (tmp_path / "hosts.list").write_text("".join(f"{s.ip},{s.port}\n" for s in servers))
    (tmp_path / "job.fio").write_text(
        "[global]\nioengine=null\nsize=64m\ntime_based=1\nruntime=1\n"
        "[j]\nrw=randrw\nrwmixread=60\nnumjobs=2\ngroup_reporting=1\n"
    )
    subprocess.run(
        ["fio", "--client=hosts.list", "job.fio", "--output-format=json+", "--output=all.json"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    fio = read_fio_json(tmp_path / "all.json")
    assert set(fio.jobs["hostname"]) == {"127.0.0.2", "127.0.0.3"}
    assert fio.aggregate["jobname"].unique().to_list() == ["All clients"]
    hist = fio.bins.filter(pl.col("stat") == "clat")
    ours = all_clients(fio.jobs, hist, []).sort("direction")
    theirs = fio.aggregate.sort("direction")
    assert ours["direction"].to_list() == theirs["direction"].to_list() == ["read", "write"]
    assert ours["clients"].to_list() == [2, 2]
    for column in ("io_bytes", "total_ios", "lat_samples", "clat_samples"):
        assert ours[column].to_list() == theirs[column].to_list(), column
    for column in ("iops", "bw_bytes_s", "runtime_s"):
        assert ours[column].to_list() == pytest.approx(theirs[column].to_list(), rel=1e-9)
    for column in ("clat_mean_ns", "lat_mean_ns"):  # fio prints means to 6 decimals
        assert ours[column].to_list() == pytest.approx(theirs[column].to_list(), abs=2e-6)
    for column in ("clat_min_ns", "clat_max_ns", "lat_min_ns", "lat_max_ns"):
        assert ours[column].to_list() == theirs[column].to_list(), column
    # fio prints no percentiles for All clients; ours come from the summed histograms
    per_host = fio.jobs.filter(pl.col("direction") == "read")["clat_p99_9_ns"]
    assert per_host.min() <= ours["clat_p99_9_ns"][0] <= per_host.max()


@pytest.mark.slow
def test_fleet_run_with_a_dead_a_failing_and_an_unreachable_host_then_resume(
    start_server: Callable[..., Server],
    cutoff: Callable[[Server], Cutoff],
    suite: Suite,
    tmp_path: Path,
) -> None:
    s1, s2 = start_server("127.0.0.2"), start_server("127.0.0.3")
    dies = cutoff(s2)  # s2 through a relay, to kill it as step 2 ends there, before its results
    s3 = start_server("127.0.0.5", hostname="elsewhere")  # its paths are not checked here
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    dead_port = _free_port("127.0.0.4")
    hosts = parse_hosts(
        ",".join(
            [
                s1.spec(tmp_path / "a.bin"),
                s1.spec(tmp_path / "b.bin"),  # a second drive on the same server
                dies.spec(tmp_path / "c.bin"),  # killed as step 2 ends
                s3.spec(blocker / "d.bin"),  # fio fails to open it
                f"127.0.0.4:{dead_port}=/nowhere/e.bin",  # nobody listens
            ]
        )
    )
    a, b, c, d, e = (tmp_path / "out" / h.dirname for h in hosts)

    def crash(client: socket.socket) -> None:
        s2.signal(signal.SIGKILL)
        client.shutdown(socket.SHUT_RDWR)  # the connection ends with the server

    armed = _BeforeStep(c, "randread", functools.partial(dies.arm, crash))
    confirm = f"127.0.0.5:{blocker}/d.bin"
    with pytest.raises(FleetFailed) as failed:
        run_fleet(
            suite, hosts, tmp_path / "out", label="batch7", destroy_data=confirm, hooks=[armed]
        )
    assert dies.cut.is_set()
    message = str(failed.value)
    assert message.startswith("3 of 5 hosts failed")
    assert f"lost the connection to 127.0.0.3:{dies.port} during the step" in message
    assert (
        f"fio on 127.0.0.5:{s3.port} exited with status" in message and "Not a directory" in message
    )
    assert f"127.0.0.4:{dead_port} /nowhere/e.bin: no fio server answered" in message

    for out, host in ((a, hosts[0]), (b, hosts[1])):  # the healthy hosts are complete runs
        m = _manifest(out)
        assert m["status"] == "complete" and [s["status"] for s in m["steps"]] == ["ok"] * 4
        assert m["host"]["hostname"] == "127.0.0.2" and m["target"]["path"] == host.target
        assert m["label"] == f"batch7 {host.name}" and m["fio_version"].startswith("fio-")
        r = ssdlab.load(out)
        cpu = dict(drive_facts(r.manifest).rows())["CPU"]  # a remote host's threads: unknown
        assert m["host"]["cpu_count"] is None and "threads" not in cpu
        assert r.summary.select("step", "direction").rows() == [
            ("fill", "write"), ("randread", "read"),
            ("mix-r01-rw70", "read"), ("mix-r01-rw70", "write"),
            ("mix-r02-rw70", "read"), ("mix-r02-rw70", "write"),
        ]  # fmt: skip
        assert r.steady_state["rounds_run"].to_list() == [2]
        assert set(r.summary["host"]) == {"127.0.0.2"} and (r.summary["iops"] > 0).all()
        assert not r.latency_hist.is_empty()
        assert r.timeseries.filter(step="randread")["job_index"].to_list()[0] == 0
        step = out / "steps" / "002-randread"
        assert {f"fio_iops.{n}.log.127.0.0.2" for n in (1, 2)} <= {p.name for p in step.iterdir()}
        assert json.loads((step / "fio.json").read_text())["client_stats"][0]["port"] == s1.port
        assert Path(host.target).stat().st_size == 8 * 2**20  # laid out by the remote fio
    killed = _manifest(c)
    assert killed["status"] == "failed"
    assert [(s["name"], s["status"]) for s in killed["steps"]] == [
        ("fill", "ok"), ("randread", "failed"),
    ]  # fmt: skip
    assert "lost the connection" in killed["steps"][1]["error"]
    assert ssdlab.load(c).summary["step"].unique().to_list() == ["fill"]
    failing = _manifest(d)
    assert failing["status"] == "failed" and failing["steps"][0]["status"] == "failed"
    unreachable = _manifest(e)
    assert unreachable["status"] == "failed" and unreachable["steps"] == []
    assert "unreachable" in unreachable["notes"][-1]
    runs = [_manifest(p)["steps"] for p in (a, b, c, d)]
    for k in range(1, 4):  # lockstep: no host starts a step before every host ended the last
        last_end = max(steps[k - 1]["ended"] for steps in runs if len(steps) >= k)
        assert all(steps[k]["started"] >= last_end for steps in runs if len(steps) > k)

    fleet = load_fleet(tmp_path / "out")
    assert fleet.results_dirs == [a, b, c, d, e]
    assert fleet.members["status"].to_list() == [
        "complete", "complete", "failed", "failed", "unreachable",
    ]  # fmt: skip
    rows = {(r["step"], r["direction"]): r for r in fleet.aggregate.iter_rows(named=True)}
    assert rows[("fill", "write")]["clients"] == 3 and rows[("randread", "read")]["clients"] == 2
    members = pl.concat([ssdlab.load(p).summary for p in (a, b)])
    summed = members.filter(step="randread")["total_ios"].sum()
    assert rows[("randread", "read")]["total_ios"] == summed

    # resume: the healthy hosts are left alone, the killed one continues at its step 2
    start_server(s2.ip, s2.port)
    before = {p: (p / "manifest.json").read_bytes() for p in (a, b)}
    with pytest.raises(FleetFailed, match=r"^2 of 5 hosts failed"):
        run_fleet(suite, hosts, tmp_path / "out", label="batch7", destroy_data=confirm)
    assert {p: (p / "manifest.json").read_bytes() for p in (a, b)} == before
    resumed = _manifest(c)
    assert resumed["status"] == "complete" and resumed["run_id"] == killed["run_id"]
    assert resumed["steps"][0] == killed["steps"][0]  # not run again
    assert [s["status"] for s in resumed["steps"]] == ["ok"] * 4
    assert set(ssdlab.load(c).summary["host"]) == {"127.0.0.3"}
    fleet = load_fleet(tmp_path / "out")
    assert fleet.members["status"].to_list()[:3] == ["complete"] * 3
    assert fleet.aggregate.filter(step="randread")["clients"].to_list() == [3]


@pytest.mark.slow
def test_hung_host_is_stopped_and_the_others_finish(
    start_server: Callable[..., Server],
    cutoff: Callable[[Server], Cutoff],
    suite: Suite,
    tmp_path: Path,
) -> None:
    s1, s2 = start_server("127.0.0.2"), start_server("127.0.0.3")
    hangs = cutoff(s2)  # s2 through a relay, to freeze it as its step ends, before its results
    hosts = parse_hosts(f"{s1.spec(tmp_path / 'a.bin')},{hangs.spec(tmp_path / 'b.bin')}")
    hung = tmp_path / "out" / hosts[1].dirname
    freeze = functools.partial(hangs.arm, lambda _: s2.signal(signal.SIGSTOP))
    one_step = suite.model_copy(update={"steps": suite.steps[:1]})
    with pytest.raises(FleetFailed, match=r"no answer from 127\.0\.0\.3:\d+ 4 s after the step"):
        run_fleet(
            one_step, hosts, tmp_path / "out", grace_s=4, hooks=[_BeforeStep(hung, "fill", freeze)]
        )
    assert hangs.cut.is_set()
    assert _manifest(tmp_path / "out" / hosts[0].dirname)["status"] == "complete"
    assert _manifest(hung)["steps"][0]["status"] == "failed"


@pytest.mark.slow
def test_interrupt_stops_every_host_and_keeps_what_was_measured(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    s1, s2 = start_server("127.0.0.2"), start_server("127.0.0.3")
    (tmp_path / "long.toml").write_text(SUITE.replace("runtime_s = 0.5", "runtime_s = 30"))
    hosts = f"{s1.spec(tmp_path / 'a.bin')},{s2.spec(tmp_path / 'b.bin')}"
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_FLEET, str(tmp_path / "long.toml"), hosts, str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    dirs = [out / h.dirname for h in parse_hosts(hosts)]
    _wait_for(lambda: s1.uses(tmp_path / "a.bin") and s2.uses(tmp_path / "b.bin"), "both")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted; results so far are in" in stderr
    for d in dirs:
        m = _manifest(d)
        assert m["status"] == "interrupted" and m["steps"][0]["status"] == "interrupted"
        assert ssdlab.load(d).summary["status"].to_list() == ["interrupted"]
    assert {m["status"] for m in json.loads((out / "fleet.json").read_text())["members"]} == {
        "interrupted"
    }


def test_remote_targets_need_confirmation(
    start_server: Callable[..., Server], suite: Suite, tmp_path: Path
) -> None:
    lab7 = start_server("127.0.0.5", hostname="lab7")  # another machine, as ssdlab sees it
    hosts = parse_hosts(f"{lab7.spec('/dev/nvme7n1')},{lab7.spec(tmp_path / 't.bin')}")
    with pytest.raises(
        SsdlabError,
        match=r"^refusing to write to targets on other hosts without confirmation: "
        rf"127\.0\.0\.5:/dev/nvme7n1, 127\.0\.0\.5:{tmp_path}/t\.bin\. ",
    ):
        run_fleet(suite, hosts, tmp_path / "out", destroy_data="t.bin")
    assert not (tmp_path / "out").exists()  # refused before writing anything: no directory
    assert not (tmp_path / "t.bin").exists()


def test_run_hosts_option_writes_one_results_dir_per_host(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    """``ssdlab run SUITE --hosts ...`` is the command line of the fleet runner."""
    s1, s2 = start_server("127.0.0.2"), start_server("127.0.0.3")
    (tmp_path / "fleet.toml").write_text(SUITE)
    hosts = tmp_path / "hosts"
    lines = [f"{s1.ip}:{s1.port} {tmp_path / 'a.bin'}", f"{s2.ip} {s2.port} {tmp_path / 'b.bin'}"]
    hosts.write_text("# lab rack 3\n" + "\n".join(lines) + "\n")
    out = tmp_path / "out"
    proc = ssdlab_cli("run", tmp_path / "fleet.toml", "--hosts", hosts, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "2 hosts complete" in proc.stderr
    # without a terminal: one line as the hosts start each step (its place in the suite and
    # plan: fio's clients print no live status), then each host's result
    lines = proc.stderr.splitlines()
    starts = [line.split(": running (planned ") for line in lines if ": running (" in line]
    assert [label for label, _ in starts] == [
        "fill on 2 of 2 hosts",
        "randread on 2 of 2 hosts",
        "mix round 1 of up to 2: rw70 on 2 of 2 hosts",
        "mix round 2 of up to 2: rw70 on 2 of 2 hosts",
    ]
    # each step's runtime and its start, rounded up, as a local run plans them
    planned = [f"{format_hms(math.ceil(s + STEP_START_S))})" for s in (0.5, 2, 0.5, 0.5)]
    assert [planned for _, planned in starts] == planned
    for step in ("fill", "randread", "mix-r01-rw70", "mix-r02-rw70"):
        done = [line for line in lines if re.search(rf": {step}: [\d,]+ IOPS ", line)]
        assert len(done) == 2, (step, lines)
    fleet = load_fleet(out)
    assert fleet.members.height == 2
    for member in fleet.members.iter_rows(named=True):
        r = ssdlab.load(out / member["dir"])
        assert r.summary.height > 0 and r.manifest.status == "complete"
    with_target = ssdlab_cli(
        "run", tmp_path / "fleet.toml", "--hosts", hosts, "--out", out, "--target", tmp_path / "x"
    )
    assert with_target.returncode == 1 and "--target and --purge do not apply" in with_target.stderr


def test_a_load_sweep_runs_on_every_host_with_its_own_rates(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    """Each host measures its own maximum and runs its fractions of it, in suite order."""
    s1, s2 = start_server("127.0.0.2"), start_server("127.0.0.3")
    (tmp_path / "sweep.toml").write_text(
        'name = "sweep"\n[defaults]\nioengine = "psync"\nsize = "8m"\nruntime_s = 1\n'
        '[[steps]]\nname = "load-rr"\nrw = "randread"\n'
        "sweep = { fractions = [0.5], unlimited = false }\n"
    )
    out = tmp_path / "out"
    hosts = f"{s1.ip}:{s1.port}={tmp_path / 'a.bin'},{s2.ip}:{s2.port}={tmp_path / 'b.bin'}"
    for target in ("a.bin", "b.bin"):
        (tmp_path / target).write_bytes(bytes(8 * 2**20))
    proc = ssdlab_cli("run", tmp_path / "sweep.toml", "--hosts", hosts, "--out", out)
    assert proc.returncode == 0, proc.stderr
    starts = [
        line.split(": running (")[0] for line in proc.stderr.splitlines() if ": running (" in line
    ]
    assert starts == ["load-rr-max on 2 of 2 hosts", "load-rr-50pct on 2 of 2 hosts"]
    for member in load_fleet(out).members.iter_rows(named=True):
        steps = _manifest(out / member["dir"])["steps"]
        measured, rate = (s["load"] for s in steps)
        assert rate["max_iops"] == measured["achieved_iops"]  # its own maximum
        assert rate["requested_iops"] == round(measured["achieved_iops"] / 2)
