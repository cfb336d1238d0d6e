"""Fleet targets are judged as safely as local ones: real ``fio --server`` processes, loop
devices holding a known pattern that must survive every refusal byte for byte."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import IMAGE_BYTES, Loops, needs_loop, sh
from test_fleet import RUN_FLEET, Server, _wait_for, fio_servers
from test_trust_run import _past_the_end

import ssdlab
from ssdlab.errors import InputError, SsdlabError
from ssdlab.fleet import FleetFailed, Host, load_fleet, parse_hosts, run_fleet
from ssdlab.fleet.hosts import is_this_machine, judge_targets
from ssdlab.manifest import Manifest
from ssdlab.suite import Suite, load_suite

STEP = """
[defaults]
runtime_s = 0.5
size = "4m"
ioengine = "psync"

[[steps]]
name = "{rw}"
rw = "{rw}"
bs = "64k"
"""


def _suite(tmp_path: Path, rw: str, runtime_s: float = 0.5) -> Suite:
    path = tmp_path / f"{rw}.toml"
    path.write_text(f'name = "safety-{rw}"\n' + STEP.format(rw=rw).replace("0.5", str(runtime_s)))
    return load_suite(path)


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    with fio_servers(tmp_path_factory.mktemp("fio-server")) as start:
        yield start


@pytest.fixture
def writes(tmp_path: Path) -> Suite:
    return _suite(tmp_path, "write")


@pytest.fixture
def reads(tmp_path: Path) -> Suite:
    return _suite(tmp_path, "read")


def _digest(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _patterned(loops: Loops, name: str = "drive") -> tuple[str, str]:
    """A loop device over an image full of a known pattern, and the pattern's digest."""
    image = loops.image(name)
    image.write_bytes(b"ssdlab keeps this " * (IMAGE_BYTES // 18) + bytes(IMAGE_BYTES % 18))
    device = loops.attach(image)
    digest = _digest(device)
    assert digest == _digest(image)
    return device, digest


@needs_loop
@pytest.mark.parametrize("form", ["//dev/{name}", "/tmp/../dev/{name}", "{link}"])
def test_other_spellings_of_a_local_device_need_its_name(
    form: str,
    start_server: Callable[..., Server],
    loops: Loops,
    writes: Suite,
    tmp_path: Path,
) -> None:
    device, digest = _patterned(loops)
    name = Path(device).name
    link = tmp_path / "drive"
    link.symlink_to(device)
    server = start_server("127.0.0.1")
    hosts = parse_hosts(server.spec(form.format(name=name, link=link)))
    for destroy_data in (None, f"loop-x,127.0.0.9:{name}"):  # the name on another host
        with pytest.raises(
            SsdlabError, match=rf"{device} \({name}: .* passed the safety checks, .* {name}\)"
        ):
            run_fleet(writes, hosts, tmp_path / "out", destroy_data=destroy_data)
    assert _digest(device) == digest


@needs_loop
def test_a_confirmed_symlink_runs_on_the_device_it_resolves_to(
    start_server: Callable[..., Server], loops: Loops, writes: Suite, tmp_path: Path
) -> None:
    device, digest = _patterned(loops)
    link = tmp_path / "drive"
    link.symlink_to(device)
    server = start_server("127.0.0.1")
    hosts = parse_hosts(server.spec(link))
    run_fleet(writes, hosts, tmp_path / "out", destroy_data=f"127.0.0.1:{Path(device).name}")
    manifest = ssdlab.load(tmp_path / "out" / hosts[0].dirname).manifest
    assert manifest.target is not None and manifest.target.device is not None
    assert (manifest.target.path, manifest.target.kind) == (device, "block")
    assert manifest.target.device["name"] == Path(device).name
    assert f"filename={device}\n" in next((tmp_path / "out").rglob("job.fio")).read_text()
    assert _digest(device) != digest  # fio wrote the device ssdlab judged


@needs_loop
def test_a_mounted_device_is_refused_even_when_named(
    start_server: Callable[..., Server], loops: Loops, writes: Suite, tmp_path: Path
) -> None:
    image = loops.image("fs")
    sh("mkfs.ext4", "-q", "-F", image)
    device = loops.attach(image)
    mounted = tmp_path / "mnt"
    mounted.mkdir()
    sh("mount", "-o", "ro", device, mounted)  # read-only: nothing but fio could change it
    loops.mounted.append(mounted)
    digest = _digest(device)
    link = tmp_path / "drive"
    link.symlink_to(device)  # fio's own mounted-device check compares names: bypassed
    server = start_server("127.0.0.1")
    with pytest.raises(SsdlabError, match=rf"Refusing to write to {device} .*it is mounted"):
        run_fleet(writes, parse_hosts(server.spec(link)), tmp_path / "out", destroy_data="all")
    with pytest.raises(SsdlabError, match=r"it is mounted"):
        run_fleet(
            writes,
            parse_hosts(server.spec(link)),
            tmp_path / "out",
            destroy_data=Path(device).name,
        )
    assert _digest(device) == digest


def test_targets_are_normalised_and_limited_to_safe_characters(tmp_path: Path) -> None:
    assert [h.target for h in parse_hosts("lab1=//dev//sdb/,lab2=/tmp/../dev/./sdb")] == [
        "/dev/sdb",
        "/dev/sdb",
    ]
    with pytest.raises(InputError, match=r"^--hosts: lab1:8765 /dev/sdb is listed twice$"):
        parse_hosts("lab1=/dev/sdb,lab1=//dev/sdb")
    for target in ("/dev/sdb:/dev/sdc", "/data/x$HOME", "/data/a b", "/data/x#y"):
        with pytest.raises(InputError, match=r"a path may hold only letters, digits and"):
            parse_hosts(f"lab1={target}")
    hosts = tmp_path / "hosts"
    hosts.write_text("lab1 8765 /data/a=b\n")
    with pytest.raises(InputError, match=r"^.*hosts:1: target '/data/a=b': a path may hold"):
        parse_hosts(hosts)


def test_the_rule_for_other_hosts() -> None:
    assert is_this_machine("127.0.0.5") and is_this_machine("localhost")
    assert not is_this_machine("192.0.2.7") and not is_this_machine("no-such-host.invalid")
    file, drive, default = (
        Host("192.0.2.7", 9, "/data/t.bin"),
        Host("192.0.2.7", 9, "/dev/sdb"),
        Host("192.0.2.7", 9),
    )
    hosts = [file, drive, default]

    def judge(destroy_data: str | None, writes: bool = True) -> dict[Host, str]:
        judged = judge_targets(hosts, "tok", writes=writes, destroy_data=destroy_data, local=set())
        return {h: f"{t.kind} {t.path}" for h, t in judged.items()}

    expected = {
        file: "file /data/t.bin",
        drive: "block /dev/sdb",
        default: "file /var/tmp/ssdlab-fleet-192.0.2.7-9-tok.tmp",  # needs no naming
    }
    assert judge(None, writes=False) == expected  # reading needs no confirmation
    assert judge("192.0.2.7:/data/t.bin,sdb") == expected
    assert judge("/data/t.bin,192.0.2.7:/dev/sdb") == expected
    for unconfirmed, destroy_data in [
        ("192.0.2.7:/data/t.bin, 192.0.2.7:/dev/sdb", None),
        ("192.0.2.7:/data/t.bin", "t.bin,/dev/sdb"),  # a file is named by its path
        ("192.0.2.7:/data/t.bin", "192.0.2.8:/data/t.bin,sdb"),  # another host's
    ]:
        with pytest.raises(SsdlabError) as refused:
            judge(destroy_data)
        assert str(refused.value).startswith(
            f"refusing to write to targets on other hosts without confirmation: {unconfirmed}. "
        )


@needs_loop
def test_a_server_answering_as_another_host_is_judged_as_one(
    start_server: Callable[..., Server], loops: Loops, writes: Suite, tmp_path: Path
) -> None:
    """A loopback address may lead to another machine (an ssh tunnel): the server's own
    hostname decides, and a symlink there is not confirmed by a kernel name."""
    device, digest = _patterned(loops)
    link = tmp_path / "drive"
    link.symlink_to(device)
    server = start_server("127.0.0.6", hostname="elsewhere")
    with pytest.raises(
        SsdlabError,
        match=rf"^refusing to write to targets on other hosts without confirmation: "
        rf"127\.0\.0\.6:{link}\. ",
    ):
        run_fleet(
            writes,
            parse_hosts(server.spec(link)),
            tmp_path / "out",
            destroy_data=Path(device).name,
        )
    assert _digest(device) == digest
    assert not (tmp_path / "out" / "fleet.json").exists()


def test_a_read_only_suite_creates_grows_and_writes_nothing(
    start_server: Callable[..., Server], reads: Suite, tmp_path: Path
) -> None:
    small, missing = tmp_path / "small.bin", tmp_path / "missing.bin"
    small.write_bytes(b"four KiB" * 512)  # the step reads 4 MiB: fio would lay it out anew
    here = start_server("127.0.0.1")
    with pytest.raises(SsdlabError, match=r"missing\.bin: a read-only suite needs an existing"):
        run_fleet(reads, parse_hosts(here.spec(missing)), tmp_path / "here")
    elsewhere = start_server("127.0.0.6", hostname="elsewhere")
    hosts = parse_hosts(f"{elsewhere.spec(small)},{elsewhere.spec(missing)}")
    with pytest.raises(FleetFailed, match=r"^2 of 2 hosts failed") as failed:
        run_fleet(reads, hosts, tmp_path / "out")
    assert str(failed.value).count("fio: refusing extend of file due to read-only") == 2
    assert small.read_bytes() == b"four KiB" * 512 and not missing.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".bin")] == ["small.bin"]


def test_a_second_fleet_run_is_refused_and_a_resume_checks_the_target(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    server = start_server("127.0.0.2")
    _suite(tmp_path, "write", runtime_s=30)
    a, link, out = tmp_path / "a.bin", tmp_path / "drive", tmp_path / "out"
    link.symlink_to(a)
    first = subprocess.Popen(
        [sys.executable, "-c", RUN_FLEET, str(tmp_path / "write.toml"), server.spec(link), out],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: server.uses(a), "the first fleet run to write")
        with pytest.raises(SsdlabError) as refused:
            run_fleet(_suite(tmp_path, "write", runtime_s=30), parse_hosts(server.spec(link)), out)
        assert str(refused.value) == (
            f"{out} is in use by another ssdlab process (ssdlab fleet run, pid {first.pid}); "
            "wait for it to end or choose another --out"
        )
    finally:
        first.send_signal(signal.SIGINT)
        stderr = first.communicate(timeout=60)[1]
    assert first.returncode == 130, stderr
    link.unlink()
    link.symlink_to(tmp_path / "c.bin")  # the same name, now another file
    with pytest.raises(
        SsdlabError, match=rf"ran on file {a}, but its target now is file {tmp_path}/c\.bin"
    ):
        run_fleet(_suite(tmp_path, "write", runtime_s=30), parse_hosts(server.spec(link)), out)
    assert not (tmp_path / "c.bin").exists()


def test_resuming_needs_the_same_hosts_and_targets(
    start_server: Callable[..., Server], writes: Suite, reads: Suite, tmp_path: Path
) -> None:
    server = start_server("127.0.0.2")
    a, b, link, out = (tmp_path / n for n in ("a.bin", "b.bin", "drive", "out"))
    link.symlink_to(a)
    run_fleet(writes, parse_hosts(f"{server.spec(link)},{server.spec(b)}"), out)
    members = json.loads((out / "fleet.json").read_text())["members"]
    assert [m["target"] for m in members] == [str(link), str(b)]
    with pytest.raises(SsdlabError) as refused:
        run_fleet(writes, parse_hosts(f"{server.spec(link)},{server.spec(a)}"), out)
    assert str(refused.value) == (
        f"{out} holds a fleet run of other hosts or targets (not listed now: "
        f"127.0.0.2:{server.port} {b}; new: 127.0.0.2:{server.port} {a}): list the same "
        "hosts and targets to resume it, or use another --out"
    )
    with pytest.raises(SsdlabError, match=r"holds a fleet run of suite 'safety-write': use an"):
        run_fleet(reads, parse_hosts(f"{server.spec(link)},{server.spec(b)}"), out)
    assert load_fleet(out).members["status"].to_list() == ["complete", "complete"]


@needs_loop
def test_a_host_step_that_did_no_io_fails(
    start_server: Callable[..., Server], loops: Loops, tmp_path: Path
) -> None:
    """fio exits 0 having read nothing (an offset at the device's end): not a zero result."""
    device = loops.blank()
    path = tmp_path / "past-end.toml"
    path.write_text(
        'name = "past-end"\n[[steps]]\nname = "past-end"\nrw = "randread"\nruntime_s = 0.5\n'
        'ioengine = "psync"\nsize = "1m"\n'
    )
    server = start_server("127.0.0.1")
    hosts = parse_hosts(server.spec(device))
    with pytest.raises(FleetFailed, match=r"step 'past-end' failed: fio did no I/O"):
        run_fleet(_past_the_end(load_suite(path)), hosts, tmp_path / "out")
    recorded = json.loads((tmp_path / "out" / hosts[0].dirname / "manifest.json").read_text())
    (step,) = recorded["steps"]  # read as JSON: its stand-in offset is no valid suite's
    assert step["status"] == "failed" and step["error"].startswith("fio did no I/O")


def test_a_missing_device_on_this_machine_is_never_created(tmp_path: Path) -> None:
    """A mistyped /dev path (or a dangling link into /dev) on a local fio server would become
    a file in devtmpfs once fio lays it out: refused like a local run's target."""
    missing = "/dev/ssdlab-test-no-such-device"
    link = tmp_path / "dangling"
    link.symlink_to(missing)
    for path in (missing, str(link)):
        (host,) = parse_hosts(f"127.0.0.1={path}")
        with pytest.raises(SsdlabError, match="no such device"):
            judge_targets([host], "tok", writes=True, destroy_data="all", local={host.server})
    assert not Path(missing).exists()


@needs_loop
def test_a_resumed_host_must_find_the_same_drive(
    start_server: Callable[..., Server], reads: Suite, loops: Loops, tmp_path: Path
) -> None:
    """The same device node with another drive behind it (here: another, larger image) is
    not the run's target: a resume is refused, as a local run's is."""
    server = start_server("127.0.0.1")
    device = loops.blank()
    out = tmp_path / "out"
    run_fleet(reads, parse_hosts(server.spec(device)), out)
    (member,) = [d for d in out.iterdir() if (d / "manifest.json").exists()]
    manifest = Manifest.load(member)
    manifest.status = "interrupted"  # as a run stopped before its last step leaves it
    manifest.save(member)
    sh("losetup", "--detach", device)
    other = loops.directory / "other.img"
    with other.open("wb") as f:
        f.truncate(2 * IMAGE_BYTES)
    sh("losetup", device, other)
    loops.attached.append((device, other))
    with pytest.raises(SsdlabError, match=rf"ran on another drive at {device} \(target size"):
        run_fleet(reads, parse_hosts(server.spec(device)), out)
