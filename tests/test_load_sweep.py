"""Load sweeps (latency against offered load) and the SNIA DIRTH grid: the suite construct and
its errors, rates split per job and recorded, a resume reusing them, a rate that cannot be
reached marked, the figures recomputed from fio's JSON, the sections, and the built-in
``latency-load`` and ``snia-dirth`` suites at tiny scale. Real fio runs on temporary files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

from ssdlab.analysis.drive import DriveAnalysis
from ssdlab.analysis.load import dirth, load_sweeps
from ssdlab.analysis.workloads import classify
from ssdlab.errors import SuiteError
from ssdlab.estimate import RUN_START_S, STEP_START_S, Rates, suite_seconds
from ssdlab.importer import import_results
from ssdlab.results import load
from ssdlab.review.compare import Comparison
from ssdlab.review.load import compare_load_section, dirth_section, load_section
from ssdlab.suite import Suite, Sweep, load_suite, parse_suite, split_rate

SWEEP_SUITE = """
name = "sweep"

[params]
fractions = [0.25, 0.5]

[defaults]
runtime_s = 2
size = "16m"
ioengine = "psync"

[[steps]]
name = "load-mix"
sweep = { fractions = "@fractions" }
rw = "randrw"
rwmixread = 70
numjobs = 3

[[steps]]
name = "load-given"
sweep = { fractions = [0.5], max_iops = 50000000, unlimited = false }
rw = "randread"
numjobs = 2
"""


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def records(out: Path) -> dict[str, dict]:
    return {s["name"]: s for s in manifest(out)["steps"]}


def job_text(out: Path, record: dict) -> str:
    return (out / "steps" / record["dir"] / "job.fio").read_text()


def option(text: str, name: str) -> str:
    found = re.search(rf"^{name}=(.*)$", text, re.M)
    assert found, f"{name} not in job file"
    return found[1]


# -- the construct ---------------------------------------------------------------------------


def _suite(tmp_path: Path, text: str, **params: object):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_suite(path, dict(params) or None)


def test_sweep_expands_plans_scales_and_serialises(tmp_path: Path) -> None:
    suite = _suite(tmp_path, SWEEP_SUITE)
    mix, given = suite.steps
    assert isinstance(mix, Sweep) and isinstance(given, Sweep)
    assert mix.names == ["load-mix-max", "load-mix-25pct", "load-mix-50pct", "load-mix-unlimited"]
    assert given.names == ["load-given-50pct"]  # a given maximum: nothing measures it
    assert suite.max_steps == 5
    rates = Rates.of(None)  # every run of a sweep planned at its workload's time
    assert suite_seconds(suite, rates) == suite_seconds(suite, rates, most=False)
    assert suite_seconds(suite, rates) == pytest.approx(5 * (2 + STEP_START_S))
    assert [s.name for s in suite.all_steps()] == ["load-mix", "load-given"]
    assert suite.scaled(0.25).steps[0].workload.runtime_s == 0.5
    # as the manifest records it, and back (a resume compares the definitions)
    again = Suite.model_validate(suite.model_dump(mode="json"))
    assert again == suite and isinstance(again.steps[0], Sweep)
    smaller = _suite(tmp_path, SWEEP_SUITE, fractions=[0.1, 0.2, 0.3])
    assert smaller.steps[0].names[1:4] == ["load-mix-10pct", "load-mix-20pct", "load-mix-30pct"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fractions": [0.5, 1.5]}, r"--set fractions=\[0.5, 1.5\].*fraction 1.5 is not a share"),
        ({"fractions": [0.5, 0.5]}, r"fraction 50 % is given twice"),
        ({"fractions": []}, r"fractions"),
    ],
)
def test_sweep_params_are_checked(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        _suite(tmp_path, SWEEP_SUITE, **change)


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ('rw = "randread"\noptions = { rate_iops = 100 }', "a load sweep sets the rate"),
        ('rw = "randread"\noptions = { rate_process = "poisson" }', "a load sweep sets the rate"),
        ('rw = "randtrim"', "cannot be rate-limited"),
        ('rw = "randread"\nloops = 1', "time-based"),
        ('rw = "randread"\nsweep = { fractions = [0.5], reach = 1.5 }', "reach"),
        ('rw = "randread"\nsweep = { fractions = [0.5], speed = 1 }', "speed"),
        ('rw = "randread"\nsweep = "fast"', "sweep must be a table"),
    ],
)
def test_invalid_sweeps_give_one_line(tmp_path: Path, step: str, message: str) -> None:
    sweep = "" if "sweep =" in step else "sweep = { fractions = [0.5] }\n"
    text = f'name = "x"\n[[steps]]\nname = "s"\nruntime_s = 1\n{sweep}{step}\n'
    with pytest.raises(SuiteError, match=message) as err:
        _suite(tmp_path, text)
    assert "\n" not in str(err.value)


def test_sweep_step_names_cannot_collide_and_sweeps_stay_out_of_rounds(tmp_path: Path) -> None:
    clash = 'name = "x"\n[[steps]]\nname = "s"\nrw = "read"\nruntime_s = 1\n'
    clash += '[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\nsweep = { fractions = [0.5] }\n'
    clash += '[[steps]]\nname = "a-50pct"\nrw = "read"\nruntime_s = 1\n'
    with pytest.raises(SuiteError, match="'a-50pct' is used twice"):
        _suite(tmp_path, clash)
    nested = (
        'name = "x"\n[[steps]]\nname = "b"\nrounds = { track = "r" }\n[[steps.steps]]\n'
        'name = "r"\nrw = "read"\nruntime_s = 1\nsweep = { fractions = [0.5] }\n'
    )
    with pytest.raises(SuiteError, match="cannot be load sweeps"):
        _suite(tmp_path, nested)


def test_rates_split_per_job_and_direction() -> None:
    step = {"name": "a", "rw": "randrw", "rwmixread": 70, "numjobs": 3, "runtime_s": 1}
    suite = parse_suite({"name": "x", "steps": [step]}, Path("x.toml"))
    mix = suite.steps[0]
    split = split_rate(1000, mix)
    assert (split.read_per_job, split.write_per_job) == (233, 100)  # 700/3, 300/3 rounded
    assert split.option == "233,100" and split.requested_iops == 999
    read = mix.model_copy(update={"rw": "randread", "rwmixread": None, "numjobs": 4})
    assert split_rate(1002, read).option == "250" and split_rate(1002, read).requested_iops == 1000
    write = mix.model_copy(update={"rw": "randwrite", "rwmixread": None, "numjobs": 2})
    assert split_rate(10, write).option == ",5"
    assert split_rate(0.1, write).option == ",1"  # never 0: fio reads 0 as no limit


def test_rounding_that_moves_the_load_is_said() -> None:
    step = {"name": "a", "rw": "randread", "numjobs": 16, "runtime_s": 1}
    read = parse_suite({"name": "x", "steps": [step]}, Path("x.toml")).steps[0]
    low = split_rate(25, read)  # 10 % of 250 IOPS over 16 jobs: 1.5625 per job
    assert low.option == "2" and low.requested_iops == 32 and low.raised == ()
    assert low.offered_change_pct == pytest.approx(28.0)
    assert low.rounding_problem().startswith("16 job(s) x rate_iops=2 offer 32 IOPS, +28.0 %")
    assert split_rate(16_000, read).rounding_problem() is None  # 1000 per job, exact
    assert split_rate(16_150, read).rounding_problem() is None  # 1009 per job: -0.03 %
    mix = read.model_copy(update={"rw": "randrw", "rwmixread": 97, "numjobs": 4})
    raised = split_rate(11, mix)  # writes 0.0825 per job: 0 would be no limit at all
    assert raised.option == "3,1" and raised.raised == ("write",)
    assert "write raised from 0 to 1 IOPS per job" in raised.rounding_problem()


LOW_SUITE = """
name = "low"

[defaults]
runtime_s = 1
size = "4m"
ioengine = "psync"

[[steps]]
name = "load-low"
sweep = { fractions = [0.5], max_iops = 22, unlimited = false }
rw = "randrw"
rwmixread = 97
numjobs = 4
"""


def test_a_rounded_rate_is_recorded_said_and_marked(tmp_path: Path) -> None:
    """A sweep step at 11 IOPS over 4 jobs of a 97/3 mix: rate_iops=3,1 offers 16 IOPS. The
    manifest records the 16 offered (what 'reached' compares with) and why, the run says it,
    the job file and the review mark it."""
    (tmp_path / "low.toml").write_text(LOW_SUITE)
    out = tmp_path / "run"
    proc = ssdlab_cli("run", tmp_path / "low.toml", "--out", out)
    assert proc.returncode == 0, proc.stderr
    record = records(out)["load-low-50pct"]
    point = record["load"]
    assert point["target_iops"] == 11 and point["requested_iops"] == 16
    assert option(job_text(out, record), "rate_iops") == point["rate_iops"] == "3,1"
    workload = load_suite(tmp_path / "low.toml").steps[0].workload
    said = split_rate(11, workload).rounding_problem()
    assert point["rounding"] == said and said.startswith("4 job(s) x rate_iops=3,1 offer 16 IOPS")
    assert record["notes"][0] == f"rate rounded: {said}"
    assert f"load-low-50pct: ROUNDED rate: {said}" in proc.stdout + proc.stderr
    assert f"ROUNDED: {said}" in job_text(out, record).splitlines()[0]
    results = load(out)
    (row,) = load_sweeps(results).points.iter_rows(named=True)
    assert row["rounding"] == said and row["requested_iops"] == 16 and row["target_iops"] == 11
    assert row["reached"] == (row["achieved_iops"] >= 0.97 * 16)
    section = load_section(DriveAnalysis(results))
    assert any(
        s.startswith("load-low-50pct offers 16 IOPS, +45.5 % off the 11 IOPS asked")
        for s in section.findings
    )
    assert "(ROUNDED +45.5 %)" in section.parts[1].data


# -- a run -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    suite = root / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    out = root / "run"
    proc = ssdlab_cli("run", suite, "--out", out, "--scale", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert "MISSED its rate" in proc.stdout + proc.stderr
    return out


def test_rates_are_recorded_and_split_per_job(sweep_run: Path) -> None:
    steps = records(sweep_run)
    assert list(steps) == [
        "load-mix-max", "load-mix-25pct", "load-mix-50pct", "load-mix-unlimited",
        "load-given-50pct",
    ]  # fmt: skip
    measured = steps["load-mix-max"]["load"]
    assert measured["role"] == "max" and measured["achieved_iops"] > 0
    assert "rate_iops" not in job_text(sweep_run, steps["load-mix-max"])
    for name, fraction in [("load-mix-25pct", 0.25), ("load-mix-50pct", 0.5)]:
        record = steps[name]
        point, text = record["load"], job_text(sweep_run, record)
        assert record["block"] == "load-mix" and point["role"] == "rate"
        assert point["max_iops"] == measured["achieved_iops"] and point["max_from"] == "measured"
        assert point["fraction"] == fraction and point["numjobs"] == 3
        read, write = map(int, option(text, "rate_iops").split(","))
        assert point["rate_iops"] == f"{read},{write}"
        target = fraction * measured["achieved_iops"]
        assert read == round(target * 0.7 / 3) and write == round(target * 0.3 / 3)
        assert option(text, "numjobs") == "3"
        assert point["requested_iops"] == 3 * (read + write)  # the jobs add up to it
        header = text.splitlines()[0]
        assert f"rate {point['requested_iops']:.0f} IOPS requested = 3 job(s)" in header
        assert "rounded to whole IOPS" in header
        assert record["workload"]["options"]["rate_iops"] == point["rate_iops"]
    assert steps["load-mix-unlimited"]["load"]["role"] == "unlimited"
    assert "rate_iops" not in job_text(sweep_run, steps["load-mix-unlimited"])


def test_an_unreachable_rate_is_marked(sweep_run: Path) -> None:
    record = records(sweep_run)["load-given-50pct"]
    point = record["load"]
    assert point["max_from"] == "given" and point["requested_iops"] == 25_000_000
    assert option(job_text(sweep_run, record), "rate_iops") == "12500000"  # per job of 2
    assert point["reached"] is False and point["achieved_iops"] < 0.97 * 25_000_000
    assert any(n.startswith("missed its rate") for n in record["notes"])
    assert records(sweep_run)["load-mix-max"]["load"]["reached"] is None


def _percentile(bins: dict[float, int], p: float) -> float:
    """fio's rule, written out: the first bin whose cumulative count reaches p % of all."""
    total, seen = sum(bins.values()), 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= p / 100 * total:
            return value
    raise AssertionError("no bins")


def test_figures_match_fio_json(sweep_run: Path) -> None:
    results = load(sweep_run)
    sweeps = load_sweeps(results)
    points = sweeps.points
    assert points["step"].to_list() == list(records(sweep_run))
    for row in points.iter_rows(named=True):
        record = records(sweep_run)[row["step"]]
        fio = json.loads((sweep_run / "steps" / record["dir"] / "fio.json").read_text())
        iops, bins, top = 0.0, {}, 0.0
        for job in fio["jobs"]:
            for direction in ("read", "write"):
                part = job[direction]
                iops += part["iops"]
                top = max(top, part["clat_ns"]["max"])
                for value, n in part["clat_ns"].get("bins", {}).items():
                    bins[float(value)] = bins.get(float(value), 0) + n
        assert row["achieved_iops"] == pytest.approx(iops)
        for column, p in [("lat_p50_ns", 50), ("lat_p99_ns", 99), ("lat_p99_99_ns", 99.99)]:
            assert row[column] == pytest.approx(min(_percentile(bins, p), top))
        assert row["ios"] == sum(bins.values())
        if row["role"] == "rate":
            assert row["requested_iops"] == record["load"]["requested_iops"]
            assert row["reached"] == (iops >= 0.97 * row["requested_iops"])
            assert row["reached"] == record["load"]["reached"]
        else:
            assert row["requested_iops"] is None and row["reached"] is None
    mix = sweeps.sweeps.filter(pl.col("sweep") == "load-mix").row(0, named=True)
    mine = points.filter(pl.col("sweep") == "load-mix")
    assert mix["missed"] == mine.filter(pl.col("reached").not_())["step"].to_list()
    assert mix["steps"] == 4  # whether a rate was reached depends on the machine's load
    under = points.filter((pl.col("sweep") == "load-mix") & pl.col("under_limit"))
    assert mix["qos_iops"] == (under["achieved_iops"].max() if under.height else None)
    given = sweeps.sweeps.filter(pl.col("sweep") == "load-given").row(0, named=True)
    assert given["missed"] == ["load-given-50pct"]


def test_sections_show_sweeps_or_say_what_is_missing(sweep_run: Path, tiny_run: Path) -> None:
    results = load(sweep_run)
    section = load_section(DriveAnalysis(results))
    assert section.missing is None and len(section.parts) == 2
    text = " ".join(section.findings)
    assert "load-given-50pct missed its rate" in text and "p99.99" in text
    section.parts[0].to_json()  # a valid chart
    assert section.parts[0].data.height <= 3 * 5  # aggregated: 3 percentiles per step
    assert dirth_section(DriveAnalysis(results)).missing.startswith("No demand-intensity grid")
    other = DriveAnalysis(load(tiny_run))
    assert load_section(other).missing.startswith("No load sweeps")
    both = Comparison([results, load(tiny_run)], ["A", "B"], "A")
    compared = compare_load_section(both)
    assert compared.missing is None and compared.findings
    compared.parts[0].to_json()
    none = Comparison([load(tiny_run)], ["B"], "B")
    assert compare_load_section(none).missing.startswith("No drive has load sweeps")


def test_a_resumed_run_reuses_the_recorded_rates(sweep_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(sweep_run, out)
    data = manifest(out)
    steps = {s["name"]: s for s in data["steps"]}
    kept = steps["load-mix-50pct"]["load"]["rate_iops"]
    # the 50 % step was interrupted; had the maximum changed, new rates would differ
    steps["load-mix-50pct"]["status"] = "interrupted"
    data["status"] = "interrupted"
    (out / "manifest.json").write_text(json.dumps(data))
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    first = {n: (out / "steps" / s["dir"] / "fio.json").stat().st_mtime_ns for n, s in
             steps.items()}  # fmt: skip
    proc = ssdlab_cli("run", suite, "--out", out, "--scale", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert "resuming at step 3 of 5" in proc.stdout + proc.stderr
    after = records(out)
    assert list(after) == list(steps)  # no step added
    assert after["load-mix-50pct"]["status"] == "ok"
    assert after["load-mix-50pct"]["load"]["rate_iops"] == kept
    assert option(job_text(out, after["load-mix-50pct"]), "rate_iops") == kept
    again = {n: (out / "steps" / s["dir"] / "fio.json").stat().st_mtime_ns for n, s in
             after.items()}  # fmt: skip
    assert [n for n in steps if again[n] != first[n]] == ["load-mix-50pct"]


def test_a_resume_keeps_rates_even_when_the_maximum_reads_otherwise(
    sweep_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    shutil.copytree(sweep_run, out)
    data = manifest(out)
    steps = {s["name"]: s for s in data["steps"]}
    kept = steps["load-mix-25pct"]["load"]["rate_iops"]
    steps["load-mix-max"]["load"]["achieved_iops"] *= 10  # what a re-measure could give
    steps["load-mix-25pct"]["status"] = "failed"
    (out / "manifest.json").write_text(json.dumps(data))
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    proc = ssdlab_cli("run", suite, "--out", out, "--scale", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert option(job_text(out, records(out)["load-mix-25pct"]), "rate_iops") == kept


def test_plan_shows_a_sweep_and_checks_its_jobs(tmp_path: Path) -> None:
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    proc = ssdlab_cli("plan", suite, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    # 10 s of fio time, each fio run's start and the run's own (estimate.*_START_S)
    seconds = round(10 + 5 * STEP_START_S + RUN_START_S)
    assert f"5 fio runs, planned {timedelta(seconds=seconds)}" in proc.stdout
    assert "load-mix: load sweep at 25, 50 % of the IOPS its first, unlimited step" in (proc.stdout)
    assert "load-given: load sweep at 50 % of 50,000,000 IOPS (given)" in proc.stdout
    # the measuring step and one rate-limited step per sweep (none measures load-given)
    assert "fio --parse-only: 3 job files ok" in proc.stdout
    assert not (tmp_path / "out").exists()


# -- the built-in suites ---------------------------------------------------------------------


def test_builtin_suites_parse_with_their_parameters() -> None:
    suite = load_suite("latency-load")
    sweeps = [item for item in suite.steps if isinstance(item, Sweep)]
    assert [s.name for s in sweeps] == ["load-randread-4k", "load-randrw70-4k",
                                        "load-randwrite-4k"]  # fmt: skip
    assert all(len(s.names) == 12 for s in sweeps)  # max, 10 rates, unlimited
    assert {(s.workload.numjobs, s.workload.iodepth) for s in sweeps} == {(4, 32)}
    small = load_suite("latency-load", {"fractions": [0.5, 1.0], "threads": 2, "unlimited": False})
    assert small.sweeps[0].names == ["load-randread-4k-max", "load-randread-4k-50pct",
                                                  "load-randread-4k-100pct"]  # fmt: skip
    dirth_suite = load_suite("snia-dirth")
    grid = [s for s in dirth_suite.steps if s.name.startswith("dirth-t")]
    assert len(grid) == 36 and grid[0].name == "dirth-t32-q32" and grid[-1].name == "dirth-t1-q1"
    assert {(s.bs, s.rw, s.rwmixread) for s in grid} == {("8k", "randrw", 65)}
    reduced = load_suite("snia-dirth", {"threads": [2, 1], "qd_list": [4, 1]})
    assert [s.name for s in reduced.steps if s.name.startswith("dirth-t")] == [
        "dirth-t2-q4", "dirth-t2-q1", "dirth-t1-q4", "dirth-t1-q1",
    ]  # fmt: skip


def test_latency_load_runs_at_tiny_scale(tmp_path: Path) -> None:
    out = tmp_path / "ll"
    proc = ssdlab_cli(
        "run", "latency-load", "--out", out, "--scale", "0.01", "--set", "ioengine=psync",
        "--set", "fractions=[0.5,1.0]", "--set", "threads=2", "--set", "qd=1",
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    steps = records(out)
    assert len(steps) == 1 + 3 * 4
    assert option(job_text(out, steps["load-randwrite-4k-50pct"]), "rate_iops").startswith(",")
    section = load_section(DriveAnalysis(load(out)))
    assert section.missing is None
    assert len(load_sweeps(load(out)).sweeps) == 3


def test_snia_dirth_runs_reduced_at_tiny_scale(tmp_path: Path) -> None:
    out = tmp_path / "dirth"
    proc = ssdlab_cli(
        "run", "snia-dirth", "--out", out, "--scale", "0.01", "--set", "ioengine=psync",
        "--set", "threads=[2,1]", "--set", "qd_list=[2,1]", "--set", "ss_threads=2",
        "--set", "ss_qd=2", "--set", "max_rounds=5",
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = load(out)
    found = dirth(results)
    assert sorted(zip(found.cells["threads"], found.cells["qd"], strict=True)) == [
        (1, 1), (1, 2), (2, 1), (2, 2),
    ]  # fmt: skip
    assert found.point is not None
    under = found.cells.filter(pl.col("art_ns") < found.ceiling_ns)
    assert found.point["iops"] == under["iops"].max()
    assert found.histogram["count"].sum() == found.point["ios"]
    for row in found.cells.iter_rows(named=True):
        fio = json.loads(
            (out / "steps" / records(out)[row["step"]]["dir"] / "fio.json").read_text()
        )
        ios = sum(p["total_ios"] for j in fio["jobs"] for p in (j["read"], j["write"]))
        lat = sum(
            p["clat_ns"]["mean"] * p["iops"] for j in fio["jobs"] for p in (j["read"], j["write"])
        )
        iops = sum(p["iops"] for j in fio["jobs"] for p in (j["read"], j["write"]))
        assert row["iops"] == pytest.approx(iops)
        assert row["art_ns"] == pytest.approx(lat / iops)
        assert row["ios"] == pytest.approx(ios, rel=0.02)
    section = dirth_section(DriveAnalysis(results))
    assert section.missing is None and "Operating point T" in " ".join(section.findings)
    for part in section.charts:
        part.to_json()
    assert load_section(DriveAnalysis(results)).missing.startswith("No load sweeps")


def test_a_mix_without_rwmixread_is_fios_50_50_everywhere(tmp_path: Path) -> None:
    """fio runs a randrw job that sets no rwmixread 50/50: the DIRTH grid of such jobs
    (imported, as a user's own fio outputs) is labelled so, as classify labels them, not as
    writes."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for jobs, depth in [(1, 1), (1, 2), (2, 1), (2, 2)]:
        subprocess.run(
            ["fio", "--name=mix", "--ioengine=null", "--size=1m", "--rw=randrw",
             f"--numjobs={jobs}", f"--iodepth={depth}", "--output-format=json+",
             f"--output={tree / f'mix-{jobs}-{depth}.json'}"],
            check=True, capture_output=True,
        )  # fmt: skip
    import_results([tree], tmp_path / "imported")
    results = load(tmp_path / "imported")
    assert set(results.summary["rwmixread"]) == {50}
    cells = dirth(results).cells
    assert cells.height == 4 and set(cells["workload"]) == {"4K random 50/50"}
    assert set(classify(results.summary)["workload"]) == {"4K random 50/50"}


def test_the_knee_is_the_last_load_before_p99_doubles_and_none_when_it_never_does() -> None:
    from ssdlab.analysis.load import knee

    def points(p99: list[float]) -> pl.DataFrame:
        return pl.DataFrame(
            {"achieved_iops": [1000.0 * (i + 1) for i in range(len(p99))], "lat_p99_ns": p99}
        )

    found = knee(points([100.0, 110.0, 150.0, 201.0, 900.0]))
    assert found is not None and found["achieved_iops"] == 3000.0  # 201 > 2 x 100 at 4000
    assert knee(points([100.0, 130.0, 190.0, 200.0])) is None  # never above 2x: no knee
