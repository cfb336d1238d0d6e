"""One target judgement on every path to fio, by identity: a file by its device and inode
(a hard link or symlink to another run's record is refused, whatever its name), on
``--target`` and on ``--hosts`` entries that are this machine alike."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest
from conftest import Loops, needs_loop, run_suite_text, ssdlab_cli
from test_fleet import Server, fio_servers

from ssdlab.errors import SsdlabError
from ssdlab.fleet.hosts import Host, judge_targets, servers_here
from ssdlab.layout import frame_file

#: one tiny writing step: what a refused target would have been written with
WRITES = """
name = "writes"
[[steps]]
name = "a"
rw = "write"
bs = "64k"
size = "1m"
loops = 1
ioengine = "psync"
"""


def digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@pytest.fixture(scope="module")
def other(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another run's results directory, with a frame beside its steps (as an import keeps
    them: what a frame holds does not matter here, only where it is)."""
    run = run_suite_text(tmp_path_factory.mktemp("other"), WRITES, "other")
    frame = frame_file(run, "summary")
    frame.parent.mkdir()
    pl.DataFrame({"iops": [1.0]}).write_parquet(frame)
    return run


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    with fio_servers(tmp_path_factory.mktemp("fio-server")) as start:
        yield start


def refused(*args: str | Path) -> str:
    """The one error line of an ``ssdlab run`` that must be refused."""
    proc = ssdlab_cli("run", *args)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "record", ["manifest.json", "steps/001-a/fio.json", "frames/summary.parquet"]
)
@pytest.mark.parametrize("via", ["hard link", "symlink to a hard link"])
def test_a_hard_link_to_another_runs_file_is_refused(
    other: Path, tmp_path: Path, record: str, via: str
) -> None:
    (original,) = other.glob(record)
    before = original.read_bytes()
    link = tmp_path / "data.bin"  # any name, any directory
    os.link(original, link)
    target = link
    if via == "symlink to a hard link":
        target = tmp_path / "chain"
        target.symlink_to(link)
    try:
        suite = tmp_path / "writes.toml"
        suite.write_text(WRITES)
        line = refused(suite, "--target", target, "--out", tmp_path / "o")
        assert line == (
            f"error: {link}: it has 2 hard links; ssdlab cannot tell what else they name (a "
            "results directory's file, another run's target): give a file with one name"
        )
    finally:
        link.unlink()
    assert original.read_bytes() == before and not (tmp_path / "o").exists()


def test_act_and_plan_judge_the_same_way(other: Path, tmp_path: Path) -> None:
    record = other / "manifest.json"
    before = record.read_bytes()
    link = tmp_path / "data.bin"
    os.link(record, link)
    suite = tmp_path / "writes.toml"
    suite.write_text(WRITES)
    why = f"{link}: it has 2 hard links; ssdlab cannot tell what else they name"
    try:
        act = ssdlab_cli(
            "act",
            "run",
            "--load",
            "1",
            "--duration",
            "2",
            "--target",
            link,
            "--out",
            tmp_path / "act",
        )
        assert act.returncode == 1 and act.stderr.startswith(f"error: {why}"), act.stderr
        plan = ssdlab_cli("plan", suite, "--target", link, "--out", tmp_path / "o")
        assert plan.returncode == 1 and f"error: target: {why}" in plan.stderr, plan.stderr
    finally:
        link.unlink()
    assert record.read_bytes() == before and not (tmp_path / "act").exists()


def test_a_new_file_in_another_results_directory_is_refused(other: Path, tmp_path: Path) -> None:
    suite = tmp_path / "writes.toml"
    suite.write_text(WRITES)
    target = other / "steps" / "new.bin"
    line = refused(suite, "--target", target, "--out", tmp_path / "o")
    assert line == (f"error: {target}: a file of the results directory {other} cannot be a target")
    assert not target.exists()


def _hosts_run(tmp_path: Path, server: Server, target: Path) -> str:
    suite = tmp_path / "writes.toml"
    suite.write_text(WRITES)
    return refused(suite, "--hosts", server.spec(target), "--out", tmp_path / "o")


def test_a_local_host_cannot_write_another_runs_record(
    other: Path, start_server: Callable[..., Server], tmp_path: Path
) -> None:
    server = start_server("127.0.0.1")
    record = other / "manifest.json"
    before = record.read_bytes()
    line = _hosts_run(tmp_path, server, record)
    assert line == (
        f"error: 127.0.0.1:{server.port}: {record}: a results directory's record cannot be a target"
    )
    os.link(record, tmp_path / "data.bin")
    try:
        line = _hosts_run(tmp_path, server, tmp_path / "data.bin")
        assert line.endswith(
            f"{tmp_path}/data.bin: it has 2 hard links; ssdlab cannot tell what "
            "else they name (a results directory's file, another run's target)"
            ": give a file with one name"
        )
    finally:
        (tmp_path / "data.bin").unlink()
    assert record.read_bytes() == before


@needs_loop
def test_a_local_host_cannot_write_a_loop_devices_backing_file(
    start_server: Callable[..., Server], loops: Loops, tmp_path: Path
) -> None:
    image = loops.image("backing")
    image.write_bytes(b"ssdlab keeps this " * 1000)
    device = loops.attach(image)
    before = digest(image)
    server = start_server("127.0.0.1")
    line = _hosts_run(tmp_path, server, image)
    assert line == (
        f"error: 127.0.0.1:{server.port}: {image}: it backs the loop device {device}, which "
        f"writing it would corrupt (detach it first: losetup -d {device})"
    )
    assert digest(image) == before


def test_a_server_is_this_machine_by_address_or_by_name(other: Path) -> None:
    """A server that reports this machine's hostname at an address that is not this
    machine's may be this machine: judged as here (another run's record is refused even
    when named), and as another host (it must be named)."""
    me = socket.gethostname()
    far, near = Host("192.0.2.7", 9, str(other / "manifest.json")), Host("127.0.0.1", 9)
    here, unsure = servers_here([far, near], {far.server: me, near.server: me})
    assert (here, unsure) == ({far.server, near.server}, {far.server})
    assert servers_here([far], {far.server: "elsewhere"}) == (set(), set())
    with pytest.raises(SsdlabError, match=r"^refusing to write to targets on other hosts"):
        judge_targets([far], "t", writes=True, destroy_data=None, local=here, unsure=unsure)
    with pytest.raises(SsdlabError, match="a results directory's record cannot be a target"):
        judge_targets(
            [far],
            "t",
            writes=True,
            destroy_data=f"{far.host}:{far.target}",
            local=here,
            unsure=unsure,
        )


@needs_loop  # root: bind mounts
def test_a_bind_mount_of_a_results_subdirectory_is_judged_where_it_lies(
    other: Path, tmp_path: Path
) -> None:
    step = next((other / "steps").iterdir())
    victim = next(p for p in step.iterdir() if p.is_file())
    before = digest(victim)
    view = tmp_path / "view"
    view.mkdir()
    subprocess.run(["mount", "--bind", step, view], check=True)
    try:
        (tmp_path / "writes.toml").write_text(WRITES)
        target = view / victim.name
        line = refused(tmp_path / "writes.toml", "--target", target, "--out", tmp_path / "o")
        assert line == (
            f"error: {target} (also {victim}): a file of the results directory {other} "
            "cannot be a target"
        )
        new = view / "new.bin"  # a file to be created there is refused as well
        line = refused(tmp_path / "writes.toml", "--target", new, "--out", tmp_path / "o")
        assert line.endswith(f"a file of the results directory {other} cannot be a target")
    finally:
        subprocess.run(["umount", view], check=True)
    assert digest(victim) == before and not (step / "new.bin").exists()


#: one tiny reading step, for targets a write would be refused on anyway
READS = WRITES.replace('rw = "write"', 'rw = "read"')


@needs_loop
def test_two_targets_over_the_same_file_are_one_target(loops: Loops, tmp_path: Path) -> None:
    image = loops.image("shared")
    first = loops.attach(image)
    second = loops.attach(image, "--offset", str(4 * 2**20))
    (tmp_path / "reads.toml").write_text(READS)
    for mode in ("lockstep", "sequence"):
        line = refused(
            tmp_path / "reads.toml", "--target", first, "--target", second,
            "--targets-mode", mode, "--out", tmp_path / mode,
        )  # fmt: skip
        assert line == f"error: {first} and {second} share {image}: list it once"
    over = loops.attach(Path(first))  # a device stacked on the other one
    line = refused(
        tmp_path / "reads.toml", "--target", first, "--target", over, "--out", tmp_path / "o"
    )
    assert line == f"error: {first} and {over} share {first}: list it once"


def test_a_target_that_resolves_to_a_name_that_is_no_utf8_gets_one_line(tmp_path: Path) -> None:
    link = tmp_path / "link"
    os.symlink(os.fsencode(tmp_path) + b"/t\xff\xfe", link)
    (tmp_path / "writes.toml").write_text(WRITES)
    expected = f"error: {tmp_path}/t\\xff\\xfe: a target's path must be valid UTF-8"
    assert refused(tmp_path / "writes.toml", "--target", link, "--out", tmp_path / "o") == expected
    why = expected.removeprefix("error: ")
    plan = ssdlab_cli("plan", tmp_path / "writes.toml", "--target", link, "--out", tmp_path / "o")
    act = ssdlab_cli(
        "act", "run", "--load", "1", "--duration", "2", "--target", link,
        "--out", tmp_path / "act",
    )  # fmt: skip
    for proc in (plan, act):
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith("error: ") and line.endswith(why), line
    assert not os.path.lexists(os.fsencode(tmp_path) + b"/t\xff\xfe")
