"""Suite expansion is linear and capped (MAX_LIST entries a list, MAX_STEPS fio runs a suite),
and ``--scale`` and a suite's numbers give one line, never a traceback. Linearity is shown by
construction (comparisons counted), not by timing: benchmarks/bench_suite_expand.py times it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import ssdlab_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.errors import InputError, SuiteError
from ssdlab.estimate import Rates, suite_seconds
from ssdlab.repeat import repeat_suite
from ssdlab.runner import suite_jobs
from ssdlab.suite import MAX_LIST, MAX_STEPS, Step, Suite, load_suite, parse_suite

HEAD = 'name = "big"\n[defaults]\nrw = "read"\nruntime_s = 1\n'


def bs_list(n: int, start: int = 1) -> str:
    return json.dumps([f"{512 * i}" for i in range(start, start + n)])


def steps_file(tmp_path: Path, *bs_lengths: int, name: str = "s.toml") -> Path:
    """A suite of one step per length, each expanding a ``bs`` list of that many sizes."""
    path = tmp_path / name
    text = HEAD + "".join(
        f'[[steps]]\nname = "s{i}-{{bs}}"\nbs = {bs_list(n)}\n' for i, n in enumerate(bs_lengths)
    )
    path.write_text(text)
    return path


def one_line(*args: str | Path) -> str:
    proc = ssdlab_cli(*args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_a_list_at_the_cap_expands_and_one_over_it_is_one_line(tmp_path: Path) -> None:
    assert len(load_suite(steps_file(tmp_path, MAX_LIST)).steps) == MAX_LIST
    path = steps_file(tmp_path, MAX_LIST + 1, name="over.toml")
    error = one_line("suites", "show", path)
    assert str(path) in error and "steps[0].bs lists 1,001 entries, at most 1,000" in error


def test_a_suite_at_the_step_cap_builds_and_one_over_is_refused(tmp_path: Path) -> None:
    at_cap = load_suite(steps_file(tmp_path, *[MAX_LIST] * (MAX_STEPS // MAX_LIST)))
    assert at_cap.max_steps == MAX_STEPS
    over = steps_file(tmp_path, *[MAX_LIST] * (MAX_STEPS // MAX_LIST), 1, name="over.toml")
    with pytest.raises(SuiteError, match=f"{over}: the steps expand to more than 10,000"):
        load_suite(over)


def test_lists_multiplying_past_the_cap_are_refused_before_they_expand(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    depths = json.dumps(list(range(1, MAX_LIST + 1)))
    path.write_text(HEAD + f'[[steps]]\nname = "{{bs}}-{{iodepth}}"\nbs = {bs_list(MAX_LIST)}\n'
                    f"iodepth = {depths}\n")  # fmt: skip
    with pytest.raises(SuiteError, match=r"expands to 1,000,000 steps \(1,000 bs x 1,000 iodepth"):
        load_suite(path)


def test_includes_cannot_add_up_past_the_cap(tmp_path: Path) -> None:
    steps_file(tmp_path, MAX_LIST, name="base.toml")
    top = tmp_path / "top.toml"
    top.write_text(f'name = "top"\ninclude = {json.dumps(["base.toml"] * 11)}\n')
    with pytest.raises(SuiteError, match="expand to more than 10,000"):
        load_suite(top)


def test_rounds_count_every_round_against_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    block = '[[steps]]\nname = "b"\nrounds = {{ max = {max}, track = "x" }}\n'
    inner = '[[steps.steps]]\nname = "x"\n[[steps.steps]]\nname = "y"\n'
    path.write_text(HEAD + block.format(max=MAX_STEPS // 2 + 1) + inner)
    with pytest.raises(SuiteError, match=r"10,002 fio runs .* at most 10,000"):
        load_suite(path)
    path.write_text(HEAD + block.format(max=10**400) + inner)
    with pytest.raises(SuiteError, match=r"steps\.0\.max \(b\): .*less than or equal to 10000"):
        load_suite(path)


def test_a_set_list_over_the_cap_blames_the_parameter(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(HEAD + '[params]\nqd = 1\n[[steps]]\nname = "q{iodepth}"\niodepth = "@qd"\n')
    qd = json.dumps(list(range(1, MAX_LIST + 2)))
    error = one_line("plan", path, "--out", tmp_path / "o", "--set", f"qd={qd}")
    assert error.startswith("error: --set qd=") and "lists 1,001 iodepth values" in error


def test_repeats_count_against_the_cap(tmp_path: Path) -> None:
    path = steps_file(tmp_path, MAX_LIST)
    assert repeat_suite(load_suite(path), 10).max_steps == MAX_STEPS
    error = one_line("plan", path, "--out", tmp_path / "o", "--repeat", "11")
    assert "--repeat 11: suite 'big' would make 11,000 fio runs, at most 10,000" in error


class CountedName(str):
    """A step name that counts how often it is compared (linear checks hash, not compare)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountedName.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_name_checks_and_excludes_are_linear(tmp_path: Path) -> None:
    """Unique names and ``exclude`` were list scans per name: n^2 comparisons (60k entries:
    76 s). Counted by construction: hashing compares a name only to an equal one."""
    n = 2000
    names = [CountedName(f"s{i}") for i in range(n)]
    data: dict[str, Any] = {
        "name": "x",
        "defaults": {"rw": "read", "runtime_s": 1},
        "steps": [{"name": name} for name in names],
        "exclude": names[: n // 2],
    }
    CountedName.compared = 0
    suite = parse_suite(data, tmp_path / "s.toml")
    assert len(suite.steps) == n // 2 and CountedName.compared <= 4 * n
    steps = [Step(name="a", rw="read", runtime_s=1).model_copy(update={"name": m}) for m in names]
    CountedName.compared = 0
    Suite.model_validate({"name": "x", "steps": steps})
    assert CountedName.compared <= 4 * n


@pytest.mark.parametrize("factor", ["1e300", "inf", "nan", "0", "-1", "1e-300", "1e5"])
def test_a_scale_out_of_range_is_one_line_on_every_path(tmp_path: Path, factor: str) -> None:
    error = one_line("plan", "quick", "--out", tmp_path / "o", "--scale", factor)
    assert error.startswith("error: --scale must be a positive number from 0.0001 to ")
    with pytest.raises(InputError, match=r"--scale must be a positive number from 0\.0001 to 1"):
        load_suite("quick").scaled(float(factor))


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ('size = "8000p"', "size 8000p becomes 18,014,398,509,481,984,000 bytes"),
        ("runtime_s = 9000000", "runtime_s becomes 18,000,000 s"),
        ("ramp_s = 9000000", "ramp_s becomes 18,000,000 s"),
    ],
)
def test_a_scale_that_takes_a_step_out_of_range_is_one_line(
    tmp_path: Path, fields: str, says: str
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(HEAD + f'[[steps]]\nname = "a"\n{fields}\n')
    error = one_line("plan", path, "--out", tmp_path / "o", "--scale", "2")
    assert "--scale 2: step 'a'" in error and says in error


NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([10**400, -(10**400), 2**63, 2**64, 0, 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.from_regex(r"\A(0x[0-9a-f]{1,40}|[0-9]{1,400}(\.[0-9]{1,5})?)[kmgtp]?(i?b)?%?\Z"),
)
FIELDS = ["bs", "size", "offset", "runtime_s", "ramp_s", "loops", "iodepth", "numjobs",
          "rwmixread", "max", "window", "fractions", "max_iops"]  # fmt: skip


@given(changes=st.dictionaries(st.sampled_from(FIELDS), NUMBERS, min_size=1, max_size=3),
       factor=st.floats(allow_nan=True, allow_infinity=True))  # fmt: skip
@settings(max_examples=200, deadline=None, derandomize=True)
def test_numbers_in_a_suite_give_one_line(changes: dict[str, Any], factor: float) -> None:
    """Sizes, times, counts, rounds and sweeps, loaded, scaled and written as job files."""
    step: dict[str, Any] = {"name": "a", "rw": "randrw", "rwmixread": 70, "runtime_s": 1}
    rounds = {"max": 5, "window": 5, "track": "a"}
    sweep: dict[str, Any] = {"fractions": [0.5]}
    for key, value in changes.items():
        where = rounds if key in ("max", "window") else sweep if key == "max_iops" else step
        where[key] = [value] if key == "fractions" else value
    data = {
        "name": "fuzz",
        "steps": [
            {"name": "b", "rounds": rounds, "steps": [step]},
            {**step, "name": "w", "loops": None, "sweep": sweep},
        ],
    }
    data["steps"][1] = {k: v for k, v in data["steps"][1].items() if v is not None}
    try:
        suite = parse_suite(data, Path("fuzz.toml")).scaled(factor)
        suite_jobs(suite, "/tmp/target")
    except (SuiteError, InputError) as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert math.isfinite(suite_seconds(suite, Rates.of(None, 2**30)))
