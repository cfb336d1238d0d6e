"""An ACT score states what bounds it and how long its trials ran, and a trial from another
device is refused or marked and left out of the score.

The fio search runs at loads that pass by construction (null ioengine, 1 s slices with a max
lag of 1 s, which no lag within a slice can exceed; null reads take microseconds), capped by
``--max-load`` so the cap is reached on any machine. Bounded scores come from a recorded ACT
log sliced two ways: at 10 s slices it passes, at 1 s slices its slice 2 fails (1.00 % of
reads at or over 8 ms).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ssdlab_cli
from test_findings import _check

import ssdlab
from ssdlab.act import read_act_log
from ssdlab.act.trials import DeviceId
from ssdlab.analysis import DriveAnalysis
from ssdlab.review import act_findings, drive

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = FIXTURES / "act_storage_1x_30s.log"  # /dev/loop0, 2 GiB
US_LOG = FIXTURES / "act_storage_us_2x_20s.log"  # /dev/nvme0n1
# 1x = 100 reads/s: 1x and 2x pass on any machine (see the module's text)
PASSES = [
    *("--duration", "2", "--slice", "1", "--hist-msec", "250"),
    *("--set", "read-reqs-per-sec=100", "--set", "write-reqs-per-sec=50"),
    *("--small-read-jobs", "1", "--ioengine", "null", "--max-lag", "1"),
]
SMOKE = (
    "A trial of 2 s is a smoke test of the workload, not an ACT rating: ACT rates a drive by "
    "a run of 24 h judged in slices of 1 h."
)


def well_formed(sentences: list[str]) -> None:
    """Every sentence passes the checks every built-in suite's findings pass."""
    assert [(s, p) for s in sentences for p in _check(s, {100, 0})] == []


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A search capped at --max-load 2 on a file target (1x and 2x pass) and its stdout."""
    base = tmp_path_factory.mktemp("capped")
    out = base / "act"
    proc = ssdlab_cli(
        "act", "score", "--out", out, "--target", base / "t.dat", "--target-size", "16m",
        "--max-load", "2", *PASSES,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_a_capped_score_says_it_is_a_lower_bound_with_its_length(
    capped: tuple[Path, str],
) -> None:
    out, stdout = capped
    assert stdout == (
        "ACT score: at least 2x: no load failed up to --max-load 2x, where the search stopped "
        "at its cap, so the score is a lower bound (trials of 2 s judged in slices of 1 s; "
        f"tried 1x, 2x; resolution 1)\n{SMOKE}\n"
    )
    (search,) = json.loads((out / "act.json").read_text())["searches"]
    assert (search["max_load"], search["score"], search["capped"]) == (2, 2, True)
    results = ssdlab.load(out)
    assert results.act_trials["search_cap"].to_list() == [False, True]
    sentences = act_findings.act(results.act_trials, results.act_slices)
    assert sentences[0] == (
        "ACT score: at least 2x, the highest load that passed, in a trial of 2 s judged in "
        "slices of 1 s (200 reads/s; worst slice 0.00 % of reads over 1 ms); no load failed "
        "up to --max-load 2x, where the search stopped at its cap, so the score is a lower "
        "bound."
    )
    assert sentences[1] == SMOKE
    well_formed(sentences)
    analysis = DriveAnalysis(results)
    assert drive.key_findings(analysis).findings[-2:] == sentences[:2]  # the summary too
    html = drive.act_section(analysis).parts[-1].data
    assert all(f">{name}</th>" in html for name in ("Length", "Slice", "Device"))


def test_fio_trials_name_their_target(capped: tuple[Path, str]) -> None:
    out, _ = capped
    devices = ssdlab.load(out).act_trials["device"].unique().to_list()
    assert devices == [f"file {(out.parent / 't.dat').resolve()} (16 MiB)"]


def test_a_log_of_another_device_is_refused_then_marked_and_left_out(
    capped: tuple[Path, str], tmp_path: Path
) -> None:
    out = tmp_path / "act"
    shutil.copytree(capped[0], out)
    before = (out / "act.json").read_bytes()
    refused = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", "10")
    target = f"file {(capped[0].parent / 't.dat').resolve()} (16 MiB)"
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"error: {SAMPLE}: ran on loop0 (2 GiB), not shown to be the target of {out} "
        f"({target}); add it as another device's trial, left out of the score, with "
        "--other-device, or use another --out\n"
    )
    assert (out / "act.json").read_bytes() == before and not (out / "act").exists()

    added = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", "10", "--other-device")
    assert added.returncode == 0, added.stderr
    assert added.stdout == (
        "trial 3 (1x, native): passed: 3 slices of 10 s within the limits [another device: "
        "loop0 (2 GiB); not in the score]\n"
    )
    trial = json.loads((out / "act.json").read_text())["trials"][2]
    assert trial["other_device"] is True
    assert trial["devices"] == [
        {"kind": "block", "name": "loop0", "size_bytes": 2 << 30, "model": None, "serial": None}
    ]
    results = ssdlab.load(out)
    trials = results.act_trials
    assert trials["other_device"].to_list() == [False, False, True]
    sentences = act_findings.act(trials, results.act_slices)
    assert sentences[0].startswith("ACT score: at least 2x, the highest load that passed, ")
    assert sentences[0].endswith("; 1 trial from another device left out.")
    assert sentences[-1] == (
        "Left out of the score, as another device's: trial 3 at 1x on loop0 (2 GiB), passed."
    )
    well_formed(sentences)
    section = drive.act_section(DriveAnalysis(results))
    assert "another device, not in the score: loop0 (2 GiB)" in section.parts[-1].data
    drawn = [part.hconcat[0].layer[0].data for part in section.parts[:-1]]  # chart data
    assert all(3 not in d["trial"].to_list() for d in drawn) and len(drawn) == 2


def test_native_logs_carry_their_devices_and_a_bounded_score(tmp_path: Path) -> None:
    out = tmp_path / "native"
    for slice_s, load in ((10, 1), (1, 2)):  # the same log: the same device
        proc = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", slice_s, "--load", load)
        assert proc.returncode == 0, proc.stderr
    other = ssdlab_cli("act", "import", US_LOG, "--out", out, "--slice", "4")
    assert other.returncode == 1
    assert other.stderr.startswith(f"error: {US_LOG}: ran on nvme0n1 (3.6 TiB), not shown to ")
    assert "be the device of trial 1 in " in other.stderr and "(loop0 (2 GiB))" in other.stderr
    assert len(other.stderr.splitlines()) == 1
    results = ssdlab.load(out)
    assert results.act_trials["device"].to_list() == ["loop0 (2 GiB)"] * 2
    sentences = act_findings.act(results.act_trials, results.act_slices)
    assert sentences[:3] == [
        "ACT score: 1x, the highest load that passed, in a trial of 30 s judged in slices of "
        "10 s (2,000 reads/s and 1,000 writes/s; worst slice 1.35 % of reads over 1 ms); 2x "
        "failed in a trial of 30 s judged in slices of 1 s.",
        "A trial of 30 s is a smoke test of the workload, not an ACT rating: ACT rates a drive "
        "by a run of 24 h judged in slices of 1 h.",
        "At 2x the drive failed: slice 2: 1.00 % of reads >= 8 ms (limit 1 %).",
    ]
    well_formed(sentences)


@pytest.mark.parametrize(
    ("first", "message"),
    [
        (None, "--other-device: {out} holds no ACT trials or target that {log} could differ"),
        (SAMPLE, "--other-device: {log} ran on loop0 (2 GiB), which is the device of trial 1"),
    ],
)
def test_other_device_is_refused_when_there_is_no_other(
    tmp_path: Path, first: Path | None, message: str
) -> None:
    out = tmp_path / "native"
    if first is not None:
        assert ssdlab_cli("act", "import", first, "--out", out, "--slice", "10").returncode == 0
    proc = ssdlab_cli("act", "import", SAMPLE, "--out", out, "--slice", "10", "--other-device")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {message.format(out=out, log=SAMPLE)}")
    assert len(proc.stderr.splitlines()) == 1


def test_devices_are_told_apart_by_identity() -> None:
    log = DeviceId.of_log(read_act_log(SAMPLE))
    assert log == [DeviceId(kind="block", name="loop0", size_bytes=2 << 30)]
    drive_a = DeviceId(kind="block", name="nvme0n1", size_bytes=4 << 40, model="M", serial="A")
    renamed = drive_a.model_copy(update={"name": "nvme1n1"})
    assert drive_a.same(renamed)  # a serial identifies it under any kernel name
    assert not drive_a.same(drive_a.model_copy(update={"serial": "B"}))
    # a log names no serial: never shown to be a drive that has one
    assert not DeviceId(kind="block", name="nvme0n1", size_bytes=4 << 40).same(drive_a)
    assert not log[0].same(log[0].model_copy(update={"size_bytes": 1 << 30}))
    assert not DeviceId(kind="block", name="loop0").same(DeviceId(kind="block", name="loop0"))


@pytest.mark.parametrize(
    ("duration_s", "slice_s", "words"),
    [
        (6, 1, "A trial of 6 s is a smoke test of the workload, not an ACT rating"),
        (3600, 3600, "A trial of 60 min is shorter than ACT's rating run of 24 h"),
        (86_400, 10, "Slices of 10 s are not ACT's slices of 1 h"),
        (86_400, 3600, None),
    ],
)
def test_a_trial_shorter_than_a_rating_carries_a_caveat(
    duration_s: int, slice_s: int, words: str | None
) -> None:
    caveat = act_findings.act_caveat(duration_s, slice_s)
    if words is None:
        assert caveat is None
    else:
        assert caveat is not None and caveat.startswith(words)
