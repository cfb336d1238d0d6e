"""The command line explains itself: ``--version``; help that names no ``<bool>`` and keeps
its sentences whole; counts in the right number ("1 step", "2 hosts"); a power trace ssdlab
does not know says how to map its columns; ``report`` of a parent of results directories
renders a fleet's hosts or says how."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import typer
from conftest import ROOT, ssdlab_cli

import ssdlab
from ssdlab.cli import _tidy_help, app
from ssdlab.console import plural
from ssdlab.discover import parent_of_runs
from ssdlab.report.batch import fleet_title

DEMO = ROOT / "data" / "quick-demo"


def _commands(command) -> list:
    found = [command]
    for sub in getattr(command, "commands", {}).values():
        found += _commands(sub)
    return found


def test_version() -> None:
    proc = ssdlab_cli("--version")
    assert proc.returncode == 0 and proc.stdout == f"ssdlab {ssdlab.__version__}\n"


def test_help_has_no_bool_and_whole_sentences() -> None:
    command = typer.main.get_command(app)
    _tidy_help(command)
    for cmd in _commands(command):
        for text in [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]:
            assert "\n" not in text.replace("\n\n", ""), (cmd.name, text)  # the terminal wraps
    for argv in (["--help"], ["run", "--help"], ["power", "attach", "--help"], ["lab", "--help"]):
        proc = ssdlab_cli(*argv)
        assert proc.returncode == 0, proc.stderr
        assert "<bool>" not in proc.stdout and "<list[" not in proc.stdout, argv
        assert "--no-" not in proc.stdout or argv == ["lab", "--help"]
    run = ssdlab_cli("run", "--help").stdout
    assert "{SUITE}" in run and "--dry-run" in run and "--set" in run
    batch = ssdlab_cli("batch", "--help").stdout
    # a sentence the source wraps is one paragraph: "reports" and "from" on one line or wrapped
    # by the terminal, never broken where the docstring's line ended
    words = " ".join(line.strip(" │") for line in batch.splitlines()[:8])
    assert "link all reports from OUTPUT/index.html" in re.sub(r"\s+", " ", words)


def test_counts_in_the_right_number() -> None:
    assert [plural(n, "step") for n in (0, 1, 2, 1200)] == [
        "0 steps",
        "1 step",
        "2 steps",
        "1,200 steps",
    ]
    assert plural(1, "results directory", "results directories") == "1 results directory"
    assert plural(3, "results directory", "results directories") == "3 results directories"


def test_power_attach_of_an_unknown_csv_says_how_to_map_its_columns(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    trace = tmp_path / "meter.csv"
    trace.write_text("ts,mw,volts\n0,1000,12\n1,1100,12\n")
    proc = ssdlab_cli("power", "attach", run, trace)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "--format csv --column time=ts --column power=mw" in proc.stderr
    assert "its columns: ts, mw, volts" in proc.stderr
    named = ssdlab_cli("power", "attach", run, trace, "--format", "csv")
    assert named.returncode == 1 and "needs --column: " in named.stderr
    assert "--column time=ts" in named.stderr
    assert not (run / "power").exists()


def _fleet_root(root: Path, hosts: list[str]) -> list[Path]:
    dirs = []
    for host in hosts:
        shutil.copytree(DEMO, root / host)
        dirs.append(root / host)
    members = [
        {"host": h, "port": 8765, "target": "/t", "dir": h, "status": "complete"} for h in hosts
    ]
    (root / "fleet.json").write_text(
        json.dumps({"suite": "quick", "members": members, "aggregate": []})
    )
    return dirs


def test_a_fleet_root_is_a_batch_and_other_parents_say_how(tmp_path: Path) -> None:
    dirs = _fleet_root(tmp_path / "rack3", ["lab1-8765-a", "lab2-8765-b"])
    assert parent_of_runs(tmp_path / "rack3") == ("fleet", dirs)
    assert fleet_title(tmp_path / "rack3", dirs) == "Fleet run rack3: suite quick on 2 hosts"
    assert parent_of_runs(dirs[0]) is None
    tree = tmp_path / "tree"
    shutil.copytree(DEMO, tree / "a")
    shutil.copytree(DEMO, tree / "b")
    assert parent_of_runs(tree) == ("tree", [tree / "a", tree / "b"])
    proc = ssdlab_cli("report", tree, "-o", tmp_path / "r.html")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert f"holds 2 results directories: render them all with 'ssdlab batch {tree} -o DIR'" in (
        proc.stderr
    )
    assert f"'ssdlab report {tree / 'a'} {tree / 'b'}'" in proc.stderr


def test_summary_of_an_act_only_directory_says_why_it_has_no_table(tmp_path: Path) -> None:
    log = ROOT / "tests" / "fixtures" / "act" / "act_storage_1x_30s.log"
    out = tmp_path / "act"
    assert ssdlab_cli("act", "import", log, "--out", out, "--slice", "10").returncode == 0
    proc = ssdlab_cli("summary", out)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == (
        f"{out}: no fio step results to summarise; it holds 1 ACT trial (ssdlab report {out} "
        "shows them)\n"
    )
