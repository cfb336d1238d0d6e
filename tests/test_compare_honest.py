"""Honest comparisons: only like-for-like cells are compared, and what differs is said; the
subject's largest wins and deficits against each rival; ACT compared by scores and slice
exceedances, never by the IOPS its load fixes; a drive is never compared with itself.

The runs are real fio (the null engine, so they are fast) through ``ssdlab run`` and
``ssdlab act``, as a user makes them.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from conftest import ssdlab_cli

from ssdlab import findings
from ssdlab.review import compare

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SUITE = """
name = "honest"
description = "A QD sweep, a mix sweep and a point, fast (fio's null engine)."

[defaults]
ioengine = "null"
size = "16m"
runtime_s = 0.3

[[steps]]
name = "randread-4k-qd{iodepth}"
rw = "randread"
bs = "4k"
iodepth = [1, 4]

[[steps]]
name = "mix-4k-qd4-r{rwmixread}"
rw = "randrw"
bs = "4k"
iodepth = 4
rwmixread = [100, 65, 0]

[[steps]]
name = "seq-read-128k-qd4"
rw = "read"
bs = "128k"
iodepth = 4
"""
# 1x passes by construction: a lag within a 1 s slice is never above a max lag of 1 s
ACT_KEEPS_UP = [
    *("--duration", "2", "--slice", "1", "--hist-msec", "250"),
    *("--set", "read-reqs-per-sec=100", "--set", "write-reqs-per-sec=50"),
    *("--small-read-jobs", "1", "--ioengine", "null", "--max-lag", "1"),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Drives A and B ran the suite alike; C over a smaller span; D at half the durations;
    two ACT drives from native logs (one also holds another device's log, which failed 2x,
    left out of its score), two whose score 1x is bounded (the same log judged in 1 s slices
    as 2x fails) and two emulated with fio at 1x."""
    work = tmp_path_factory.mktemp("honest")
    suite = work / "honest.toml"
    suite.write_text(SUITE)
    (work / "small.toml").write_text(SUITE.replace('size = "16m"', 'size = "8m"'))
    made = {
        "A": ("--label", "Drive A"),
        "B": ("--label", "Drive B"),
        "C": ("--label", "Drive C"),
        "D": ("--label", "Drive D", "--scale", "0.5"),
    }
    out = {}
    for key, args in made.items():
        out[key] = work / key
        chosen = work / "small.toml" if key == "C" else suite
        proc = ssdlab_cli("run", chosen, "--out", out[key], "--target-size", "32m", *args)
        assert proc.returncode == 0, proc.stderr
    for key, logs in (
        ("act1", [("act_storage_1x_30s.log", "10")]),
        (
            "act2",
            [
                ("act_storage_1x_30s.log", "10"),
                ("act_storage_us_2x_20s.log", "4", "--other-device"),
            ],
        ),
    ):
        out[key] = work / key
        for log, *args in logs:
            proc = ssdlab_cli(
                "act", "import", FIXTURES / log, "--out", out[key], "--slice", *args,
                "--label", f"ACT {key}",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
    for key in ("exact1", "exact2"):
        out[key] = work / key
        for slice_s, load in (("10", "1"), ("1", "2")):
            proc = ssdlab_cli(
                "act", "import", FIXTURES / "act_storage_1x_30s.log", "--out", out[key],
                "--slice", slice_s, "--load", load, "--label", f"ACT {key}",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
    for key in ("fio1", "fio2"):
        out[key] = work / key
        proc = ssdlab_cli(
            "act", "run", "--load", "1", "--out", out[key], "--target", work / f"{key}.dat",
            "--label", f"ACT {key}", *ACT_KEEPS_UP,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    return out


def test_only_like_for_like_cells_are_compared_and_the_difference_is_said(
    runs: dict[str, Path],
) -> None:
    cmp = compare.load_comparison([runs["A"], runs["B"], runs["C"]])
    analysis = cmp.analysis
    # C's cells ran over half the span: left out, each named with what differs
    excluded = analysis.excluded
    assert set(excluded["label"]) == {"Drive C"}
    assert excluded.height == 5 and all(d == ["span_bytes"] for d in excluded["differs"].to_list())
    assert "4K random 65/35 at QD4" in excluded["cell"].to_list()
    assert set(analysis.scores["drive"]) == {"Drive A", "Drive B"}
    (warning,) = cmp.warnings
    assert warning == (
        "Not like for like: different LBA span (Drive A and Drive B: 16 MiB; Drive C: 8 MiB); "
        "5 measurements that differ in it are left out of the comparison."
    )
    section = compare.compare_like_for_like_section(cmp)
    box = section.parts[0].data
    assert 'class="ssdlab-warning"' in box and "Different LBA span" in box
    summary = compare.compare_summary_section(cmp)
    assert summary.findings[0].startswith("Not like for like: different LBA span")

    # on request every cell is compared, and the report says so
    loose = compare.load_comparison([runs["A"], runs["B"], runs["C"]], like_for_like=False)
    assert set(loose.analysis.scores["drive"]) == {"Drive A", "Drive B", "Drive C"}
    said = compare.compare_like_for_like_section(loose).findings[0]
    assert said.startswith("Every cell is compared, also where the workload parameters differ")


def test_scaled_runs_are_not_ranked_beside_full_ones(runs: dict[str, Path]) -> None:
    cmp = compare.load_comparison([runs["A"], runs["D"]])
    assert not cmp.analysis.scores.height  # every cell ran for a different time
    parameters = {w.split(" (")[0] for w in cmp.warnings}
    assert (
        parameters
        == {
            "Not like for like: different duration scale",
            "Not like for like: different runtime",
            "Not like for like: different ramp time",
        }
        or "Not like for like: different duration scale" in parameters
    )
    summary = compare.compare_summary_section(cmp)
    assert summary.findings[-1] == (
        "Nothing to compare: no test was run by two or more drives like for like."
    )
    alike = compare.load_comparison([runs["A"], runs["B"]])
    assert not alike.warnings
    (said,) = compare.compare_like_for_like_section(alike).findings
    assert said.startswith("Like for like: every drive ran with the same suite")


def test_subject_wins_and_deficits_against_each_rival(runs: dict[str, Path]) -> None:
    cmp = compare.load_comparison([runs["A"], runs["B"], runs["C"]], "Drive B", False)
    rivals = cmp.analysis.rivals()
    assert set(rivals["rival"]) == {"Drive A", "Drive C"}
    assert "p99.99 latency" in set(rivals["measure"]) and "IOPS" in set(rivals["measure"])
    sentences = findings.rivals(rivals, "Drive B")
    for rival in ("Drive A", "Drive C"):
        about = [s for s in sentences if f"Against {rival}, Drive B" in s or rival in s]
        assert about, sentences
    shape = re.compile(
        r"^Against Drive [AC], Drive B's largest (?:deficits?|wins?): "
        r"(?:\d[\d.,]*(?:x| %) (?:higher|lower|better|worse) [\w ./]+ in \d+[BKM] "
        r"(?:random|sequential) [\w/]+ at QD\d+ \([^()]+ vs [^()]+\)(?:; |\.$))+"
    )
    for s in sentences:
        assert shape.match(s) or " are within 5 % " in s or " has no " in s, s
        assert "Drive B leads Drive B" not in s and "against Drive B" not in s.lower()


def test_act_is_compared_by_score_and_exceedance_not_fixed_iops(runs: dict[str, Path]) -> None:
    cmp = compare.load_comparison([runs["act1"], runs["act2"]])
    scores = cmp.analysis.scores
    assert set(scores["group"]) == {"act"}
    # one log each (act2's other log is another device's): no load above 1x failed, so
    # neither score ranks against the other, in the table or the sentence
    assert "ACT score" not in set(scores["test"])
    section = compare.compare_act_endurance_section(cmp)
    length = "a trial of 30 s judged in slices of 10 s"
    assert section.findings[:2] == [
        f"ACT scores (highest passing load): ACT act1 at least 1x (2,000 reads/s, {length}) "
        f"and ACT act2 at least 1x (2,000 reads/s, {length}); the scores of ACT act1 and ACT "
        "act2 are lower bounds, so their order may not hold.",
        "A trial of 30 s is a smoke test of the workload, not an ACT rating: ACT rates a drive "
        "by a run of 24 h judged in slices of 1 h.",
    ]
    assert any(
        s.startswith("At 1x, reads at or over 1 ms in the worst slice") for s in section.findings
    )
    assert not any(" leads " in s and "ACT score" in s for s in section.findings)

    # fio-emulated trials: their steps' IOPS are the load asked, never a test
    fio = compare.load_comparison([runs["fio1"], runs["fio2"]])
    assert not fio.analysis.classified.height
    assert set(fio.analysis.scores["group"]) <= {"act"}
    # a 1x of 100 reads/s is not a 1x of 2,000 reads/s: compared in reads/s, and said
    mixed = compare.load_comparison([runs["act1"], runs["fio1"]])
    tests = set(mixed.analysis.scores["test"])
    assert not tests & {"ACT score (reads/s)", "ACT score"}  # lower bounds: no order
    (said, *_) = compare.compare_act_endurance_section(mixed).findings
    assert said.startswith(
        "ACT scores (highest passing load): ACT act1 at least 1x (2,000 reads/s, a trial of "
        "30 s judged in slices of 10 s) and ACT fio1 at least 1x (100 reads/s, a trial of 2 s "
    )
    assert any(
        w.startswith("Not like for like: different ACT 1x read rate") for w in mixed.warnings
    )


def test_a_lower_bound_never_ranks_below_a_bounded_score(runs: dict[str, Path]) -> None:
    length = "a trial of 30 s judged in slices of 10 s"
    bounded = compare.load_comparison([runs["exact1"], runs["exact2"]])
    assert set(bounded.analysis.scores.filter(pl.col("test") == "ACT score")["value"]) == {1.0}
    assert compare.compare_act_endurance_section(bounded).findings[0] == (
        f"ACT scores (highest passing load): ACT exact1 1x (2,000 reads/s, {length}) and ACT "
        f"exact2 1x (2,000 reads/s, {length}); ACT exact1 and ACT exact2 pass the same load."
    )
    # act1 passed 1x and tried nothing above: at least exact1's score, never "the same"
    mixed = compare.load_comparison([runs["exact1"], runs["act1"]])
    assert "ACT score" not in set(mixed.analysis.scores["test"])
    assert compare.compare_act_endurance_section(mixed).findings[0] == (
        f"ACT scores (highest passing load): ACT act1 at least 1x (2,000 reads/s, {length}) "
        f"and ACT exact1 1x (2,000 reads/s, {length}); ACT act1 passes at least the load of "
        "ACT exact1."
    )


def test_a_run_given_twice_is_said_and_never_leads_itself(runs: dict[str, Path]) -> None:
    cmp = compare.load_comparison([runs["A"], runs["A"]])
    assert cmp.warnings[0].startswith("Not like for like: run ")
    assert "compared with itself" in cmp.warnings[0]
    everything = [s for build in compare.SECTIONS for s in build(cmp).findings]
    for name in cmp.names:
        assert not any(f"{name} leads {name} " in s for s in everything)
    scores = cmp.analysis.scores
    assert scores.group_by("test", "drive").len()["len"].max() == 1
    assert pl.Series(cmp.names).n_unique() == 2


def test_the_counts_of_a_rivals_sentences_agree_with_what_they_list() -> None:
    """8 measurements against one rival, 5 within the noise of the repeats: the noise
    sentence says 5 of 8 and lists the largest 3, the others count the 3 outside it."""
    noisy = [([100.0 + k, 60.0, 140.0], [104.0, 62.0 + k, 150.0]) for k in range(5)]
    clear = [([100.0, 100.1, 99.9], [200.0 + k, 200.1, 199.9]) for k in range(3)]
    rows = [
        {
            "rival": "Drive A",
            "item": f"4K random read at QD{n + 1}",
            "measure": "IOPS",
            "metric": "IOPS",
            "higher_is_better": True,
            "value": sorted(mine)[1],
            "rival_value": sorted(theirs)[1],
            "repeats": mine,
            "rival_repeats": theirs,
        }
        for n, (mine, theirs) in enumerate(noisy + clear)
    ]
    noise, deficits, wins = findings.rivals(pl.DataFrame(rows), "Drive B")
    head = (
        "Against Drive A, Drive B differs within the noise of the repeats in 5 of its 8 "
        "like-for-like measurements (not significant, neither win nor deficit); the largest "
        "3 of them: "
    )
    assert noise.startswith(head) and noise.count(" in 4K random read at QD") == 3
    sizes = [float(m) for m in re.findall(r"\((\d+) % ±", noise)]
    assert sizes == sorted(sizes, reverse=True)
    assert deficits.startswith("Against Drive A, Drive B's largest deficits: ")
    assert wins == (
        "Against Drive A, Drive B has no win over 5 % (3 like-for-like measurements outside "
        "the noise)."
    )
    (everything,) = findings.rivals(pl.DataFrame(rows[:2]), "Drive B")
    assert " in all 2 like-for-like measurements (not significant, neither win nor deficit): " in (
        everything
    )
    assert everything.count(" in 4K random read at QD") == 2
