"""Findings: the sentence grammar (workload phrases, quantities, ratios) and every finding
sentence of every built-in suite's output.

Each built-in suite runs here at a tiny scale with fio's null engine (no device time; the
same shapes as a real run: QD sweeps, jobs x QD, mix sweeps, SNIA round blocks, write
saturation), beside ACT (native logs imported and a fio trial). Every sentence the findings
functions write for their drive reviews and for comparisons of them is collected and checked:
no ``nan``/``None``, every number carries a unit or is a ratio, no doubled words, no "1
steps", every workload phrase parses and every mix named is one the data has.
"""

from __future__ import annotations

import re
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest
import screens
from conftest import ssdlab_cli

import ssdlab
from ssdlab import findings, phrases
from ssdlab.analysis import DriveAnalysis
from ssdlab.report import chromium
from ssdlab.review import act_findings, compare, drive

FIXTURES = Path(__file__).parent / "fixtures" / "act"
NULL = ["--set", "ioengine=null", "--set", "span=6g", "--target-size", "64m", "--scale", "0.01"]
FAST_ROUNDS = ["--set", "max_rounds=5", "--set", "cell_s=50"]
UNSCALED = ["--set", "ioengine=null", "--target-size", "64m", "--set", "span=48m"]
#: every built-in suite, shrunk: name -> ssdlab run arguments after the suite
SUITES: dict[str, list[str]] = {
    "quick": ["--scale", "0.05", "--target-size", "64m"],
    "enterprise-review": [
        *NULL, "--set", "qd_list=[1,4]", "--set", "mix_reads=[100,65,0]",
        "--set", "consistency_s=600", "--set", 'bs_list=["4k","128k"]',
    ],
    "snia-iops": [
        *NULL, *FAST_ROUNDS, "--set", "mixes=[100,65,0]", "--set", 'block_sizes=["128k","4k"]',
        "--set", "threads=2", "--set", "qd=4",
    ],
    "snia-latency": [*NULL, *FAST_ROUNDS, "--set", 'block_sizes=["512","4k"]'],
    "snia-throughput": [*NULL, *FAST_ROUNDS, "--set", "threads=2"],
    "snia-wsat": [*NULL, "--set", "threads=2", "--set", "qd=4"],
    "latency-load": [*NULL, "--set", "fractions=[0.5,1.0]", "--set", "threads=1", "--set", "qd=4"],
    "snia-dirth": [
        *NULL, *FAST_ROUNDS, "--set", "threads=[2,1]", "--set", "qd_list=[2,1]",
        "--set", "ss_threads=2", "--set", "ss_qd=2",
    ],
    "jesd219-enterprise": [*NULL, "--set", "segments=2", "--set", "qd=4"],
    # waits and bursts are seconds fio sleeps: not scaled, set short
    "snia-hir": [
        *UNSCALED, "--set", "threads=1", "--set", "qd=1", "--set", "max_s=1",
        "--set", "baseline_s=2", "--set", "segment_s=3", "--set", "return_s=1.5",
        "--set", "burst_s=1", *(arg for n in range(1, 6) for arg in ("--set", f"wait{n}=1s")),
    ],
    "snia-xsr": [
        *UNSCALED, "--set", "seq_s=2.5", "--set", "rand_s=2.5", "--set", "rand_threads=1",
        "--set", "qd=1",
    ],
    "fill": [
        *UNSCALED, "--set", "qd=1", "--set", "rate=16m", "--set", "idle_s=1",
        "--set", "recovery_s=2",
    ],
}  # fmt: skip
QUICK_NULL = 'name = "quick"\ninclude = "quick"\n[defaults]\nioengine = "null"\n'
ACT_CAPPED = [
    *("--duration", "2", "--slice", "1", "--hist-msec", "250"),
    *("--set", "read-reqs-per-sec=100", "--set", "write-reqs-per-sec=50"),
    *("--small-read-jobs", "1", "--ioengine", "null", "--fio-option", "thinktime=6500"),
    *("--max-lag", "0.12"),
]


# -- the grammar -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (("random", 4096, 100, 1, 1), "4K random read at QD1"),
        (("random", 4096, 0, 32, 1), "4K random write at QD32"),
        (("random", 4096, 70, 32, 1), "4K random 70/30 at QD32"),
        (("sequential", 2**20, 0, 32, 4), "1M sequential write at QD128 (4 jobs x QD32)"),
        (("random", 512, 65, 1, 1), "512B random 65/35 at QD1"),
        (("random", 4096, None, 4, 1), "4K random mixes at QD4"),
        (("sequential", 131072, 100, None, 1), "128K sequential read"),
    ],
)
def test_workload_phrases_are_built_and_parse_back(args: tuple, phrase: str) -> None:
    assert phrases.workload_phrase(*args) == phrase
    parsed = phrases.parse_workload(phrase)
    assert parsed is not None
    pattern, bs, share, depth, jobs = args
    assert (parsed.pattern, parsed.bs_bytes, parsed.read_pct) == (pattern, bs, share)
    assert parsed.iodepth == depth and (depth is None or parsed.numjobs == jobs)


def test_labels_are_rephrased_and_bad_phrases_refused() -> None:
    assert phrases.rephrase("4K random write QD1") == "4K random write at QD1"
    assert phrases.rephrase("1M sequential write QD128 (4 × 32)") == (
        "1M sequential write at QD128 (4 jobs x QD32)"
    )
    assert phrases.rephrase("4K random 70/30 QD32 · read") == "4K random 70/30 at QD32, reads"
    assert phrases.rephrase("fill-seq-write") == "fill-seq-write"
    assert phrases.parse_qd("QD128 (4 × 32)") == (32, 4)
    assert phrases.parse_qd("QD100 (4 jobs x QD32)") is None  # 4 x 32 is not 100
    for bad in ("4K random 70/20 at QD1", "4K random QD32", "4K random read at 32", "4K read"):
        assert phrases.parse_workload(bad) is None, bad


def test_quantities_carry_units_and_ratios_read_as_reviews_write_them() -> None:
    assert findings.format_value(3633.6, "MB/s") == "3,633.6 MB/s"
    assert findings.format_value(106_000, "ns") == "106 µs"
    assert findings.format_value(11_233.4, "IOPS") == "11,233 IOPS"
    assert findings.format_value(2, "x") == "2x"
    assert findings.format_value(1.352, "%") == "1.35 %"
    assert [findings.ratio_phrase(r) for r in (1.18, 2.1, 10.4, 104.2)] == [
        "18 %",
        "2.1x",
        "10x",
        "104x",
    ]


def test_steady_state_attaches_the_unit_to_the_number() -> None:
    determination = {
        "rounds_run": 7,
        "steady": True,
        "reason": "",
        "mean": 106.0,
        "data_excursion": 3.0,
        "slope_excursion": 1.0,
    }
    sentence = findings.steady_state(determination, [3, 4, 5, 6, 7], "4K random write QD1 µs")
    assert sentence.startswith(
        "Latency of 4K random write at QD1 reached steady state after 7 rounds: rounds 3-7 "
        "average 106 µs, with a data excursion of 2.8 %"
    )
    wide = findings.steady_state(
        determination | {"mean": 3634.0},
        [3, 4, 5, 6, 7],
        "1M sequential write QD128 (4 × 32) throughput (MB/s)",
    )
    assert wide.startswith(
        "Throughput of 1M sequential write at QD128 (4 jobs x QD32) reached steady state"
    )
    assert "average 3,634 MB/s" in wide
    one = findings.steady_state(
        {"rounds_run": 1, "steady": False, "reason": "too few rounds"},
        [],
        "4K random read QD1 IOPS",
    )
    assert one == "IOPS of 4K random read at QD1 was not steady after 1 round: too few rounds."


def test_mix_sweeps_name_the_mix_they_have() -> None:
    sweeps = pl.DataFrame(
        {
            "sweep": ["512B random QD1"],
            "metric": ["IOPS"],
            "avg": [11_233.0],
            "at_70_30": [None],
            "low": [9_000.0],
            "low_read_pct": [0],
            "steps": [3],
        },
        schema_overrides={"at_70_30": pl.Float64},
    )
    (without,) = findings.mix_sweeps(sweeps)
    assert without == (
        "512B random mixes at QD1 average 11,233 IOPS over 3 read/write mixes; the lowest is "
        "9,000 IOPS at 0/100."
    )
    steps = pl.DataFrame(
        {"sweep": ["512B random QD1"] * 3, "read_pct": [100, 65, 0], "value": [13e3, 11e3, 9e3]}
    )
    (named,) = findings.mix_sweeps(sweeps, steps)
    assert "over 3 read/write mixes (100/0, 65/35, 0/100); 65/35 reaches 11,000 IOPS" in named


def test_rivals_list_wins_and_deficits_per_rival() -> None:
    rows = [
        ("B", "4K random 70/30 at QD32", "IOPS", "IOPS", True, 350.0, 36_393.0),
        ("B", "4K random read at QD1", "p99.99 latency", "ns", False, 1.2e6, 106e3),
        ("B", "4K random read at QD32", "IOPS", "IOPS", True, 52_345.0, 24_668.0),
        ("B", "128K sequential read at QD32", "MB/s", "MB/s", True, 2000.0, 1990.0),
        ("C", "4K random read at QD32", "IOPS", "IOPS", True, 52_345.0, 52_000.0),
    ]
    frame = pl.DataFrame(
        rows,
        schema=["rival", "item", "measure", "metric", "higher_is_better", "value", "rival_value"],
        orient="row",
    )
    assert findings.rivals(frame, "A") == [
        "Against B, A's largest deficits: 104x lower IOPS in 4K random 70/30 at QD32 (350 IOPS "
        "vs 36,393 IOPS); 11x worse p99.99 latency in 4K random read at QD1 (1.2 ms vs 106 µs).",
        "Against B, A's largest win: 2.1x higher IOPS in 4K random read at QD32 (52,345 IOPS vs "
        "24,668 IOPS).",
        "A and C are within 5 % of each other in all 1 like-for-like measurement.",
    ]


def test_a_drive_is_never_compared_with_itself() -> None:
    scores = pl.DataFrame(
        {
            "test": ["ACT score"] * 3,
            "drive": ["Drive A ACT", "Drive A ACT", "Drive B ACT"],
            "value": [2.0, 1.0, 1.0],
            "metric": ["x"] * 3,
            "higher_is_better": [True] * 3,
        }
    )
    (sentence,) = findings.leads(scores)
    assert sentence == "Drive A ACT leads Drive B ACT by 2.0x in ACT score (2x vs 1x)."
    assert findings.leads(scores.filter(pl.col("drive") == "Drive A ACT")) == []


# -- every built-in suite's sentences ----------------------------------------------------------


def _run_all(work: Path) -> dict[str, Path]:
    """Every built-in suite (and a second quick run), at once; ACT beside them."""
    (work / "quick.toml").write_text(QUICK_NULL)
    outs, procs = {}, []
    jobs = {
        name: (name if name != "quick" else work / "quick.toml", args)
        for name, args in SUITES.items()
    }
    jobs["quick-2"] = (work / "quick.toml", SUITES["quick"])
    for name, (suite, args) in jobs.items():
        outs[name] = work / name
        cmd = [sys.executable, "-m", "ssdlab", "run", str(suite), "--out", str(outs[name])]
        cmd += ["--label", f"{name} drive", *map(str, args)]
        procs.append(
            (
                name,
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
            )
        )
    act_native, act_fio = work / "act-native", work / "act-fio"
    # loop0's log, then nvme0n1's: another device's, left out of the score
    for log, *args in (
        ("act_storage_1x_30s.log", "--slice", "10"),
        ("act_storage_us_2x_20s.log", "--slice", "4", "--other-device"),
    ):
        proc = ssdlab_cli("act", "import", FIXTURES / log, "--out", act_native, *args)
        assert proc.returncode == 0, proc.stderr
    # a second drive from a recorded log: its score does not depend on this machine's load
    proc = ssdlab_cli(
        "act", "import", FIXTURES / "act_storage_1x_30s.log", "--out", work / "act-native-2",
        "--slice", "5", "--label", "act log drive",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for load in (1, 2):
        proc = ssdlab_cli(
            "act", "run", "--load", load, "--out", act_fio, "--target", work / "act.dat",
            "--label", "act fio drive", *ACT_CAPPED,
        )  # fmt: skip
        assert proc.returncode in (0, 1), proc.stderr
    for name, proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{name}: {err}"
    return outs | {
        "act-native": act_native, "act-native-2": work / "act-native-2", "act-fio": act_fio
    }  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _run_all(tmp_path_factory.mktemp("suites"))


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every sentence a public findings function returns while the test runs."""
    sentences: list[str] = []

    def wrap(function: Callable[..., object]) -> Callable[..., object]:
        def recording(*args: object, **kwargs: object) -> object:
            out = function(*args, **kwargs)
            sentences.extend([out] if isinstance(out, str) else list(out))  # type: ignore[arg-type]
            return out

        return recording

    for module, name in [
        *((findings, n) for n in (
            "steady_state", "consistency", "qd_scaling", "mix_sweeps", "latency_qos", "power",
            "endurance", "leads", "rivals", "like_for_like", "unknown_parameters",
        )),
        (act_findings, "act"), (act_findings, "act_comparison"),
    ]:  # fmt: skip
        monkeypatch.setattr(module, name, wrap(getattr(module, name)))
    yield sentences


UNITS = (
    r"IOPS|MB/s|µs|ms|ns|s|%|x|W|GB|MB|TB|kB|B|KiB|MiB|GiB|TiB|TBW|reads/s|writes/s|min|h|"
    r"years|°C|IOPS per watt|MB/s per watt|IOPS per W|MB/s per W"
)
#: nouns a count may stand before
COUNTED = (
    r"rounds?|steps?|one-second windows?|windows?|read/write mix(?:es)?|mixes|measurements?|"
    r"like-for-like measurements?|slices?|trials?|jobs?|size-based|more|of|I/Os?|"
    r"(?:[\w-]+ )?intervals?|repeats?|times|segments?|drives?|wait states?|cells?|"
    r"thread counts|queue depths|log windows|percentiles?|limits?|snapshots?|pass(?:es)?|"
    r"samples?"
)
NUMBER = re.compile(r"(?<![\w.,/-])(\d[\d,]*(?:\.\d+)?)(?![\d,]*[\w/]|\.\d)")
AFTER_WORD = re.compile(r"(?:rounds?|slice|trial|step|block|round|QD\d+ \()\s*$")


def _unitless(sentence: str) -> list[str]:
    """Numbers in ``sentence`` with no unit, no counted noun and no ratio ``x``."""
    bad = []
    for m in NUMBER.finditer(sentence):
        after, before = sentence[m.end() :], sentence[: m.start()]
        if re.match(rf"\s?(?:{UNITS})(?![\w/])", after) or re.match(rf" (?:{COUNTED})\b", after):
            continue
        if AFTER_WORD.search(before) or re.match(r"-\d", after) or before.endswith("-"):
            continue  # rounds 3-7, slice 2, the 4 in (4 jobs x QD32)
        bad.append(m.group(1))
    return bad


PHRASE = re.compile(
    r"\b\d+(?:B|K|M|G)\s(?:random|sequential)\s(?:\d+/\d+|\w+)"
    r"(?:\sat\sQD\d+(?:\s\(\d+ jobs x QD\d+\))?)?"
)


def _check(sentence: str, shares: set[int]) -> list[str]:
    """What is wrong with one finding sentence."""
    problems = []
    if re.search(r"\bnan\b|\bNone\b|\binf\b", sentence, re.IGNORECASE):
        problems.append("nan/None")
    if m := re.search(r"\b(\w+) \1\b", sentence, re.IGNORECASE):
        problems.append(f"doubled word {m.group(0)!r}")
    if m := re.search(rf"(?<![\d.,])1 (?:{COUNTED.replace('?', '')})s\b", sentence):
        problems.append(f"plural after 1: {m.group(0)!r}")
    if m := re.search(
        r"(?<![\d.,])1 (rounds|steps|windows|mixes|slices|trials|measurements)\b", sentence
    ):
        problems.append(f"plural after 1: {m.group(0)!r}")
    if bad := _unitless(sentence):
        problems.append(f"numbers without a unit: {bad}")
    if re.search(r"(?:random|sequential) (?:read|write|\d+/\d+|mixes) QD\d", sentence):
        problems.append("a workload label, not a phrase (no 'at QD')")
    for m in PHRASE.finditer(sentence):
        text = m.group(0)
        if phrases.parse_workload(text) is None:
            problems.append(f"unparsable workload phrase {text!r}")
    for m in re.finditer(r"(?<![\d/])(\d{1,3})/(\d{1,3})(?![\d/s])", sentence):
        reads, writes = int(m.group(1)), int(m.group(2))
        if reads + writes == 100 and reads not in shares:
            problems.append(f"mix {m.group(0)} not in the data ({sorted(shares)})")
    if "mix and averages" in sentence or "read shares" in sentence:
        problems.append("old wording")
    return problems


def _shares(*analyses: DriveAnalysis) -> set[int]:
    return {s for a in analyses if a.steps.height for s in a.steps["read_pct"].to_list()}


def test_every_finding_of_every_builtin_suite_is_well_formed(
    runs: dict[str, Path], recorded: list[str]
) -> None:
    checked: dict[str, int] = {}
    problems = []
    failed: set[str] = set()
    for name, out in runs.items():
        analysis = DriveAnalysis(ssdlab.load(out))
        recorded.clear()
        for build in drive.SECTIONS:
            try:
                shown = build(analysis).findings  # sentences of other modules too (PTS pages)
            except Exception as exc:  # a section's own failure is its tests' business,
                where = traceback.extract_tb(exc.__traceback__)  # a findings failure is ours
                if any(f.filename.endswith("/ssdlab/findings.py") for f in where):
                    raise
                warnings.warn(f"{name}: {build.__name__} failed: {exc!r}", stacklevel=1)
                failed.add(name)
                continue
            recorded.extend(s for s in shown if s not in recorded)
        checked[name] = len(recorded)
        shares = _shares(analysis) | {100, 0}
        problems += [(name, s, p) for s in recorded for p in _check(s, shares)]
    assert not problems, "\n".join(f"{n}: {p}: {s}" for n, s, p in problems)
    assert all(checked[n] for n in runs if n not in failed), checked  # each has findings


@pytest.mark.parametrize(
    "group",
    [
        ("quick", "quick-2"),
        ("quick", "enterprise-review", "snia-iops", "snia-latency", "snia-throughput"),
        ("snia-wsat", "quick-2", "act-fio"),
        ("act-native", "act-native-2", "act-fio"),
    ],
    ids=["like-for-like", "every-suite", "wsat-act", "act"],
)
def test_every_comparison_finding_is_well_formed(
    runs: dict[str, Path], recorded: list[str], group: tuple[str, ...]
) -> None:
    cmp = compare.load_comparison([runs[n] for n in group])
    for build in compare.SECTIONS:
        build(cmp)
    assert recorded
    shares = _shares(*cmp.analysis.drives) | {100, 0}
    problems = [(s, p) for s in recorded for p in _check(s, shares)]
    assert not problems, "\n".join(f"{p}: {s}" for s, p in problems)
    self_compared = [s for s in recorded for n in cmp.names if f"{n} leads {n} " in s]
    assert not self_compared
    if group == ("quick", "quick-2"):
        assert not cmp.warnings
        assert any(
            s.startswith("Against quick-2 drive, quick drive's") or " are within 5 %" in s
            for s in recorded
        )
    elif "act-native" not in group:  # ACT logs alone may agree in every setting
        assert cmp.warnings  # different suites or settings: said


#: the suites whose reviews no other test draws (``test_pts_report`` draws the PTS-E suites
#: and enterprise-review, ``test_report_screens`` quick), and the section each is about
DRAWN_HERE = {
    "latency-load": "Latency against offered load",
    "snia-dirth": "Demand intensity and response time",
    "jesd219-enterprise": "Steady state",
    "snia-hir": "Host idle recovery",
    "snia-xsr": "Cross-stimulus recovery",
    "fill": "Whole-drive fill",
}


@pytest.fixture(scope="module")
def drawn(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The reviews of :data:`DRAWN_HERE`, rendered two at a time, as Chromium lays them out
    at 1280 px."""
    out = tmp_path_factory.mktemp("reviews")

    def render(suite: str) -> Path:
        html = out / f"{suite}.html"
        proc = ssdlab_cli("report", runs[suite], "-o", html, timeout=600)
        assert proc.returncode == 0, f"{suite}: {proc.stderr}"
        return html

    with ThreadPoolExecutor(2) as pool:
        pages = list(pool.map(render, DRAWN_HERE))
    return dict(zip(DRAWN_HERE, chromium.layout_problems(pages), strict=True))


@pytest.mark.parametrize("suite", list(DRAWN_HERE))
def test_each_suites_review_fits_and_shows_its_section(suite: str, drawn) -> None:
    page = drawn[suite]
    screens.assert_fits(page)
    screens.assert_sections_explained(page)
    screens.assert_shows(page, [DRAWN_HERE[suite]])


def _counted_words() -> set[str]:
    """Every word the library passes to findings.count, read from its source."""
    words = set()
    for path in Path(ssdlab.__file__).parent.rglob("*.py"):
        text = path.read_text()
        if re.search(r"import[^\n]*\bcount\b", text):
            words |= set(re.findall(r"\bcount\([^()]*, ['\"]([^'\"]+)['\"]\)", text))
    return words


@pytest.mark.parametrize("n", [1, 2, 1234])
def test_every_counted_word_reads_well_at_any_count(n: int) -> None:
    """Counts that depend on a run (1 cell, 2 cells) never trip the sentence checks."""
    words = _counted_words()
    assert {"cell", "step", "drive"} <= words
    sentences = [f"{findings.count(n, w)} measured fewer than 100,000 I/Os." for w in words]
    assert [(s, p) for s in sentences for p in _check(s, {100, 0})] == []
