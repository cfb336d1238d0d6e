"""QoS profiles judged against real runs: verdicts flip when a limit crosses the measured
value (limits computed from it), percentiles and I/O counts agree with fio's own output,
per-slice exceedance with a hand computation from the histogram log, the ACT rule against
an imported ACT log, the CLI's exit codes and errors, and the review's QoS section."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from bs4 import BeautifulSoup
from conftest import run_suite_text, ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.errors import InputError
from ssdlab.qos import judge, load_profile, passed, slice_exceedance
from ssdlab.qos.profile import Exceedance, Profile, Target
from ssdlab.review import drive as review
from ssdlab.review.qos import QosReview, qos_section

SUITE = """
name = "qos"
description = "A 4K random read and a 70/30 mix, with histogram logs."

[defaults]
runtime_s = 3
size = "8m"
ioengine = "psync"

[[steps]]
name = "randread-4k"
rw = "randread"
bs = "4k"

[[steps]]
name = "randrw70-4k"
rw = "randrw"
rwmixread = 70
bs = "4k"
"""
SAMPLE_ACT_LOG = Path(__file__).parent / "fixtures" / "act" / "act_storage_1x_30s.log"
READ_4K = {"pattern": "random", "bs": "4k", "read_pct": 100}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_suite_text(tmp_path_factory.mktemp("qos"), SUITE, "qos")


@pytest.fixture(scope="module")
def drive(run: Path) -> DriveAnalysis:
    return DriveAnalysis(ssdlab.load(run))


@pytest.fixture(scope="module")
def act_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("act") / "act"
    proc = ssdlab_cli("act", "import", SAMPLE_ACT_LOG, "--out", out, "--slice", "10")
    assert proc.returncode == 0, proc.stderr
    return out


def _fio_read(run: Path, step: int = 1) -> dict:
    """fio's own JSON figures of a step's reads."""
    folder = sorted((run / "steps").iterdir())[step - 1]
    (job,) = json.loads((folder / "fio.json").read_text())["jobs"]
    return job["read"]


def _profile(**target: object) -> Profile:
    return Profile(name="t", description="test", targets=[Target(**target)])


def _one(verdicts: pl.DataFrame, limit_name: str, step_index: int = 1) -> dict:
    rows = verdicts.filter(
        (pl.col("limit_name") == limit_name) & (pl.col("step_index") == step_index)
    )
    assert rows.height == 1
    return rows.row(0, named=True)


def test_verdicts_flip_when_the_limit_crosses_the_measured_value(
    drive: DriveAnalysis, run: Path
) -> None:
    fio = _fio_read(run)
    p99_ns = min(fio["clat_ns"]["percentile"]["99.000000"], fio["clat_ns"]["max"])
    measured = judge(drive, _profile(select=READ_4K, latency_ms={"p99": 1e3}, min_iops=1))
    assert _one(measured, "p99")["measured"] == pytest.approx(p99_ns)  # fio's own p99
    assert _one(measured, "min_iops")["measured"] == pytest.approx(fio["iops"])
    assert _one(measured, "p99")["ios"] == fio["total_ios"]
    for factor, verdict in ((1.01, "pass"), (0.99, "fail")):
        profile = _profile(
            select=READ_4K,
            direction="read",
            latency_ms={"p99": p99_ns / 1e6 * factor, "max": fio["clat_ns"]["max"] / 1e6 * factor},
            min_iops=fio["iops"] / factor,
        )
        verdicts = judge(drive, profile)
        assert set(verdicts["verdict"]) == {verdict}
        # the 70/30 mix not matched
        assert set(verdicts["step"]) == {"4K random read at QD1 (randread-4k)"}
        assert passed(verdicts) is (verdict == "pass")


def test_selectors_match_by_workload_and_directions(drive: DriveAnalysis) -> None:
    mixes = judge(drive, _profile(select={"read_pct": [1, 99]}, latency_ms={"max": 1e3}))
    assert sorted(mixes["direction"]) == ["read", "write"]
    assert set(mixes["step_index"]) == {2}
    none = judge(drive, _profile(select={"bs": "128k", "qd": [1, 32]}, latency_ms={"max": 1e3}))
    assert none["verdict"].to_list() == ["no matching step"]
    both = judge(drive, _profile(select={"pattern": "random", "jobs": 1}, min_mb_s=1e-6))
    assert both["step_index"].to_list() == [1, 2] and both["direction"].is_null().all()


def test_samples_beyond_each_percentile(drive: DriveAnalysis, run: Path) -> None:
    total = _fio_read(run)["total_ios"]
    deep = ("p99", "p99.99", "p99.99999")
    verdicts = judge(drive, _profile(select=READ_4K, latency_ms=dict.fromkeys(deep, 1e3)))
    for name, p in zip(deep, (99, 99.99, 99.99999), strict=True):
        assert _one(verdicts, name)["samples_beyond"] == pytest.approx(total * (100 - p) / 100)
    assert (
        _one(verdicts, "p99.99999")["samples_beyond"] < 1 < _one(verdicts, "p99")["samples_beyond"]
    )
    section = qos_section(drive, _profile(select=READ_4K, latency_ms=dict.fromkeys(deep, 1e3)))
    (view,) = section.parts
    assert "†" in view.data and "Fewer than 1 I/O beyond: not a settled percentile" in view.data
    assert any("fewer than one I/O beyond" in s for s in section.findings)


def _upper_edge_ns(index: int) -> int:
    """The upper edge of fio 3's latency bin ``index`` (stat.h: 64 bins per power of 2)."""
    if index < 128:
        return index + 1
    error_bits = (index >> 6) - 1
    return (1 << (error_bits + 6)) + ((index % 64) + 1) * (1 << error_bits)


def test_slice_exceedance_matches_a_hand_count_of_the_histogram_log(
    drive: DriveAnalysis, run: Path
) -> None:
    threshold_ms = round(_fio_read(run)["clat_ns"]["percentile"]["90.000000"] / 1e6, 4)
    rule = Exceedance(over_ms={threshold_ms: 50.0}, slice_s=0.25)  # rows come every second
    (log,) = sorted((run / "steps").iterdir())[0].glob("*_clat_hist.*.log")
    totals: dict[int, list[int]] = {}
    rows = [[int(v) for v in line.split(",")] for line in log.read_text().splitlines()]
    first = min(row[0] for row in rows)  # slices count from the step's first interval
    for time_ms, ddir, _bs, *bins in rows:
        if ddir != 0 or not any(bins):  # a row without reads holds no slice
            continue
        end_ms = ((time_ms - first + 10) // 250 + 1) * 250
        over = sum(c for i, c in enumerate(bins) if _upper_edge_ns(i) > threshold_ms * 1e6)
        count = totals.setdefault(end_ms, [0, 0])
        count[0], count[1] = count[0] + over, count[1] + sum(bins)
    found = slice_exceedance(drive, [1], rule)
    column = f"frac_over_{threshold_ms * 1e6:g}ns"
    assert len(totals) >= 2
    assert found["end_ms"].to_list() == sorted(totals)
    assert found["samples"].to_list() == [totals[t][1] for t in sorted(totals)]
    assert found[column].to_list() == pytest.approx([o / n for o, n in totals.values()])
    worst = 100 * max(o / n for o, n in totals.values())
    for limit, verdict in ((worst * 1.01, "pass"), (worst * 0.99, "fail")):
        rule = Exceedance(over_ms={threshold_ms: limit}, slice_s=0.25, min_coverage_pct=0)
        verdicts = judge(drive, _profile(select=READ_4K, exceedance=rule))
        row = _one(verdicts, f"over {threshold_ms:g} ms")
        assert row["measured"] == pytest.approx(worst) and row["verdict"] == verdict


def _logged_ios(log: Path) -> dict[str, int]:
    """I/Os per direction in a histogram log, counted from its rows."""
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines():
        _time, ddir, _bs, *bins = map(int, line.split(","))
        direction = ("read", "write", "trim")[ddir]
        counts[direction] = counts.get(direction, 0) + sum(bins)
    return counts


def test_slices_say_how_much_of_each_step_the_logs_hold(drive: DriveAnalysis, run: Path) -> None:
    rule = Exceedance(over_ms={1e3: 100.0})
    found = slice_exceedance(drive, [1, 2], rule)
    checked = 0
    for index, folder in enumerate(sorted((run / "steps").iterdir()), 1):
        (log,) = folder.glob("*_clat_hist.*.log")
        (job,) = json.loads((folder / "fio.json").read_text())["jobs"]
        for direction, ios in _logged_ios(log).items():
            mine = found.filter(
                (pl.col("step_index") == index) & (pl.col("direction") == direction)
            )
            assert set(mine["ios_in_logs"]) == {ios} == {mine["samples"].sum()}
            total = job[direction]["total_ios"]
            assert set(mine["ios_total"]) == {total}
            assert mine["log_coverage_pct"][0] == pytest.approx(100 * ios / total)
            checked += 1
    assert checked == 3  # the reads, and both directions of the mix


def test_a_partial_log_is_not_judged_unless_a_slice_fails(run: Path, tmp_path: Path) -> None:
    """Step 1's histogram log cut to its first row: the logs hold that row's I/Os alone; below
    the rule's min_coverage_pct a passing exceedance is unknown, a failing one still fails."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (log,) = sorted((copy / "steps").iterdir())[0].glob("*_clat_hist.*.log")
    first = log.read_text().splitlines()[0]
    log.write_text(first + "\n")
    partial = DriveAnalysis(ssdlab.load(copy))
    row = slice_exceedance(partial, [1], Exceedance(over_ms={1e3: 100.0})).row(0, named=True)
    assert row["ios_in_logs"] == sum(map(int, first.split(",")[3:]))
    pct = row["log_coverage_pct"]
    assert pct == pytest.approx(100 * row["ios_in_logs"] / _fio_read(run)["total_ios"])
    for min_pct, verdict in ((pct * 1.001, "unknown"), (pct * 0.999, "pass")):
        rule = Exceedance(over_ms={1e3: 100.0}, min_coverage_pct=min_pct)  # every slice passes
        judged = _one(judge(partial, _profile(select=READ_4K, exceedance=rule)), "over 1000 ms")
        assert judged["verdict"] == verdict and judged["coverage_pct"] == pytest.approx(pct)
        assert judged["measured"] == 0.0
        said = f"hold {pct:.1f} % of the step's I/Os"
        assert (said in judged["note"]) is (verdict == "unknown")
    rule = Exceedance(over_ms={1e3: 100.0, 2e3: 100.0}, min_coverage_pct=pct * 1.001)
    findings = qos_section(partial, _profile(select=READ_4K, exceedance=rule)).findings
    assert any(
        s.startswith("4K random read at QD1 (randread-4k): exceedance not judged on 2 limits")
        and f"hold only {pct:.1f} % of its I/Os" in s
        for s in findings
    )
    every = Exceedance(over_ms={1e-6: 50.0})  # 1 ns: every I/O is over
    failed = _one(judge(partial, _profile(select=READ_4K, exceedance=every)), "over 1e-06 ms")
    assert failed["verdict"] == "fail" and failed["measured"] == 100.0


def test_the_judge_reads_each_histogram_log_once(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading reads every log once (latency_intervals and the bins it keeps); the judge
    reads none again, however many targets and judgments (here two of each) need them."""
    from ssdlab.io import fio_hist

    reads: list[str] = []
    original = fio_hist.read_fio_hist_log

    def counted(path: str | Path) -> tuple[pl.DataFrame, dict]:
        reads.append(str(path))
        return original(path)

    monkeypatch.setattr(fio_hist, "read_fio_hist_log", counted)
    logs = sorted(str(p) for p in run.glob("steps/*/*_clat_hist.*.log"))
    assert len(logs) == 2
    fresh = DriveAnalysis(ssdlab.load(run))
    assert sorted(reads) == logs
    profile = Profile(
        name="t",
        description="two exceedance targets",
        targets=[
            Target(select={"pattern": "random"}, exceedance=Exceedance(over_ms={1: 5.0})),
            Target(select=READ_4K, exceedance=Exceedance(over_ms={8: 1.0}, slice_s=0.5)),
        ],
    )
    judge(fresh, profile)
    qos_section(fresh, profile)
    assert sorted(reads) == logs


def test_the_act_rule_on_an_act_log(act_dir: Path) -> None:
    act = DriveAnalysis(ssdlab.load(act_dir))
    slices = act.results.act_slices
    verdicts = judge(act, "act")
    judged = verdicts.filter(pl.col("target") == "ACT trials")
    assert judged["step"].unique().to_list() == ["ACT trial 1 at 1x"]
    for t in (1, 8, 64):
        row = _one(judged.with_columns(step_index=pl.lit(0)), f"over {t} ms", 0)
        assert row["measured"] == slices[f"pct_over_{t}ms"].max()
    assert set(judged["verdict"]) == {"pass"} and passed(verdicts)
    assert verdicts.filter(pl.col("target") == "Random reads")["verdict"].to_list() == [
        "no matching step"
    ]
    worst = slices["pct_over_1ms"].max()
    for strict, verdict in ((True, "fail"), (False, "pass")):  # ACT: strictly below
        rule = Exceedance(over_ms={1: worst}, slice_s=10, strict=strict)
        got = judge(act, _profile(select={"act": True}, exceedance=rule))
        assert got["verdict"].to_list() == [verdict]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_cli_exit_codes_and_profile_errors(
    run: Path, act_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from ssdlab.cli import main

    def check(results: Path, *options: str | Path) -> tuple[int, str, str]:
        code = main(["qos", "check", str(results), *map(str, options)])
        out, err = capfd.readouterr()
        return code, out, err

    max_ms = _fio_read(run)["clat_ns"]["max"] / 1e6
    target = '[[targets]]\nselect = { pattern = "random", bs = "4k", read_pct = 100 }\n'
    head = 'name = "mine"\ndescription = "test"\n' + target
    good = _write(tmp_path / "good.toml", head + f"latency_ms = {{ max = {max_ms * 1.01} }}\n")
    bad = _write(tmp_path / "bad.toml", head + f"latency_ms = {{ max = {max_ms * 0.99} }}\n")
    code, out, err = check(run, "--profile", good)
    assert code == 0, err
    assert "4K random read at QD1" in out and "pass" in out
    code, out, _ = check(run, "--profile", bad)
    assert code == 1 and "fail" in out
    code, _, err = check(act_dir, "--profile", "hyperscale")
    assert code == 1 and "no step matches any target" in err
    assert check(run)[0] == 2  # no --profile: a usage error
    invalid = _write(tmp_path / "invalid.toml", head + "latency_ms = { p99x = 1 }\n")
    code, _, err = check(run, "--profile", invalid)
    assert code == 1 and str(invalid) in " ".join(err.split())
    assert "targets.0" in err and "p99x" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('min_iops = "fast"\n', "targets.0.min_iops"),
        ("\n", "sets no limit"),
        ("min_iops = 1\nspeed = 2\n", "targets.0.speed"),
        ('min_iops = 1\nselect = { bs = "huge" }\n', "targets.0.select.bs"),
        ("min_iops = 1\nselect = { qd = [32, 1] }\n", "qd: low 32 above high 1"),
        ("min_iops = 1\nselect = { read_pct = 150 }\n", "read_pct 150 is not within 0 to 100"),
        ("min_iops = 1\nselect = { qd = -3 }\n", "qd -3 is not within 1 or more"),
        ("min_iops = inf\n", "targets.0.min_iops: Input should be a finite number"),
        ("latency_ms = { max = 1e12 }\n", "latency_ms.max: 1e+12 ms is over an hour"),
        (
            'latency_ms = { p99 = 5, "p99.9" = 1 }\n',
            "p99.9 (1 ms) is below p99 (5 ms); a deeper percentile is never faster",
        ),
        ('latency_ms = { "p99.99" = 2, max = 1 }\n', "max (1 ms) is below p99.99 (2 ms)"),
    ],
)
def test_an_invalid_profile_names_the_file_and_key(tmp_path: Path, body: str, key: str) -> None:
    path = _write(tmp_path / "p.toml", 'name = "p"\ndescription = "d"\n[[targets]]\n' + body)
    with pytest.raises(InputError, match="invalid QoS profile") as caught:
        load_profile(path)
    assert str(path) in str(caught.value) and key in str(caught.value)
    with pytest.raises(InputError, match="no built-in profile of that name"):
        load_profile(tmp_path / "missing.toml")


def test_the_builtin_profiles_load() -> None:
    hyperscale = load_profile("hyperscale")
    assert hyperscale.targets[0].latency_ms == {"p99": 1.5, "p99.99": 2.5, "p99.99999": 5.0,
                                                "max": 10.0}  # fmt: skip
    assert load_profile("act").targets[0].exceedance.over_ms == {1: 5.0, 8: 1.0, 64: 0.1}


def test_report_with_qos_shows_the_section(run: Path, drive: DriveAnalysis, tmp_path: Path) -> None:
    p99_ms = _fio_read(run)["clat_ns"]["percentile"]["99.000000"] / 1e6
    profile = _write(
        tmp_path / "review.toml",
        'name = "review"\ndescription = "one failing limit"\n[[targets]]\nname = "reads"\n'
        f"select = {{ read_pct = 100 }}\nlatency_ms = {{ p99 = {p99_ms * 0.99} }}\n",
    )
    out = tmp_path / "review.html"
    proc = ssdlab_cli("report", run, "--qos", profile, "-o", out)
    assert proc.returncode == 0, proc.stderr
    soup = BeautifulSoup(out.read_text(), "html.parser")
    (heading,) = [h for h in soup.find_all("h2") if h.get_text().startswith("QoS targets")]
    shown = " ".join(e.get_text(" ") for e in heading.find_all_next(["li", "td"], limit=40))
    assert "4K random read at QD1 (randread-4k) fails p99 ≤" in shown
    assert "QoS profile review" in shown
    # without a profile (a review's QoS cell, or the section given the run alone): one line
    assert qos_section(drive, None).missing.startswith("No QoS profile given")
    assert review.qos_targets_section(drive).missing == qos_section(drive, None).missing
    judged = review.qos_targets_section(QosReview(drive, profile))
    assert judged.findings == qos_section(drive, profile).findings
    proc = ssdlab_cli("report", run, "--qos", tmp_path / "nope.toml", "-o", out)
    assert proc.returncode == 1 and "no built-in profile" in proc.stderr


def test_report_all_cells_compares_unlike_cells(
    run: Path, act_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ssdlab.cli import main
    from ssdlab.report import notebooks

    given: list[dict] = []

    def record(notebook: Path, params: dict, output: Path, **_: object) -> Path:
        given.append(params)
        Path(output).write_text("<html></html>")
        return Path(output)

    monkeypatch.setattr(notebooks, "render_report", record)
    out = tmp_path / "cmp.html"
    twin = tmp_path / "twin"  # the same cells: something to compare (an ACT run has none)
    shutil.copytree(run, twin)
    assert main(["report", str(run), str(twin), "-o", str(out)]) == 0
    assert main(["report", str(run), str(twin), "--all-cells", "-o", str(out)]) == 0
    assert [p["like_for_like"] for p in given] == [True, False]
    assert main(["report", str(run), "--all-cells", "-o", str(out)]) == 1
    assert main(["report", str(run), str(act_dir), "--qos", "act", "-o", str(out)]) == 1


def test_batch_checks_the_qos_profile_before_rendering(run: Path, tmp_path: Path) -> None:
    from ssdlab.report.batch import run_batch

    with pytest.raises(InputError, match="no built-in profile of that name"):
        run_batch(run.parent, tmp_path / "site", qos="no-such-profile")
    assert not (tmp_path / "site").exists()


def test_a_step_shorter_than_one_log_interval_says_so(tmp_path: Path) -> None:
    """Histogram logs exist but hold no row (fio writes one per 1 s interval): the verdict is
    unknown, and says why rather than "no histogram log"."""
    short = run_suite_text(
        tmp_path,
        'name = "short"\n[defaults]\nioengine = "null"\nsize = "64m"\nruntime_s = 0.6\n'
        '[[steps]]\nname = "r"\nrw = "randread"\n',
        "short",
    )
    assert all(log.stat().st_size == 0 for log in short.glob("steps/*/*_clat_hist.*.log"))
    verdicts = judge(DriveAnalysis(ssdlab.load(short)), load_profile("act"))
    (note,) = set(verdicts.filter(pl.col("verdict") == "unknown")["note"])
    said = r"no histogram-log interval: the step ran 0\.\d+ s, under one log interval \(1 s\)"
    assert re.fullmatch(said, note)
