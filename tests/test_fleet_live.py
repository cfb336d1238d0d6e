"""Live rates on a fleet: fio's client reaches a real ``fio --server`` on fio's default port
through ssdlab's relay, which reports the server's ETA replies while fio.json comes out as a
direct connection writes it; where no relay can look like a direct connection, or fio's
protocol is one ssdlab does not know, the step runs as before, without live rates."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_fleet import Server, fio_servers

from ssdlab.fio import FioStatus
from ssdlab.fleet import DEFAULT_PORT, Host
from ssdlab.fleet.client import Clients
from ssdlab.fleet.hosts import LOCAL_LINK, local_targets
from ssdlab.fleet.live import EtaReader, Relay, parse_eta, relay_name
from ssdlab.fleet.local import SocketLink, local_servers
from ssdlab.layout import FIO_JSON, JOB_FILE
from ssdlab.suite import Step

JOB = "[live]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\ntime_based=1\nruntime={runtime}\n"


def _loopback() -> str:
    """A loopback address of its own, where fio's default port is surely free."""
    return f"127.{random.randrange(1, 255)}.{random.randrange(1, 255)}.{random.randrange(2, 255)}"


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with fio_servers(tmp_path_factory.mktemp("fio-server")) as start:
        yield start(_loopback(), DEFAULT_PORT)


def _step_dir(root: Path, name: str, runtime_s: int) -> tuple[Path, Step]:
    step_dir = root / name
    step_dir.mkdir()
    (step_dir / JOB_FILE).write_text(JOB.format(runtime=runtime_s))
    return step_dir, Step(name="live", rw="randread", ioengine="null", runtime_s=runtime_s)


def _shape(value: object, path: str = "") -> set[str]:
    """Every key path of a JSON document (what fio wrote, whatever it measured: the keys of
    json+'s latency bins are latencies)."""
    if isinstance(value, dict) and not path.endswith("/bins"):
        return {path} | {p for k, v in value.items() for p in _shape(v, f"{path}/{k}")}
    if isinstance(value, list):
        return {path} | {p for v in value for p in _shape(v, f"{path}[]")}
    return {path}


def _client_stats(step_dir: Path) -> list[dict]:
    text = (step_dir / FIO_JSON).read_text()
    return json.loads(text[text.index("{") :])["client_stats"]


def test_relay_reports_live_rates_and_fio_json_is_a_direct_connections(
    server: Server, tmp_path: Path
) -> None:
    host = Host(server.ip)
    names: set[str] = set()
    seen: list[FioStatus | None] = []

    def on_status(name: str, status: FioStatus | None) -> None:
        names.add(name)
        seen.append(status)
        if status is not None and status.iops:
            clients.abort()  # live I/O seen: stop the step (fio still sends its results)

    clients = Clients(60, readonly=True, on_status=on_status)
    live_dir, step = _step_dir(tmp_path, "live", runtime_s=60)
    assert clients.run(host, live_dir, step).interrupted
    assert names == {host.name} and seen[-1] is None  # the host's row ends with its step
    # fio's live rates of 4 KiB reads (its first reply may come before any I/O)
    rates = [(s.iops, s.bw_bytes_s) for s in seen[:-1] if s is not None and s.iops]
    assert rates and all(bw == pytest.approx(iops * 4096, rel=0.01) for iops, bw in rates)
    # nothing of the relay stays in the step's directory
    assert sorted(p.name for p in live_dir.iterdir()) == [FIO_JSON, "fio.stderr", JOB_FILE]

    direct_dir, step = _step_dir(tmp_path, "direct", runtime_s=1)
    assert Clients(30, readonly=True).run(host, direct_dir, step).error is None
    live, direct = _client_stats(live_dir), _client_stats(direct_dir)
    assert [(j["hostname"], j["port"]) for j in live] == [(server.ip, DEFAULT_PORT)]
    assert [(j["hostname"], j["port"]) for j in direct] == [(server.ip, DEFAULT_PORT)]
    assert _shape(live) == _shape(direct)


def test_without_a_relay_the_host_is_reached_directly(tmp_path: Path) -> None:
    """Another port than fio's default (fio would name the client by its socket and the
    default port), a name taken in the step's directory, or a server that does not answer:
    fio's client gets the host's own address (and says itself what went wrong)."""
    assert relay_name(Host("lab1", 9000), tmp_path) is None
    assert relay_name(Host(".."), tmp_path) is None
    (tmp_path / "lab1").touch()
    assert relay_name(Host("lab1"), tmp_path) is None
    assert relay_name(Host("lab2"), tmp_path) == "lab2"
    nobody = Host(_loopback())
    with Relay(nobody, tmp_path, print) as relay:
        assert relay.address == nobody.fio_address


def test_eta_replies_of_an_unknown_protocol_are_not_read() -> None:
    """A fio whose ``struct jobs_eta`` may differ (another FIO_SERVER_VER) shows no rates."""
    header = (98).to_bytes(2, "little") + (9).to_bytes(2, "little") + bytes(20)
    assert parse_eta(98, bytes(200)) is None
    reported: list[FioStatus] = []
    reader = EtaReader(reported.append)
    reader.feed(header)
    assert reader.stopped and not reported


def test_a_target_of_this_machine_gets_live_rates_through_its_link(tmp_path: Path) -> None:
    """A lockstep member's client connects through the link its step has to its server: the
    relay takes that link's place, reports rates, and fio's JSON says ``localhost`` as
    without it; the step's directory keeps nothing of either."""
    (target,) = local_targets([tmp_path / "a.bin"])
    seen: list[FioStatus] = []

    def on_status(name: str, status: FioStatus | None) -> None:
        if status is not None and status.iops:
            seen.append(status)
            clients.abort()

    clients = Clients(60, readonly=True, on_status=on_status)
    with local_servers([target]) as (served,):
        link = SocketLink(served.socket)
        step_dir, step = _step_dir(tmp_path, "live", runtime_s=60)
        link.before_step(step_dir, None)  # type: ignore[arg-type]
        assert clients.run(served, step_dir, step).interrupted
        link.after_step(step_dir, None)  # type: ignore[arg-type]
    assert seen and all(s.bw_bytes_s == pytest.approx(s.iops * 4096, rel=0.01) for s in seen)
    assert [j["hostname"] for j in _client_stats(step_dir)] == [LOCAL_LINK]
    assert sorted(p.name for p in step_dir.iterdir()) == [FIO_JSON, "fio.stderr", JOB_FILE]
