"""The command line says what it does and does what it says (issue 25, "CLI"): a report is
HTML whatever ``-o`` says, a power trace that covers no step is refused, nothing to compare is
an error, a mistyped suite gets a suggestion, sizes are read as written and printed in one
convention, SIGTERM exits 143, tables fit the terminal, a short ACT log is told its
``--slice``, a step's line names the direction of each p99, latencies carry their unit."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import Loops, needs_loop, ssdlab_cli
from test_trust_run import start, wait_measuring, write_suite

import ssdlab
from ssdlab.cli.reports import _check_comparable
from ssdlab.errors import InputError
from ssdlab.io import read_fio_json
from ssdlab.progress import result_line
from ssdlab.tables import format_latency
from ssdlab.units import parse_capacity, parse_size

ROOT = Path(__file__).parents[1]
DEMO = ROOT / "data" / "quick-demo"
ACT_LOG = Path(__file__).parent / "fixtures" / "act" / "act_storage_1x_30s.log"  # 30 s
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints (exit 1, no traceback)."""
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and "Traceback" not in proc.stderr
    return line


def on_terminal(*args: str | Path, columns: int = 80) -> tuple[int, list[str]]:
    """Run ssdlab with stdout and stderr on a terminal of ``columns`` columns; its exit
    status and the lines it showed, without colours."""
    master, slave = pty.openpty()
    env = os.environ | {"COLUMNS": str(columns)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdlab", *map(str, args)], stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    text = ANSI.sub("", shown.decode())
    return proc.wait(timeout=60), text.replace("\r\n", "\n").splitlines()


# 1. a report is HTML


def test_a_report_to_a_pdf_or_suffixless_name_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    pdf = tmp_path / "x.pdf"
    line = one_error(ssdlab_cli("report", DEMO, "-o", pdf))
    assert f"-o {pdf}: a report is an HTML file" in line
    assert f"give -o {tmp_path / 'x.html'} and add --pdf for {pdf} beside it" in line
    bare = tmp_path / "review"
    line = one_error(ssdlab_cli("report", DEMO, DEMO, "-o", bare))  # a comparison too
    assert f"name it with .html (-o {tmp_path / 'review.html'})" in line
    line = one_error(ssdlab_cli("smart", "report", tmp_path, "-o", tmp_path / "f.pdf"))
    assert "print it from a browser" in line  # smart report has no --pdf
    assert list(tmp_path.iterdir()) == []


# 2. a power trace that covers no step


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:23] + " UTC"


def test_a_power_trace_that_covers_no_step_is_refused_and_not_stored(
    tiny_run: Path, tmp_path: Path
) -> None:
    steps = ssdlab.load(tiny_run).manifest.steps
    an_hour_before = steps[0].started.timestamp() - 3600  # a trace in another time zone
    times = [an_hour_before + k * 0.05 for k in range(200)]
    trace = tmp_path / "yoko.csv"
    trace.write_text("T,P,V,I\n" + "".join(f"{t:.3f},5.0,12.0,0.4\n" for t in times))
    line = one_error(ssdlab_cli("power", "attach", tiny_run, trace))
    assert f"{trace}: covers no step of the run whole, nothing attached" in line
    assert f"the trace spans {_when(round(times[0], 3))} to {_when(round(times[-1], 3))}" in line
    assert re.search(r"the steps \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC to ", line)
    assert not (tiny_run / "power").exists()  # nothing stored, no --replace demanded later


# 3. nothing to compare


@pytest.fixture(scope="module")
def act_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("act") / "native"
    assert ssdlab_cli("act", "import", ACT_LOG, "-o", out, "--slice", "10").returncode == 0
    return out


def test_endurance_compare_without_any_data_is_an_error(act_only: Path) -> None:
    line = one_error(ssdlab_cli("endurance", "compare", DEMO, act_only))
    assert f"no endurance data to compare: {DEMO}, {act_only} hold no drive spec" in line


def test_a_comparison_with_nothing_comparable_is_an_error(act_only: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.html"
    line = one_error(ssdlab_cli("report", DEMO, act_only, "-o", out))
    assert "nothing to compare: no test was measured by two or more of" in line
    assert "--all-cells" not in line and not out.exists()  # no cell left out: it would not help


def test_cells_left_out_as_unlike_say_that_all_cells_compares_them(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "only"\nrw = "randread"\n')
    runs = [tmp_path / "one", tmp_path / "two"]
    for out, runtime in zip(runs, ("1", "2"), strict=True):  # the same cell, another runtime
        proc = ssdlab_cli("run", suite, "-o", out, "--set", f"rt={runtime}", "--label", out.name)
        assert proc.returncode == 0, proc.stderr
    line = one_error(ssdlab_cli("report", *runs, "-o", tmp_path / "c.html"))
    assert "1 measurement whose workload parameters differ left out (--all-cells" in line
    _check_comparable(runs, None, like_for_like=False)  # --all-cells: something to compare
    with pytest.raises(InputError):
        _check_comparable(runs, None, like_for_like=True)


# 4. did you mean


@pytest.mark.parametrize(
    "command", [["run"], ["plan"], ["suites", "show"]], ids=["run", "plan", "show"]
)
def test_a_mistyped_suite_gets_the_closest_names(command: list[str], tmp_path: Path) -> None:
    out = ["-o", str(tmp_path / "out")] if command[0] != "suites" else []
    line = one_error(ssdlab_cli(*command, "enterprise-reveiw", *out))
    assert "no built-in suite of that name; did you mean enterprise-review? (built-in: " in line
    line = one_error(ssdlab_cli(*command, "snia-iop", *out))
    assert "did you mean snia-iops?" in line
    assert "did you mean" not in one_error(ssdlab_cli(*command, "xyz", *out))
    assert not (tmp_path / "out").exists()


# 5. sizes: read as written, printed in binary units


def test_sizes_are_read_as_written_and_bare_letters_as_fio_reads_them() -> None:
    assert parse_capacity("10GB") == 10 * 10**9
    assert parse_capacity("10GiB") == parse_capacity("10g") == parse_capacity("10G") == 10 * 2**30
    assert parse_capacity("1.5TB") == 1_500_000_000_000 and parse_capacity("4096") == 4096
    assert parse_capacity("10g") == parse_size("10g")  # fio's kb_base=1024
    for text in ("10Gb", "10gib", "10 x", "-5", ""):
        with pytest.raises(ValueError, match="not a size"):
            parse_capacity(text)
    assert parse_size("4KiB") == 4000  # what fio does with a job's 4KiB: unchanged


def test_target_size_is_taken_as_written_and_printed_in_gib(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "only"\nrw = "randread"\n')
    for given, shown in (("10GB", "10,000,000,000 bytes (9.3 GiB)"), ("10g", "(10 GiB)")):
        proc = ssdlab_cli("plan", suite, "-o", tmp_path / "out", "--target-size", given)
        assert proc.returncode == 0, proc.stderr
        assert shown in proc.stdout
    line = one_error(ssdlab_cli("plan", suite, "-o", tmp_path / "out", "--target-size", "1m"))
    assert line.endswith("(1 MiB): a file target is at least 16,777,216 bytes (16 MiB)")
    line = one_error(ssdlab_cli("plan", suite, "-o", tmp_path / "out", "--target-size", "10Gb"))
    assert "--target-size: not a size: '10Gb'" in line


@needs_loop
def test_devices_prints_capacities_as_refusals_do(loops: Loops) -> None:
    device = loops.blank()  # 64 MiB
    proc = ssdlab_cli("devices")
    assert proc.returncode == 0, proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if f" {device} " in line]
    assert " 64 MiB " in row and " GB " not in proc.stdout
    refused = ssdlab_cli("run", "quick", "-o", loops.directory / "out", "--target", device)
    assert refused.returncode == 1 and f"({Path(device).name}: loop, 64 MiB, " in refused.stderr


# 6. SIGTERM exits 143, Ctrl-C 130


@pytest.mark.parametrize(("sent", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_run_stopped_by_a_signal_exits_128_plus_it(
    tmp_path: Path, sent: signal.Signals, status: int
) -> None:
    suite = write_suite(tmp_path, '[[steps]]\nname = "long"\nrw = "randread"\n', "", "long")
    out = tmp_path / "out"
    proc = start("run", suite, "--out", out, "--set", "rt=600", stderr=subprocess.PIPE)
    wait_measuring(out, "long", proc)
    proc.send_signal(sent)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == status, stderr
    assert "interrupted during step 'long'" in stderr and "Traceback" not in stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"


# 7. tables fit the terminal


def test_suites_and_summary_fit_an_80_column_terminal() -> None:
    status, lines = on_terminal("suites")
    assert status == 0 and max(map(len, lines)) <= 80
    assert lines[0].startswith("enterprise-review") and lines[0].endswith("…")
    assert lines[-1].startswith("ssdlab suites show NAME")
    status, lines = on_terminal("summary", DEMO)
    assert status == 0 and max(map(len, lines)) <= 80
    shown = " ".join(lines)
    assert "left out p99.9, Jobs, Mean, Max" in shown and "to fit 80 columns" in shown
    assert any("randrw70-4k-qd32" in line for line in lines)
    # to a pipe, no line is cut and every column shows
    piped = ssdlab_cli("summary", DEMO)
    header = next(line for line in piped.stdout.splitlines() if "Step" in line)
    assert all(h in header for h in ("QD", "Jobs", "Mean", "p99.9", "p99.99", "Max"))
    assert piped.stderr == ""


# 8. a short ACT log


def test_an_act_log_shorter_than_a_slice_is_told_its_slice(tmp_path: Path) -> None:
    out = tmp_path / "act"
    line = one_error(ssdlab_cli("act", "import", ACT_LOG, "-o", out))
    assert "could not find 3600 seconds of data (reports end at 30 s); pass --slice 30" in line
    proc = ssdlab_cli("act", "import", ACT_LOG, "-o", out, "--slice", "30")  # as told
    assert proc.returncode == 0 and proc.stdout.startswith("trial 1 (1x, native): passed")


# 9. and 10. a step's line and latencies


def _fio_p99(fio_json: Path, direction: str) -> float:
    return json.loads(fio_json.read_text())["jobs"][0][direction]["clat_ns"]["percentile"][
        "99.000000"
    ]


def test_a_steps_line_names_the_direction_of_each_p99() -> None:
    (mixed,) = (DEMO / "steps").glob("*randrw70*/fio.json")
    line = result_line(read_fio_json(mixed).jobs)
    read, write = (format_latency(_fio_p99(mixed, d)) for d in ("read", "write"))
    assert line.endswith(f"MB/s  read p99 {read}, write p99 {write}")
    (reads,) = (DEMO / "steps").glob("*read-128k*/fio.json")
    assert result_line(read_fio_json(reads).jobs).endswith(
        f"  read p99 {format_latency(_fio_p99(reads, 'read'))}"
    )


def test_summary_latencies_carry_the_unit_that_suits_them() -> None:
    proc = ssdlab_cli("summary", DEMO)
    assert proc.returncode == 0, proc.stderr
    assert not re.search(r"\d,\d{3}\.\d µs", proc.stdout)  # never 3,883.0 µs
    (fio_json,) = (DEMO / "steps").glob("*read-128k*/fio.json")
    p99 = _fio_p99(fio_json, "read")
    assert p99 > 1e6 and f" {format_latency(p99)} " in proc.stdout  # 2.77 ms, not 2,768.9 µs
    assert format_latency(3_883_000) == "3.88 ms"
