"""Telemetry on fleet runs: the power meter is sampled on the controlling machine and every
member's steps get their power from their own step windows; SMART snapshots cannot reach the
hosts' drives (``auto`` notes it, a COMMAND is refused). Real ``fio --server`` processes on
loopback addresses, as in test_fleet.py; power from a command source, as in
test_telemetry_run.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_fleet import Server, start_server  # noqa: F401 (a fixture)
from test_telemetry_run import WATTS, suite_file

import ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.fleet import parse_hosts, run_fleet
from ssdlab.suite import Suite, load_suite
from ssdlab.telemetry import store
from ssdlab.telemetry.hooks import FLEET_SMART_NOTE, telemetry_hooks


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    return load_suite(suite_file(tmp_path))  # two short steps on the null engine


def test_fleet_run_keeps_power_per_member_step(
    start_server: Callable[..., Server],  # noqa: F811
    suite: Suite,
    tmp_path: Path,
) -> None:
    server = start_server("127.0.0.2")
    hosts = parse_hosts(f"{server.spec(tmp_path / 'a.bin')},{server.spec(tmp_path / 'b.bin')}")
    hooks = telemetry_hooks("auto", f"command:sh -c 'echo {WATTS}'", 0.2)
    root = tmp_path / "out"
    run_fleet(suite, hosts, root, hooks=hooks)

    fleet_trace = store.read_trace(root)  # the meter's one trace, recorded here
    assert fleet_trace is not None and fleet_trace.height >= 2
    covered = 0
    for host in hosts:
        member = root / host.dirname
        copied = store.read_trace(member)  # a copy of the fleet's trace as the member ended
        assert copied is not None and copied.equals(fleet_trace.head(copied.height))
        power = ssdlab.load(member).power
        assert power["step"].to_list() == ["randwrite-4k", "write-128k"]
        # a step is covered unless the meter missed part of it: a 1 s step on a loaded
        # machine may see its 0.2 s samples late; what is covered reads the meter's watts
        for row in power.iter_rows(named=True):
            if row["covered"]:
                covered += 1
                assert row["samples"] >= 1 and (row["avg_w"], row["max_w"]) == (WATTS, WATTS)
            else:
                assert row["reason"].startswith(("trace starts", "no samples")), row["reason"]
        source = json.loads((member / "power" / "source.json").read_text())
        assert source["recorded_by_fleet"] == str(root.absolute())
        assert source["source"] == "command" and source["errors"] == 0
        notes = json.loads((member / "manifest.json").read_text())["notes"]
        assert FLEET_SMART_NOTE in notes  # --smart auto (the default) said it took nothing
        assert not list(member.glob("steps/*/smart"))
    assert covered  # the members' own step windows found the meter's samples


def test_fleet_refuses_smart_command_before_anything_runs(suite: Suite, tmp_path: Path) -> None:
    hosts = parse_hosts("127.0.0.2:1=/tmp/x.bin")
    with pytest.raises(SsdlabError, match=r"^--smart COMMAND cannot run on a fleet \(--hosts\)"):
        run_fleet(suite, hosts, tmp_path / "out", hooks=telemetry_hooks("smartctl -a {device}"))
    assert not (tmp_path / "out").exists()
