"""The built-in suites end to end at small scale, round blocks, resume after SIGKILL,
the on-error policy, and the block-device safety gate on loop devices."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

import ssdlab
from ssdlab.analysis import snia_steady_state
from ssdlab.errors import SuiteError
from ssdlab.suite import Rounds, builtin_suites, load_suite

FAST = ["--set", "ioengine=psync"]


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_builtin_suites_and_parameters() -> None:
    assert {"quick", "enterprise-review", "snia-iops", "snia-throughput", "snia-latency",
            "snia-wsat"} <= set(builtin_suites())  # fmt: skip
    er = load_suite("enterprise-review")
    qd = [s for s in er.all_steps() if s.name.startswith("qd-randread-4k-qd")]
    assert [s.iodepth for s in qd] == [1, 2, 4, 8, 16, 32, 64, 128]
    mixes = [s for s in er.all_steps() if s.name.startswith("mix-rand-4k-qd32-")]
    assert [s.rwmixread for s in mixes] == list(range(100, -1, -10))
    qd128 = [s for s in er.all_steps() if s.name.startswith("mix-rand-4k-qd128-")]
    assert {(s.numjobs, s.iodepth) for s in qd128} == {(4, 32)}
    small = load_suite("enterprise-review", {"qd_list": [1, 4], "span": "75%"})
    assert [s.iodepth for s in small.all_steps() if s.name.startswith("qd-read-128k")] == [1, 4]
    assert {s.size for s in small.all_steps()} == {"75%"}
    snia = load_suite("snia-iops")
    block = snia.steps[1]
    assert isinstance(block, Rounds) and len(block.steps) == 7 * 8 and block.track == "r0-4k"
    assert {(s.numjobs, s.iodepth) for s in block.steps} == {(4, 32)}


def test_include_override_exclude_and_scale(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(
        'name = "mine"\ninclude = "quick"\nexclude = ["read-128k-qd32"]\n'
        '[defaults]\nruntime_s = 30\nsize = "16g"\n'
        '[[steps]]\nname = "extra-qd{iodepth}"\nrw = "randread"\niodepth = [2, 8]\n'
    )
    suite = load_suite(mine)
    names = [s.name for s in suite.all_steps()]
    assert "read-128k-qd32" not in names and names[-2:] == ["extra-qd2", "extra-qd8"]
    assert {s.runtime_s for s in suite.all_steps()} == {30}
    scaled = suite.scaled(0.01)
    assert {s.runtime_s for s in scaled.all_steps()} == {0.5}  # 0.3 s floored at 0.5 s
    assert {s.size for s in scaled.all_steps()} == {str(int(16 * 2**30 * 0.01))}
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "b"\n[[steps]]\nname = "x"\nrw = "read"\niodepth = [1, 2]\nruntime_s = 1\n'
    )
    with pytest.raises(SuiteError, match=r"put \{iodepth\} in its name"):
        load_suite(bad)


def test_snia_rounds_stop_when_steady_by_the_pts_rule(tmp_path: Path) -> None:
    out = tmp_path / "snia"
    proc = ssdlab_cli(
        "run", "snia-iops", "--out", out, "--scale", "0.02", *FAST,
        "--set", "mixes=[0]", "--set", 'block_sizes=["4k"]', "--set", "threads=1",
        "--set", "qd=1", timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    r = ssdlab.load(out)
    (det,) = r.steady_state.iter_rows(named=True)
    tracked = r.summary.filter(pl.col("step").str.contains(r"^iops-r\d\d-r0-4k$")).sort("round")
    values = tracked["iops"].to_list()
    assert r.rounds["value"].to_list() == values  # round-by-round values kept
    # the runner stopped at the first round where the last five were steady
    for n in range(5, len(values)):
        assert not snia_steady_state(values[:n]).steady
    expected = snia_steady_state(values)
    assert det["steady"] == expected.steady and det["rounds_run"] == len(values)
    assert det["mean"] == pytest.approx(expected.mean)
    assert det["slope_excursion"] == pytest.approx(expected.slope_excursion)
    assert det["steady"] or len(values) == 25


@pytest.mark.parametrize("suite", ["snia-throughput", "snia-latency", "snia-wsat"])
def test_other_pts_suites_run_small(tmp_path: Path, suite: str) -> None:
    sets = {
        "snia-throughput": ["--set", "threads=1", "--set", "qd=1", "--set", "max_rounds=5"],
        "snia-latency": ["--set", "mixes=[0]", "--set", 'block_sizes=["4k"]'],
        "snia-wsat": ["--set", "threads=2", "--set", "qd=1"],
    }[suite]
    out = tmp_path / suite
    proc = ssdlab_cli("run", suite, "--out", out, "--scale", "0.005", *FAST, *sets, timeout=600)
    assert proc.returncode == 0, proc.stderr
    r = ssdlab.load(out)
    assert r.summary.height > 0
    if suite == "snia-wsat":
        size = manifest(out)["target"]["size_bytes"]
        assert r.summary["io_bytes"].sum() == 2 * size  # each of 2 threads writes the span once
    else:
        assert r.steady_state.height == (2 if suite == "snia-throughput" else 1)


def write_suite(tmp_path: Path, middle: str = "", n: int = 6) -> Path:
    steps = "".join(
        f'[[steps]]\nname = "s{i}"\nrw = "randwrite"\n{middle if i == 2 else ""}\n'
        for i in range(1, n + 1)
    )
    path = tmp_path / "s.toml"
    path.write_text(
        'name = "t"\n[defaults]\nsize = "16m"\nioengine = "psync"\nruntime_s = 1\n' + steps
    )
    return path


def test_on_error_continue_runs_the_rest_and_fails_at_the_end(tmp_path: Path) -> None:
    # fio parses the job (fio --parse-only, checked before any step runs) but fails to run it
    suite = write_suite(tmp_path, 'ioengine = "no_such_engine"', n=3)
    out = tmp_path / "o"
    proc = ssdlab_cli(
        "run", suite, "--out", out, "--on-error", "continue", "--allow-fio-option", "ioengine"
    )
    assert proc.returncode == 1 and "1 step failed" in proc.stderr
    assert [s["status"] for s in manifest(out)["steps"]] == ["ok", "failed", "ok"]
    assert ssdlab.load(out).summary["step"].to_list() == ["s1", "s3"]


def test_resume_after_sigkill_at_random_moments(tmp_path: Path) -> None:
    suite, out = write_suite(tmp_path, n=5), tmp_path / "o"
    rng = random.Random(20261121)
    seen_ok: dict[str, int] = {}  # step dir -> fio.json mtime when first seen ok
    for _ in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-m", "ssdlab", "run", str(suite), "--out", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(rng.uniform(0.3, 2.5))
        proc.kill()
        proc.wait()
        # fio gets SIGTERM when ssdlab dies (PR_SET_PDEATHSIG): wait for it to be gone
        deadline = time.monotonic() + 120  # bounds a hang only
        while subprocess.run(["pgrep", "-f", str(out)], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "fio outlived ssdlab"
            time.sleep(0.05)
        if (out / "manifest.json").exists():
            for s in manifest(out)["steps"]:
                if s["status"] == "ok":
                    mtime = (out / "steps" / s["dir"] / "fio.json").stat().st_mtime_ns
                    assert seen_ok.setdefault(s["dir"], mtime) == mtime  # never rewritten
    assert subprocess.run(["pgrep", "-f", str(out)], capture_output=True).returncode == 1
    final = ssdlab_cli("run", suite, "--out", out)
    assert final.returncode == 0, final.stderr
    m = manifest(out)
    assert [s["name"] for s in m["steps"]] == [f"s{i}" for i in range(1, 6)]
    assert {s["status"] for s in m["steps"]} == {"ok"}
    for d, mtime in seen_ok.items():
        assert (out / "steps" / d / "fio.json").stat().st_mtime_ns == mtime
    assert sorted(p.name for p in (out / "steps").iterdir()) == sorted(s["dir"] for s in m["steps"])
    assert ssdlab.load(out).summary.height == 5


def test_read_only_suite_needs_an_existing_target(tmp_path: Path) -> None:
    suite = tmp_path / "r.toml"
    suite.write_text(
        'name = "r"\n[[steps]]\nname = "r"\nrw = "randread"\nruntime_s = 1\nsize = "16m"\n'
    )
    proc = ssdlab_cli("run", suite, "--out", tmp_path / "o", "--target", tmp_path / "missing")
    assert proc.returncode == 1 and "read-only suite needs an existing target" in proc.stderr


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Loop devices this test creates: blank, with a file system, and mounted."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup to create loop devices")
    made: dict[str, str] = {}
    mnt = tmp_path / "mnt"
    try:
        for name in ("blank", "fs", "mounted"):
            img = tmp_path / f"{name}.img"
            img.write_bytes(b"")
            os.truncate(img, 64 * 2**20)
            made[name] = subprocess.run(
                ["losetup", "--find", "--show", str(img)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        for name in ("fs", "mounted"):
            subprocess.run(["mkfs.ext4", "-q", made[name]], check=True)
        mnt.mkdir()
        subprocess.run(["mount", made["mounted"], str(mnt)], check=True)
        yield made
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        for dev in made.values():
            subprocess.run(["losetup", "-d", dev], capture_output=True)


def test_block_devices_refused_unless_safe_and_confirmed(
    loops: dict[str, str], tmp_path: Path
) -> None:
    suite = write_suite(tmp_path, n=1)
    blank = loops["blank"]
    name = Path(blank).name
    for dev, expect in ((loops["fs"], "signature"), (loops["mounted"], "mounted")):
        proc = ssdlab_cli(
            "run", suite, "--out", tmp_path / "x", "--target", dev, "--destroy-data", Path(dev).name
        )
        assert proc.returncode == 1 and expect in proc.stderr and "Traceback" not in proc.stderr
    unconfirmed = ssdlab_cli("run", suite, "--out", tmp_path / "u", "--target", blank)
    assert unconfirmed.returncode == 1 and f"--destroy-data {name}" in unconfirmed.stderr
    wrong = ssdlab_cli(
        "run", suite, "--out", tmp_path / "w", "--target", blank, "--destroy-data", "sda"
    )
    assert wrong.returncode == 1 and "does not match" in wrong.stderr
    ok = ssdlab_cli(
        "run", suite, "--out", tmp_path / "ok", "--target", blank, "--destroy-data", name, "--purge"
    )
    assert ok.returncode == 0, ok.stderr
    m = manifest(tmp_path / "ok")
    assert m["target"]["kind"] == "block" and m["target"]["device"]["name"] == name
    assert m["target"]["size_bytes"] == 64 * 2**20 and m["purge"].startswith("blkdiscard")
    assert ssdlab.load(tmp_path / "ok").summary["io_bytes"][0] > 0
    # the file-system loop device was not written to
    fs = subprocess.run(["blkid", "-p", loops["fs"]], capture_output=True, text=True).stdout
    assert "ext4" in fs
