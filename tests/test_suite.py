"""Suite files: validation with clear errors, defaults, built-ins, and job files fio accepts."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import InputError, SuiteError
from ssdlab.fio import job_file
from ssdlab.suite import builtin_suites, load_suite
from ssdlab.units import parse_size


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_quick_suite_is_builtin_and_covers_the_issue_matrix() -> None:
    assert "quick" in builtin_suites()
    suite = load_suite("quick")
    combos = {(s.rw, s.bs_bytes, s.iodepth, s.rwmixread) for s in suite.steps}
    assert combos == {
        ("randread", 4096, 1, None),
        ("randread", 4096, 32, None),
        ("randwrite", 4096, 1, None),
        ("randwrite", 4096, 32, None),
        ("read", 131072, 32, None),
        ("write", 131072, 32, None),
        ("randrw", 4096, 32, 70),
    }
    assert all(s.runtime_s <= 10 for s in suite.steps)


def test_defaults_merge_under_steps_and_options_merge(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.toml",
        """
name = "s"
[defaults]
runtime_s = 3
options = { norandommap = 1, randrepeat = 0 }
[[steps]]
name = "a"
rw = "randread"
[[steps]]
name = "b"
rw = "write"
runtime_s = 7
options = { randrepeat = 1 }
""",
    )
    a, b = load_suite(path).steps
    assert (a.runtime_s, b.runtime_s) == (3, 7)
    assert a.options == {"norandommap": 1, "randrepeat": 0}
    assert b.options == {"norandommap": 1, "randrepeat": 1}


def test_yaml_suites_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        "name: y\nsteps:\n  - {name: r, rw: randrw, rwmixread: 30, runtime_s: 1, bs: 16k}\n",
    )
    (step,) = load_suite(path).steps
    assert (step.rwmixread, step.bs_bytes) == (30, 16384)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n[[steps]]\nname = "a"\nrw = "sideways"\nruntime_s = 1\n', "steps.0.rw"),
        ('name = "x"\n[[steps]]\nname = "a"\nrw = "randrw"\nruntime_s = 1\n', "rwmixread"),
        ('name = "x"\n[[steps]]\nname = "a"\nrw = "read"\n', "steps.0 (a): Value error, needs"),
        ('name = "x"\n[[steps]]\nname = "a b"\nrw = "read"\nruntime_s = 1\n', "steps.0.name"),
        ('name = "x"\n[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\nbs = "4q"\n', "size"),
        ('name = "x"\n[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\nqd = 4\n', "qd"),
        (
            'name = "x"\n[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\n'
            '[[steps]]\nname = "a"\nrw = "write"\nruntime_s = 1\n',
            "used twice",
        ),
        ('name = "x"\nsteps = 3\n', "list of tables"),
        ("name = \n", "not valid TOML"),
    ],
)
def test_invalid_suites_name_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(SuiteError) as exc:
        load_suite(path)
    assert str(path) in str(exc.value)
    assert message in str(exc.value) and "\n" not in str(exc.value)


STEP = '[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("steps = [1]\n", "steps must be a list of tables, not hold 1"),
        ('steps = "a"\n', "steps must be a list of tables, not a string"),
        ("exclude = 5\n" + STEP, "exclude must be a name or a list of names"),
        ("exclude = [[1]]\n" + STEP, "exclude must be a name or a list of names"),
        ('exclude = ["b"]\n' + STEP, "exclude names no step: b"),
        ('exclude = ["aa"]\n' + STEP, "exclude names no step: aa (did you mean a?)"),
        ("include = [1]\n" + STEP, "include must be a name or a list of names"),
        ("params = [1]\n" + STEP, "params must be a table, not a list"),
        ("defaults = [1]\n" + STEP, "defaults must be a table, not a list"),
        ("defaults = { options = [1] }\n" + STEP, "defaults.options must be a table"),
        ("defaults = { steps = [] }\n" + STEP, "defaults cannot hold steps"),
        (STEP + "options = [1]\n", "step 'a': options must be a table, not a list"),
        ('[[steps]]\nname = "b"\nrounds = 5\n', "step 'b': rounds must be a table"),
        ('[[steps]]\nname = "b"\nsteps = 5\nrounds = { track = "a" }\n', "step 'b': steps"),
        ('[[steps]]\nname = "b"\nsteps = [1]\nrounds = { track = "a" }\n', "not hold 1"),
        ('[[steps]]\nname = "b"\nrw = "read"\nrounds = {}\n', "rounds block takes no rw"),
        (
            '[[steps]]\nname = "b"\nrounds = { track = "a" }\n',
            "steps.0.steps (b): List should have at least 1",
        ),
        (STEP.replace('"a"', '"a{iodepth}{0}"') + "iodepth = [1, 2]\n", "steps.0.name"),
        (STEP.replace('"a"', '"a{iodepth}"') + "iodepth = []\n", "lists no iodepth"),
        (STEP + "ramp_s = inf\n", "ramp_s"),
        (STEP + "options = { rate_iops = inf }\n", "'rate_iops': value inf is not a finite"),
    ],
)
def test_malformed_suites_give_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", 'name = "x"\n' + text)
    with pytest.raises(SuiteError) as exc:
        load_suite(path)
    assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value)
    assert message in str(exc.value)


def test_expanded_names_replace_every_placeholder(tmp_path: Path) -> None:
    step = STEP.replace('"a"', '"a{iodepth}-b{iodepth}"') + "iodepth = [1, 2]\n"
    steps = load_suite(write(tmp_path, "s.toml", 'name = "x"\n' + step)).steps
    assert [s.name for s in steps] == ["a1-b1", "a2-b2"]


@pytest.mark.parametrize(
    ("size", "offset", "message"),
    [
        ("200%", None, "size '200%': a share of the target is more than 0% and at most 100%"),
        ("0%", None, "size '0%'"),
        ("x%", None, "'x%' is not a share of the target"),
        ("1e3%", None, "is not a share"),
        ("50%", "100%", "offset '100%': a share of the target is 0% or more, under 100%"),
        ("60%", "50%", "size 60% from offset 50% ends past the target"),
        ("100%", "0.5%", "ends past the target"),
    ],
)
def test_shares_of_the_target_stay_within_it(
    tmp_path: Path, size: str, offset: str | None, message: str
) -> None:
    body = STEP + f'size = "{size}"\n' + (f'offset = "{offset}"\n' if offset else "")
    path = write(tmp_path, "s.toml", 'name = "x"\n' + body)
    with pytest.raises(SuiteError, match=re.escape(message)) as exc:
        load_suite(path)
    assert str(path) in str(exc.value) and "(a): Value error" in str(exc.value)


@pytest.mark.parametrize(("size", "offset"), [("100%", None), ("50%", "50%"), ("0.5%", "0%")])
def test_shares_within_the_target_load(tmp_path: Path, size: str, offset: str | None) -> None:
    body = STEP + f'size = "{size}"\n' + (f'offset = "{offset}"\n' if offset else "")
    (step,) = load_suite(write(tmp_path, "s.toml", 'name = "x"\n' + body)).steps
    assert (step.size, step.offset) == (size, offset)


def test_unknown_suite_lists_builtins() -> None:
    with pytest.raises(SuiteError, match="quick"):
        load_suite("no-such-suite")


@pytest.mark.parametrize("name", builtin_suites())
def test_builtin_job_files_parse_in_fio(tmp_path: Path, name: str) -> None:
    """Every built-in step passes the fio option policy and gives a job file fio accepts."""
    jobs = [
        job_file(step, str(tmp_path / "t"), direct=True, header=f"suite {name}")
        for step in load_suite(name).all_steps()
    ]
    paths = []
    for i, job in enumerate(dict.fromkeys(jobs)):
        paths.append(tmp_path / f"{i}.fio")
        paths[-1].write_text(job)
        assert job.count("group_reporting=") == 1
    proc = subprocess.run(["fio", "--parse-only", *paths], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_generated_job_files_parse_in_fio(tmp_path: Path) -> None:
    for step in load_suite("quick").steps:
        job = tmp_path / f"{step.name}.fio"
        job.write_text(job_file(step, str(tmp_path / "t"), direct=True, header="test"))
        proc = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        text = job.read_text()
        assert f"rw={step.rw}" in text and f"iodepth={step.iodepth}" in text
        assert "group_reporting=1" in text and "log_avg_msec=1000" in text


@pytest.mark.parametrize("size", ["64k", "64K", "64kB", "64KiB", "1m", "3MiB", "1536", "2g"])
def test_size_strings_read_as_fio_reads_them(tmp_path: Path, size: str) -> None:
    out = tmp_path / "o.json"
    subprocess.run(
        ["fio", "--name=s", "--ioengine=null", "--rw=write", "--bs=512", f"--size={size}",
         "--output-format=json", f"--output={out}"],
        check=True, capture_output=True,
    )  # fmt: skip
    written = json.loads(out.read_text())["jobs"][0]["write"]["io_bytes"]
    assert parse_size(size) // 512 * 512 == written  # fio writes whole 512-byte blocks


@pytest.mark.parametrize(
    ("options", "allowed", "message"),
    [
        ({"readwrite": "write"}, (), "set it as the step's `rw` field"),
        ({"blocksize": "1m"}, ("blocksize",), "--allow-fio-option blocksize: set the step's"),
        ({"unified_rw_reporting": 1}, (), "ssdlab sets it"),
        ({"group_reporting": 0}, (), "ssdlab sets it"),
        ({"directory": "/tmp"}, ("directory",), "'directory' makes fio read or write other files"),
        ({"trim_percentage": 10}, (), "'trim_percentage' makes fio write"),
        ({"filesize": "2m"}, (), "'filesize' makes fio write"),
        ({"cgroup": "x"}, (), "'cgroup' runs programs or changes the system"),
        ({"continue_on_error": "all"}, (), "not on ssdlab's list of options"),
        ({"thinktime": "1 0"}, (), "has ' '"),
        ({"percentile_list": "50:99"}, (), None),
        ({"continue_on_error": "all"}, ("continue_on_error",), None),
        ({"fileoffset": "1m"}, (), "set it as the step's `offset` field"),
        ({"disable_bw": 1}, (), "ssdlab sets it"),
        ({"nr_files": 2}, (), "'nr_files' chooses files or devices"),
        ({"ss": "iops:10%"}, (), "not on ssdlab's list of options"),
        ({"wait_for_previous": 1, "ratecycle": 500}, (), None),
    ],
)
def test_option_policy(tmp_path: Path, options: dict, allowed: tuple, message: str | None) -> None:
    body = ", ".join(f"{k} = {json.dumps(v)}" for k, v in options.items())
    path = write(
        tmp_path,
        "s.toml",
        f'name = "x"\n[[steps]]\nname = "a"\nrw = "read"\nruntime_s = 1\noptions = {{ {body} }}\n',
    )
    if message is None:
        assert load_suite(path, allow_fio_options=allowed).steps[0].options == options
        return
    with pytest.raises(SuiteError, match=re.escape(message)) as exc:
        load_suite(path, allow_fio_options=allowed)
    assert "\n" not in str(exc.value)


def test_writing_options_make_a_step_write(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        "name: w\nsteps:\n"
        "  - {name: r, rw: randread, runtime_s: 1, options: {trim_percentage: 5}}\n",
    )
    suite = load_suite(path, allow_fio_options=["trim_percentage"])
    assert suite.writes and suite.steps[0].writes
    assert suite.allowed_fio_options == ("trim_percentage",)


def test_suite_definition_names_opt_ins_only_when_there_are_some() -> None:
    """Manifests written before opt-ins existed hold no such key; their runs still resume."""
    assert "allowed_fio_options" not in load_suite("quick").model_dump(mode="json")
    opted = load_suite("quick", allow_fio_options=["exec_prerun"]).model_dump(mode="json")
    assert opted["allowed_fio_options"] == ["exec_prerun"]


@pytest.mark.parametrize("factor", [float("nan"), float("inf"), -1.0, 0.0])
def test_a_scale_that_is_no_positive_number_is_refused(factor: float) -> None:
    with pytest.raises(InputError, match="--scale must be a positive number"):
        load_suite("quick").scaled(factor)
