"""The safety rules for suites: fio runs only the job file ssdlab writes, and ssdlab decides the
target, the direction and what runs. Every test here is a reproducer of a hole in older
versions: with real fio, it shows that nothing was written or executed."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, sh, ssdlab_cli

from ssdlab import fio_options
from ssdlab.act.workload import ActConfig, fio_jobs
from ssdlab.errors import SsdlabError, SuiteError
from ssdlab.fio import job_file
from ssdlab.runner import run_suite
from ssdlab.suite import load_suite

SUITE = """
name = "t"
[params]
step_s = 1
engine = "psync"
qd = 1
consistency_s = 2
[defaults]
size = "4m"
ioengine = "@engine"
runtime_s = "@step_s"
iodepth = "@qd"
"""


#: a billion laughs: 9^20 strings once expanded
ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}]\n" for i in range(20))
).encode()


def suite_file(tmp_path: Path, step: str, name: str = "s.toml", head: str = SUITE) -> Path:
    path = tmp_path / name
    path.write_text(head + '[[steps]]\nname = "a"\n' + step + "\n")
    return path


def refused(*args: str | Path) -> str:
    """The one ``error:`` line of a failed ``ssdlab`` command (no traceback)."""
    proc = ssdlab_cli(*args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return errors[0]


def digest(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@needs_loop
def test_filename_option_cannot_redirect_writes_to_another_device(
    tmp_path: Path, loops: Loops
) -> None:
    device = loops.blank()
    sh("dd", "if=/dev/urandom", f"of={device}", "bs=1M", "count=4", "conv=fsync")
    before = digest(device)
    suite = suite_file(tmp_path, f'rw = "write"\noptions = {{ filename = "{device}" }}')
    error = refused("run", suite, "--out", tmp_path / "o")
    assert "step 'a'" in error and "'filename'" in error and "ssdlab sets it" in error
    assert digest(device) == before and not (tmp_path / "o").exists()


def test_filename_option_cannot_redirect_to_another_file(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me" * 1000)
    suite = suite_file(tmp_path, f'rw = "write"\noptions = {{ filename = "{victim}" }}')
    assert "'filename'" in refused("run", suite, "--out", tmp_path / "o")
    assert victim.read_bytes() == b"keep me" * 1000


def test_read_only_suite_cannot_relay_out_a_file_target(tmp_path: Path) -> None:
    """fio lays a file smaller than ``filesize`` out again (new data), even to read it."""
    target = tmp_path / "target"
    target.write_bytes(b"A" * 4 * 2**20)
    suite = suite_file(tmp_path, 'rw = "read"\noptions = { filesize = "8m" }')
    error = refused("run", suite, "--target", target, "--out", tmp_path / "o")
    assert "'filesize' makes fio write" in error
    assert target.read_bytes() == b"A" * 4 * 2**20


@needs_loop
def test_read_only_suite_cannot_write_a_mounted_file_system(tmp_path: Path, loops: Loops) -> None:
    device = loops.blank()
    sh("mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", device)
    mounted = loops.mount(device)
    (mounted / "data").write_text("precious")
    sneaky = suite_file(
        tmp_path, 'rw = "read"\noptions = { rw = "write", allow_mounted_write = 1 }'
    )
    error = refused("run", sneaky, "--target", device, "--out", tmp_path / "o1")
    assert "'rw'" in error and "step's `rw` field" in error
    # opted in, the option makes the step a writing one: the mounted device is refused
    opted = suite_file(tmp_path, 'rw = "read"\noptions = { allow_mounted_write = 1 }', "b.toml")
    suite = load_suite(opted, allow_fio_options=["allow_mounted_write"])
    assert suite.writes and not load_suite("quick").steps[0].writes
    name = Path(device).name
    with pytest.raises(SsdlabError, match="mounted"):
        run_suite(suite, tmp_path / "o2", target=Path(device), destroy_data=name)
    assert not (tmp_path / "o2" / "steps").exists()
    assert (mounted / "data").read_text() == "precious"


def test_exec_prerun_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    suite = suite_file(tmp_path, f'rw = "read"\noptions = {{ exec_prerun = "touch {pwned}" }}')
    error = refused("run", suite, "--out", tmp_path / "o")
    assert "'exec_prerun' runs programs" in error and "--allow-fio-option exec_prerun" in error
    assert not pwned.exists()


def test_engines_outside_the_safe_set_need_the_opt_in(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, 'rw = "read"\nioengine = "sg"')
    error = refused("run", suite, "--out", tmp_path / "o")
    assert "ioengine 'sg'" in error and "--allow-fio-option ioengine" in error
    assert load_suite(suite, allow_fio_options=["ioengine"]).writes  # ssdlab cannot tell


@pytest.mark.parametrize("engine", ["exec", "external:/tmp/engine.so", "/tmp/engine.so"])
def test_engines_that_run_programs_or_load_code_have_no_opt_in(tmp_path: Path, engine: str) -> None:
    suite = suite_file(tmp_path, f'rw = "read"\nioengine = "{engine}"')
    for opt_in in ((), ("--allow-fio-option", "ioengine")):
        error = refused("run", suite, "--out", tmp_path / "o", *opt_in)
        assert f"ioengine {engine!r}" in error and "no opt-in" in error


def test_newline_in_a_set_value_runs_nothing(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    suite = suite_file(tmp_path, 'rw = "read"')
    value = f'ioengine="psync\\nexec_prerun=touch {pwned}"'  # TOML: a newline in the string
    error = refused(
        "run", suite, "--out", tmp_path / "o", "--set", value.replace("ioengine", "engine", 1)
    )
    assert error.startswith("error: --set engine=") and "'\\n'" in error
    assert not pwned.exists()


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ('options = {{ randrepeat = "0\\nexec_prerun=touch {pwned}" }}', "'randrepeat': value"),
        ('size = "1\\nexec_prerun=touch {pwned}\\n%"', "size (a): Value error, value"),
        ('bs = "4k\\n"', "bs (a): Value error, value"),
        ('options = {{ norandommap = "1\\n[x]" }}', "'norandommap': value"),
        ('options = {{ "exec_prerun\\n" = "1" }}', "not a fio option name"),
        ('options = {{ cpus_allowed = "0;exec_prerun=touch {pwned}" }}', "has ';'"),
        ('options = {{ cpus_allowed = "${{HOME}}" }}', "has '$'"),
    ],
)
def test_values_cannot_start_new_lines_sections_or_expansions(
    tmp_path: Path, step: str, message: str
) -> None:
    pwned = tmp_path / "pwned"
    suite = suite_file(tmp_path, 'rw = "read"\n' + step.format(pwned=pwned))
    error = refused("run", suite, "--out", tmp_path / "o")
    assert str(suite) in error and "a" in error and message in error
    assert not pwned.exists()


def test_suite_name_cannot_inject_into_the_job_file_header(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    head = SUITE.replace('name = "t"', f'name = "t\\nexec_prerun=touch {pwned}"')
    suite = suite_file(tmp_path, 'rw = "read"', head=head)
    assert "one line" in refused("run", suite, "--out", tmp_path / "o")
    assert not pwned.exists()


def test_job_file_is_the_last_line_of_defence(tmp_path: Path) -> None:
    step = load_suite(suite_file(tmp_path, 'rw = "read"')).steps[0]
    target = str(tmp_path / "t")
    with pytest.raises(SuiteError, match="header"):
        job_file(step, target, direct=True, header="x\nexec_prerun=touch /tmp/x")
    for options in ({"filename": "/dev/sda"}, {"rw": "write"}, {"log_avg_msec": 10}):
        bad = step.model_copy(update={"options": options})
        with pytest.raises(SuiteError, match=next(iter(options))):
            job_file(bad, target, direct=True, header="h")
    with pytest.raises(SuiteError, match="ioengine"):
        job_file(step.model_copy(update={"ioengine": "psync\nexec_prerun=x"}), target,
                 direct=True, header="h")  # fmt: skip
    # fio splits file names at ':': escaped, a colon stays in the one target's name
    assert f"filename={target}\\:/dev/sda\n" in job_file(
        step, f"{target}:/dev/sda", direct=True, header="h"
    )
    for bad in (f"{target}$HOME", f"{target}\\x", f" {target}", f"{target}\nexec_prerun=x"):
        with pytest.raises(SuiteError, match="cannot be written to a fio job file"):
            job_file(step, bad, direct=True, header="h")
    # repeating ssdlab's own value is a no-op, written once
    same = job_file(step.model_copy(update={"options": {"group_reporting": 1}}), target,
                    direct=True, header="h")  # fmt: skip
    assert same.count("group_reporting=") == 1


@pytest.mark.parametrize(
    ("target", "kwargs", "message"),
    [
        ("/dev/x", {"options": {"filename": "/dev/sda"}}, "--fio-option: option 'filename'"),
        ("/dev/x", {"options": {"exec_prerun": "/bin/x"}}, "--allow-fio-option exec_prerun"),
        ("/dev/x", {"options": {"thinktime": "1\nexec_prerun=x"}}, "has '\\n'"),
        ("/dev/x", {"ioengine": "exec"}, "--ioengine: ioengine 'exec'"),
        ("/dev/x${HOME}", {}, "holds '$'"),
    ],
)
def test_act_job_files_follow_the_same_rules(target: str, kwargs: dict, message: str) -> None:
    with pytest.raises(SuiteError, match=re.escape(message)):
        fio_jobs(ActConfig(), 1, target, cpus=2, **kwargs)
    fio_jobs(ActConfig(), 1, "/dev/x", cpus=2, options={"cpus_allowed": "0-1"})


def test_opt_in_is_the_users_not_the_suite_files(tmp_path: Path) -> None:
    marker, script = tmp_path / "ran", tmp_path / "prep.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    suite = suite_file(tmp_path, f'rw = "read"\noptions = {{ exec_prerun = "{script}" }}')
    sneaky = tmp_path / "sneaky.toml"
    sneaky.write_text('allowed_fio_options = ["exec_prerun"]\n' + suite.read_text())
    assert "only the user opts in" in refused("run", sneaky, "--out", tmp_path / "o1")
    with pytest.raises(SuiteError, match="exec_prerun"):
        load_suite(suite, allow_fio_options=["exec_postrun"])
    for never in ("filename", "rw", "log_avg_msec"):
        with pytest.raises(SuiteError, match=f"--allow-fio-option {never}"):
            load_suite(suite, allow_fio_options=[never])
    chosen = load_suite(suite, allow_fio_options=["exec_prerun"])
    out = tmp_path / "o2"
    run_suite(chosen, out)
    assert marker.exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite_definition"]["allowed_fio_options"] == ["exec_prerun"]


@pytest.mark.parametrize(
    ("include", "message"),
    [
        ("/etc/passwd", "absolute path"),
        ("../outside.toml", "leaves the suite file's directory"),
        ("link.toml", "leaves the suite file's directory"),
        ("sub/../../outside.toml", "leaves the suite file's directory"),
        ("no-such", "no such file"),
        ("notes.txt", ".toml, .yaml or .yml"),
    ],
)
def test_includes_stay_in_the_suite_directory(tmp_path: Path, include: str, message: str) -> None:
    outside = suite_file(tmp_path, 'rw = "read"', "outside.toml")
    here = tmp_path / "here"
    here.mkdir()
    (here / "link.toml").symlink_to(outside)
    (here / "notes.txt").write_text("")
    suite = here / "s.toml"
    suite.write_text(f'name = "i"\ninclude = ["{include}"]\n')
    error = refused("run", suite, "--out", tmp_path / "o")
    assert str(suite) in error and message in error


def test_includes_from_below_and_built_ins_still_work(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    suite_file(tmp_path / "sub", 'rw = "read"', "base.toml")
    top = tmp_path / "top.toml"
    top.write_text('name = "top"\ninclude = ["sub/base.toml", "quick"]\n')
    steps = [s.name for s in load_suite(top).steps]
    assert steps[0] == "a" and "randread-4k-qd1" in steps


def test_unknown_set_parameter_names_the_closest(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, 'rw = "read"')
    error = refused("run", suite, "--out", tmp_path / "o", "--set", "consistancy_s=3600")
    assert error == (
        "error: --set consistancy_s: suite 't' has no such parameter (did you mean "
        "consistency_s?); its parameters: consistency_s, engine, qd, step_s"
    )
    error = refused("run", "quick", "--out", tmp_path / "o", "--set", "qd=4")
    assert error == "error: --set qd: suite 'quick' has no parameters"


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("qd=abc", "--set qd='abc' (iodepth of step 'a'): Input should be a valid integer"),
        ("step_s=-1", "--set step_s=-1 (runtime_s of step 'a'): Input should be greater than 0"),
        ("qd=[1,2]", "--set qd=[1, 2] (iodepth of step 'a'): lists several iodepth"),
        ("engine=sg", "--set engine='sg' (ioengine of step 'a'): ioengine 'sg'"),
    ],
)
def test_bad_set_values_blame_the_parameter(tmp_path: Path, setting: str, expected: str) -> None:
    suite = suite_file(tmp_path, 'rw = "read"')
    assert refused("run", suite, "--out", tmp_path / "o", "--set", setting).startswith(
        f"error: {expected}"
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("latin1.toml", 'name = "caf\xe9"\n'.encode("latin-1"), "not UTF-8"),
        ("bomb.yaml", ALIAS_BOMB, "YAML aliases"),
        ("deep.toml", b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply"),
        ("deep.yaml", b"x: " + b"[" * 200_000 + b"\n", "nested deeper than 32 levels"),
        ("digits.toml", b"x = " + b"9" * 5000 + b"\n", "not valid TOML"),
        ("digits.yaml", b"x: " + b"9" * 5000 + b"\n", "not valid YAML"),
    ],
)
def test_hostile_suite_files_give_one_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    error = refused("run", path, "--out", tmp_path / "o")
    assert str(path) in error and message in error


def _unknown_to_fio(names: set[str]) -> list[str]:
    """The ``names`` fio 3.33 knows neither as a job option, an alias nor an option of the
    safe engines."""
    text = _fio("--cmdhelp=all") + _fio("--enghelp=io_uring") + _fio("--enghelp=libaio")
    listed = {m.group(1) for m in re.finditer(r"^\s*([a-z][\w-]*)\s*:", text, re.MULTILINE)}
    return sorted(n for n in names - listed if "No such command" in _fio(f"--cmdhelp={n}"))


def _fio(*args: str) -> str:
    proc = subprocess.run(["fio", *args], capture_output=True, text=True, check=False)
    return proc.stdout + proc.stderr


def test_every_name_in_the_policy_is_a_fio_option() -> None:
    policy = fio_options.STEP_FIELDS.keys() | fio_options.SSDLAB_OWN | fio_options.ALLOWED
    policy |= set().union(*fio_options.GUARDED.values())
    command_line_only = ["trigger", "trigger-file", "trigger-remote", "trigger-timeout"]
    assert _unknown_to_fio(policy | {"no_such_option"}) == ["no_such_option", *command_line_only]


def _fio_aliases() -> dict[str, str]:
    """alias -> option, from ``fio --cmdhelp=NAME`` of every option ``--cmdhelp=all`` lists."""
    names = re.findall(r"^\s*([a-z][\w-]*)\s*:", _fio("--cmdhelp=all"), re.MULTILINE)
    with ThreadPoolExecutor(4) as pool:
        texts = list(pool.map(lambda name: _fio(f"--cmdhelp={name}"), names))
    pattern = re.compile(r"^\s*([a-z][\w-]*): .*\n\s*alias: ([a-z][\w-]*)\s*$", re.MULTILINE)
    return {m.group(2): m.group(1) for text in texts for m in pattern.finditer(text)}


def _policy_group(name: str) -> str | None:
    """Which group of the policy holds ``name`` (a step field's by the field), or None."""
    if name in fio_options.STEP_FIELDS:
        return f"step field {fio_options.STEP_FIELDS[name]}"
    groups = {"ssdlab's own": fio_options.SSDLAB_OWN, "allowed": fio_options.ALLOWED}
    return next((g for g, names in (groups | fio_options.GUARDED).items() if name in names), None)


def test_fio_aliases_are_in_the_group_of_their_option() -> None:
    """An alias the policy does not know would pass a step field or ssdlab's own option."""
    aliases = _fio_aliases()
    if not aliases:
        assert not _fio("--version").startswith("fio-3.33"), "fio 3.33's help did not parse"
        pytest.skip("this fio's --cmdhelp output lists no aliases ssdlab can parse")
    assert aliases["fileoffset"] == "offset" and aliases["disable_bw"] == "disable_bw_measurement"
    wrong = {
        alias: (option, _policy_group(alias), _policy_group(option))
        for alias, option in aliases.items()
        if _policy_group(alias) != _policy_group(option)
    }
    assert wrong == {}


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("write_iolog", "/dev/sda", "no opt-in allows it"),
        ("replay_redirect", "/dev/nvme0n1", "no opt-in allows it"),
        ("read_iolog", "/proc/self/mem", "no opt-in allows it"),
        ("directory", "/sys/block", "no opt-in allows it"),
        ("opendir", "//dev/./disk", "no opt-in allows it"),
        ("filename_format", "/tmp/../dev/sda", "no opt-in allows it"),
        ("write_iolog", "{link}", "no opt-in allows it"),
        ("mem", "mmap:/dev/sda", "names a file"),
        ("mem", "mmap:{link}", "names a file"),
    ],
)
def test_options_that_open_other_files_than_the_target_have_no_opt_in(
    tmp_path: Path, name: str, value: str, says: str
) -> None:
    """fio would open these files unjudged by the target gate: a manifest, a device."""
    link = tmp_path / "link"
    link.symlink_to("/dev/null")
    options = f'options = {{ {name} = "{value.format(link=link)}" }}'
    suite = suite_file(tmp_path, 'rw = "read"\n' + options)
    with pytest.raises(SuiteError, match=f"'{name}'.*other files") as exc:
        load_suite(suite, allow_fio_options=[name])
    assert says in str(exc.value)
    step = load_suite(suite_file(tmp_path, 'rw = "read"', "ok.toml")).steps[0]
    with pytest.raises(SuiteError, match="other files"):  # the job file checks it again
        job_file(step.model_copy(update={"options": {name: value.format(link=link)}}),
                 str(tmp_path / "t"), direct=True, header="h")  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('size = "200%"', "size '200%': a share of the target is more than 0% and at most 100%"),
        ('size = "60%"\noffset = "50%"', "size 60% from offset 50% ends past the target"),
        ('size = "10%"\noffset = "100%"', "offset '100%'"),
    ],
)
def test_shares_beyond_the_target_are_refused_and_leave_it_alone(
    tmp_path: Path, fields: str, message: str
) -> None:
    """fio cut a file target to 0 bytes to read ``size = "200%"`` of it."""
    target = tmp_path / "target"
    target.write_bytes(b"A" * 2**20)
    suite = suite_file(tmp_path, 'rw = "read"\n' + fields, head=SUITE.replace('size = "4m"', ""))
    error = refused("run", suite, "--target", target, "--out", tmp_path / "o")
    assert str(suite) in error and "(a)" in error and message in error
    assert target.read_bytes() == b"A" * 2**20


def test_a_target_whose_name_holds_a_colon_is_that_one_file(tmp_path: Path) -> None:
    """`--out runs/2026-11-24T00:40` puts ':' into the temporary target's path: fio must
    open that file, not split its name into two files."""
    out = tmp_path / "run-00:40"
    proc = ssdlab_cli("run", suite_file(tmp_path, 'rw = "randwrite"'), "--out", out)
    assert proc.returncode == 0, proc.stderr
    job = next((out / "steps").glob("*/job.fio")).read_text()
    assert f"filename={str(out / 'target.tmp').replace(':', chr(92) + ':')}\n" in job
    assert not (tmp_path / "run-00").exists()  # what fio would have made of the name's head


@pytest.mark.parametrize("mark", ["#", ";"])
def test_a_target_holding_a_comment_mark_is_refused_before_anything_is_written(
    tmp_path: Path, mark: str
) -> None:
    """fio 3.33 ends a job-file value at ``#`` or ``;`` (no escape): ``victim#x`` was recorded
    while fio wrote ``victim``; ``/dev/nvme0n1 #x`` would have skipped every device check."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me" * 1000)
    target = tmp_path / f"victim{mark}x"
    suite = suite_file(tmp_path, 'rw = "write"')
    error = refused("run", suite, "--target", target, "--out", tmp_path / "o")
    assert f"holds {mark!r}" in error and "comment" in error
    assert victim.read_bytes() == b"keep me" * 1000
    assert not target.exists() and not (tmp_path / "o").exists()
    with pytest.raises(SuiteError, match="comment"):
        fio_options.check_target(f"/dev/nvme0n1 {mark}x")


def test_fio_opens_exactly_the_target_the_job_file_names(tmp_path: Path) -> None:
    """Every character a target may hold reaches fio as it is: fio reads the one file named,
    creates no other (a read lays a missing file out, so another name would show)."""
    step = load_suite(suite_file(tmp_path, 'rw = "read"\nloops = 1\nsize = "4k"')).steps[0]
    files = tmp_path / "files"
    files.mkdir()
    names = ["a:b", "a b=[c]", "a%b,c", "a'b\"c", "ä"]
    for name in names:
        (files / name).write_bytes(b"A" * 4096)
    for name in names:
        job = tmp_path / "job.fio"
        job.write_text(job_file(step, str(files / name), direct=False, header="h"))
        done = subprocess.run(
            ["fio", "--output-format=json", job], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["jobs"][0]["read"]["io_bytes"] == 4096
        assert sorted(p.name for p in files.iterdir()) == sorted(names), name
