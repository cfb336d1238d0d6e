"""fio's job-file parser directives (``include``, sections, comments, ``$`` expansion, line
breaks and long lines) and the options that run programs or open other files than the
target reach no job file, whatever a suite, ``--set`` or ``--allow-fio-option`` says. Each
test is a reproducer: with real fio, nothing it names runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ssdlab_cli

from ssdlab import fio_options
from ssdlab.act.workload import ActConfig, fio_jobs
from ssdlab.errors import SuiteError
from ssdlab.fio import job_file
from ssdlab.runner import check_job_files, suite_jobs
from ssdlab.suite import builtin_suites, load_suite

HEAD = """name = "t"
[params]
engine = "null"
cpus = "0"
[defaults]
size = "1m"
runtime_s = 1
ioengine = "@engine"
[[steps]]
name = "a"
rw = "read"
"""

#: option names fio's parser reads as an include (it matches ``include`` at the start of the
#: line, after blanks) or that hide one; refused in every spelling
INCLUDES = ["include", " include", "INCLUDE", "include=x", "include x", "includes", "a\ninclude"]
NEVER = sorted(set().union(*fio_options.NEVER.values()))


def suite(tmp_path: Path, options: dict[str, str], name: str = "s.toml") -> Path:
    path = tmp_path / name
    body = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in options.items())
    path.write_text(HEAD + f"options = {{ {body} }}\n")
    return path


def one_line(proc_stderr: str) -> str:
    lines = proc_stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), proc_stderr
    return lines[0]


def evil_job(tmp_path: Path) -> tuple[Path, Path]:
    """A job file that runs a program when fio includes it, and the file it would create."""
    pwned = tmp_path / "pwned"
    evil = tmp_path / "evil.fio"
    evil.write_text(f"exec_prerun=touch {pwned}\n")
    return evil, pwned


@pytest.mark.parametrize("name", [*INCLUDES, *NEVER, "${HOME}", "si${X}ze", "[global]"])
def test_directives_and_never_options_are_refused_whatever_the_opt_in(
    tmp_path: Path, name: str
) -> None:
    path = suite(tmp_path, {name: "1"})
    shown = "include" if "include" in name.lower() else name.strip().strip("[]$").lower()
    for allowed in ((), (name,)):
        with pytest.raises(SuiteError) as exc:
            load_suite(path, allow_fio_options=allowed)
        said = str(exc.value)
        assert "\n" not in said and shown in said.lower() and "opt-in" in said
    with pytest.raises(SuiteError, match="no opt-in allows it"):
        load_suite(path, allow_fio_options=[name])


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1\ninclude /tmp/x.fio", "include"),
        ("${HOME}", "${VAR}"),
        ("$ncpus", "$ncpus"),
        ("(1+1)", "arithmetic"),
        ("0;exec_prerun=x", "comment"),
        ("0#x", "comment"),
        ("0," * 600, "at most 1,000"),
    ],
)
def test_values_hold_no_directive(tmp_path: Path, value: str, says: str) -> None:
    with pytest.raises(SuiteError, match="cpus_allowed") as exc:
        load_suite(suite(tmp_path, {"cpus_allowed": value}))
    assert says in str(exc.value)


@pytest.mark.parametrize("engine", ["external:/tmp/x.so", "/tmp/x.so", "x.so", "exec"])
def test_engines_that_load_code_or_run_programs_have_no_opt_in(tmp_path: Path, engine: str) -> None:
    path = suite(tmp_path, {})
    with pytest.raises(SuiteError, match="no opt-in allows it") as exc:
        load_suite(path, {"engine": engine}, allow_fio_options=["ioengine"])
    assert f"ioengine {engine!r}" in str(exc.value)
    proc = ssdlab_cli("run", path, "--out", tmp_path / "o", "--set", f"engine={engine}",
                      "--allow-fio-option", "ioengine")  # fmt: skip
    assert f"--set engine={engine!r}" in one_line(proc.stderr) and proc.returncode == 1


def test_a_file_backing_the_buffers_has_no_opt_in(tmp_path: Path) -> None:
    path = suite(tmp_path, {"mem": f"mmapshared:{tmp_path / 'x'}"})
    with pytest.raises(SuiteError, match=r"'mem'.*names a file"):
        load_suite(path, allow_fio_options=["mem"])
    assert load_suite(suite(tmp_path, {"mem": "shm"}, "ok.toml"), allow_fio_options=["mem"])


@pytest.mark.parametrize("spelling", ["include", " include", "INCLUDE", "include=x"])
def test_the_include_reproducer_runs_nothing(tmp_path: Path, spelling: str) -> None:
    """``--allow-fio-option include`` made fio read a job file that ran ``exec_prerun``."""
    evil, pwned = evil_job(tmp_path)
    path = suite(tmp_path, {"include": str(evil)})
    proc = ssdlab_cli("run", path, "--out", tmp_path / "o", "--allow-fio-option", spelling)
    line = one_line(proc.stderr)
    assert proc.returncode == 1 and "include" in line and "no opt-in allows it" in line
    assert not pwned.exists() and not (tmp_path / "o" / "steps").exists()


def test_a_set_value_cannot_bring_an_include(tmp_path: Path) -> None:
    evil, pwned = evil_job(tmp_path)
    head = HEAD.replace('rw = "read"', 'rw = "read"\noptions = { cpus_allowed = "@cpus" }')
    path = tmp_path / "s.toml"
    path.write_text(head)
    value = json.dumps(f"0\ninclude {evil}")  # TOML: a newline in the string
    proc = ssdlab_cli("run", path, "--out", tmp_path / "o", "--set", f"cpus={value}")
    line = one_line(proc.stderr)
    assert line.startswith("error: --set cpus=") and "include" in line and not pwned.exists()


def test_a_line_longer_than_fio_reads_cannot_smuggle_an_include(tmp_path: Path) -> None:
    """fio reads 8191 characters of a line and the rest as a line of its own: a long value
    of an allowed option ended in ``include`` and ran a program, with no opt-in."""
    evil, pwned = evil_job(tmp_path)
    line = ("cpus_allowed=" + "0," * 5000)[:8191]
    value = line.removeprefix("cpus_allowed=") + f"include,{evil}"
    path = suite(tmp_path, {"cpus_allowed": value})
    proc = ssdlab_cli("run", path, "--out", tmp_path / "o")
    assert "at most 1,000" in one_line(proc.stderr) and proc.returncode == 1
    assert not pwned.exists()


def test_the_job_file_is_the_last_line_of_defence(tmp_path: Path) -> None:
    """A step that never passed the loader (built in code) still writes no directive."""
    step = load_suite(suite(tmp_path, {})).steps[0]
    target = str(tmp_path / "t")
    for options in ({"include": "x"}, {" include": "x"}, {"write_iolog": "x"},
                    {"opendir": str(tmp_path)}, {"cpus_allowed": "${X}"},
                    {"cpus_allowed": "0," * 600}, {"mem": "mmap:/tmp/x"}):  # fmt: skip
        with pytest.raises(SuiteError, match="step 'a'"):
            job_file(step.model_copy(update={"options": options}), target, direct=True, header="h")
    with pytest.raises(SuiteError, match="at most"):
        job_file(step, "/" + "a" * 1100, direct=True, header="h")
    with pytest.raises(SuiteError, match="at most"):
        job_file(step, target, direct=True, header="h" * 5000)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("include /tmp/evil.fio", "include"),
        ("  include=/tmp/evil.fio", "include"),
        ("write_iolog=/tmp/x", "other files"),
        ("opendir=/home", "other files"),
        ("cpus_allowed=${X}", "${VAR}"),
        ("size=$mb_memory", "$ncpus"),
        ("ioengine=external:/tmp/x.so", "no opt-in"),
        ("ioengine=/tmp/x.so", "no opt-in"),
        ("mem=mmap:/tmp/x", "names a file"),
        ("filename=/tmp/a;b", "';'"),
        ("[a b]", "section"),
        ("cpus_allowed=" + "0," * 2500, "at most 4,000"),
    ],
)
def test_job_file_problem_reads_the_text_as_fio_does(tmp_path: Path, line: str, says: str) -> None:
    """:func:`fio_options.job_file_problem`, for the gate that checks every rendered job file
    before fio runs: every built-in suite's job files pass, one extra line does not."""
    jobs = suite_jobs(load_suite("quick"), str(tmp_path / "t:x"))
    text = jobs[0][1]
    assert fio_options.job_file_problem(text) is None
    problem = fio_options.job_file_problem(text + line + "\n")
    assert problem is not None and problem.startswith(f"line {text.count(chr(10)) + 1}: ")
    assert says in problem


def test_every_built_in_suite_passes_the_last_gate(tmp_path: Path) -> None:
    for name in builtin_suites():
        for step, text in suite_jobs(load_suite(name), str(tmp_path / "t"), "cpu"):
            assert fio_options.job_file_problem(text) is None, (name, step)
    act = fio_jobs(ActConfig(), 1, str(tmp_path / "t"), cpus=2)
    assert fio_options.job_file_problem(act) is None


def test_act_follows_the_same_rules() -> None:
    for name in ("include", "write_iolog", "opendir"):
        with pytest.raises(SuiteError, match="no opt-in allows it"):
            fio_jobs(ActConfig(), 1, "/dev/x", cpus=2, options={name: "x"},
                     allow_fio_options=[name])  # fmt: skip
    with pytest.raises(SuiteError, match="no opt-in allows it"):
        fio_jobs(ActConfig(), 1, "/dev/x", cpus=2, ioengine="external:/x.so",
                 allow_fio_options=["ioengine"])  # fmt: skip


def test_the_run_checks_every_job_file_before_fio_parses_it(tmp_path: Path) -> None:
    """``fio --parse-only`` would read an included job file: the gate comes first."""
    evil, pwned = tmp_path / "evil.fio", tmp_path / "pwned"
    evil.write_text(f"[x]\nexec_prerun=touch {pwned}\n")
    jobs = suite_jobs(load_suite("quick"), str(tmp_path / "t"))
    assert check_job_files(jobs) == []
    name, text = jobs[0]
    problems = check_job_files([(name, text + f"include {evil}\n"), *jobs[1:]])
    assert len(problems) == 1 and problems[0].startswith(f"step {name!r}: line ")
    assert "include" in problems[0] and not pwned.exists()


def test_the_donor_file_reproducer_writes_nothing(tmp_path: Path) -> None:
    """e4defrag with ``donorname`` = another run's ``fio.json`` truncated it: an engine option
    naming a file is on :data:`fio_options.NEVER`."""
    victim = tmp_path / "other" / "steps" / "001-w" / "fio.json"
    victim.parent.mkdir(parents=True)
    victim.write_text('{"jobs": []}')
    path = suite(tmp_path, {"donorname": str(victim), "inplace": "1"})
    opt_ins = [a for n in ("ioengine", "donorname", "inplace") for a in ("--allow-fio-option", n)]
    proc = ssdlab_cli("run", path, "--out", tmp_path / "o", "--set", "engine=e4defrag", *opt_ins)
    line = one_line(proc.stderr)
    assert proc.returncode == 1 and "donorname" in line and "no opt-in allows it" in line
    assert victim.read_text() == '{"jobs": []}' and not (tmp_path / "o" / "steps").exists()


#: options with an opt-in: a guarded one, engine options ssdlab does not know
PATH_OPTIONS = [("cgroup", "fio/x"), ("rbdname", "/tmp/x"), ("no_such_option", "a/b")]
NAMES_A_FILE = "names a file, and makes fio read or write other files"


@pytest.mark.parametrize(("name", "value"), PATH_OPTIONS)
def test_an_opted_in_option_names_no_path(tmp_path: Path, name: str, value: str) -> None:
    """A ``/`` is a path in any option but the allowed ones (``bssplit``): on every path that
    checks a value, with or without the opt-in."""
    with pytest.raises(SuiteError, match=f"option '{name}': '{value}' {NAMES_A_FILE}"):
        load_suite(suite(tmp_path, {name: value}), allow_fio_options=[name])
    assert load_suite(suite(tmp_path, {name: "x"}, "ok.toml"), allow_fio_options=[name])
    head = HEAD.replace('rw = "read"', f'rw = "read"\noptions = {{ {name} = "@cpus" }}')
    (tmp_path / "set.toml").write_text(head)
    proc = ssdlab_cli("run", tmp_path / "set.toml", "--out", tmp_path / "o",
                      "--set", f"cpus={value}", "--allow-fio-option", name)  # fmt: skip
    assert NAMES_A_FILE in one_line(proc.stderr) and proc.returncode == 1
    step = load_suite(suite(tmp_path, {})).steps[0].model_copy(update={"options": {name: value}})
    with pytest.raises(SuiteError, match=NAMES_A_FILE):
        job_file(step, str(tmp_path / "t"), direct=True, header="h")
    jobs = suite_jobs(load_suite("quick"), str(tmp_path / "t"))
    assert NAMES_A_FILE in (fio_options.job_file_problem(f"{jobs[0][1]}{name}={value}\n") or "")
    with pytest.raises(SuiteError, match=NAMES_A_FILE):
        fio_jobs(ActConfig(), 1, "/dev/x", cpus=2, options={name: value},
                 allow_fio_options=[name])  # fmt: skip


@pytest.mark.parametrize("name", ["bssplit", "cmdprio_bssplit"])
def test_allowed_options_keep_their_slashes(tmp_path: Path, name: str) -> None:
    step = load_suite(suite(tmp_path, {name: "4k/50:64k/50"})).steps[0]
    text = job_file(step, str(tmp_path / "t"), direct=True, header="h")
    assert f"{name}=4k/50:64k/50" in text and fio_options.job_file_problem(text) is None
    assert fio_jobs(ActConfig(), 1, "/dev/x", cpus=2, options={name: "4k/50:64k/50"})
