"""Start-up benchmark: every ``ssdlab`` command that renders nothing against the interpreter's.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--runs 5] [--run data/quick-demo]``

Each command runs as a fresh ``python -m ssdlab ...`` process (what the ``ssdlab`` script
does), interleaved with the baselines ``python -c pass`` and ``python -c "import ssdlab"``,
``--runs`` times after one warm-up that must succeed; its median wall time is printed with
its ratio to ``import ssdlab`` and the time beyond ``python -c pass``. The data: copies of
``--run`` (the 7-step demo) with the endurance fixture's ``drive.toml``, a parent directory
holding two of them, the power-traced golden corpus and the fixtures in ``tests/fixtures``;
``fleet check`` asks a port where no server listens, which is refused at once.

Goal: a command's start-up (its median minus its own work) within 0.3 s; ``ssdlab --help``
within 0.25 s. Its own work, from one more run under ``-X importtime``: the time outside
imports (beyond ``python -c pass``), plus the imports of the data libraries it uses
(:data:`DATA_LIBS`, for the commands that read or write frames; DuckDB only for ``sql``).
The libraries of :data:`HEAVY` it imports are listed with their import time, ``!`` marking
one of :data:`FORBIDDEN` it does not use (``tests/test_startup_imports.py`` fails on those).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
#: libraries no command that renders nothing may import unless it uses them
FORBIDDEN = ("altair", "vl_convert", "nbconvert", "papermill", "duckdb")
#: the libraries whose imports are reported (top-level package names)
HEAVY = (*FORBIDDEN, "polars", "numpy", "pyarrow", "pandas", "IPython", "jinja2")
#: the libraries a command reading or writing frames uses
DATA_LIBS = ("polars", "numpy", "pyarrow")
START_BUDGET_S = 0.3
HELP_BUDGET_S = 0.25


@dataclass(frozen=True)
class Data:
    """What the commands read: a run with a drive spec (``drive.toml``), a copy of it, the
    parent directory of both, a run with a power trace, and ``out`` (made anew per command)."""

    run: Path
    copy: Path
    parent: Path
    power: Path
    out: Path


@dataclass(frozen=True)
class Command:
    """``ssdlab ARGS``, the libraries of :data:`HEAVY` its work uses, and whether it ends
    with an error line by design (``summary`` of a parent directory names its runs)."""

    args: tuple[str, ...]
    uses: tuple[str, ...] = ()
    refuses: bool = False


def commands(data: Data) -> dict[str, Command]:
    """Every command that renders nothing, by name, on ``data``."""
    out = str(data.out)
    run, copy = str(data.run), str(data.copy)
    smart = FIXTURES / "telemetry" / "smart"
    act_log = FIXTURES / "act" / "act_storage_1x_30s.log"
    frames = DATA_LIBS
    return {
        "--help": Command(("--help",)),
        "import --help": Command(("import", "--help")),
        "run --help": Command(("run", "--help")),
        "summary RUN": Command(("summary", run), frames),
        "summary PARENT": Command(("summary", str(data.parent)), frames, refuses=True),
        "suites": Command(("suites",)),
        "suites show": Command(("suites", "show", "quick")),
        "plan": Command(("plan", "quick", "-o", out)),
        "devices": Command(("devices",)),
        "import": Command(("import", str(FIXTURES / "import24" / "pbench"), "-o", out), frames),
        "qos check": Command(("qos", "check", run, "-p", "hyperscale"), frames),
        "qos profiles": Command(("qos", "profiles")),
        "smart show": Command(("smart", "show", str(smart / "smartctl_nvme.json"))),
        "smart import": Command(("smart", "import", str(smart), "-o", out), frames),
        "power show": Command(("power", "show", str(data.power)), frames),
        "endurance project": Command(("endurance", "project", run), frames),
        "endurance compare": Command(("endurance", "compare", run, copy), frames),
        "act latency": Command(("act", "latency", str(act_log), "--slice", "10"), frames),
        "act config": Command(("act", "config")),
        "sql": Command(("sql", run, "select count(*) from runs"), (*frames, "duckdb")),
        "fleet check": Command(("fleet", "check", "127.0.0.1:1", "--timeout", "5"), refuses=True),
    }


def demo_data(run: Path, work: Path) -> Data:
    """Copies of the results directory ``run`` under ``work`` (with the endurance fixture's
    drive spec), their parent directory, and the power-traced golden corpus."""
    parent = work / "runs"
    for name in ("a", "b"):
        shutil.copytree(run, parent / name)
        shutil.copy(FIXTURES / "endurance" / "drive.toml", parent / name)
    power = FIXTURES / "golden" / "corpora" / "telemetry"
    return Data(parent / "a", parent / "b", parent, power, work / "out")


def python(args: list[str], out: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python ARGS`` run after removing ``out`` (a new results directory), and its wall
    seconds."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    return proc, time.perf_counter() - start


def ssdlab(args: tuple[str, ...], out: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``python [FLAGS] -m ssdlab ARGS``, ``out`` removed first."""
    return python([*flags, "-m", "ssdlab", *args], out)[0]


def check_ran(name: str, command: Command, proc: subprocess.CompletedProcess[str]) -> None:
    """Raise unless the command did its work: exit status 0 or 1 (a failed verdict), no
    traceback, and output but no error line (or, when it refuses, the error line)."""
    lines = proc.stderr.splitlines()
    errors = sum(line.startswith("error:") for line in lines)
    ran = errors == 1 if command.refuses else bool(proc.stdout.strip()) and not errors
    if not ran or proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
        raise RuntimeError(f"{name} did not run (exit {proc.returncode}): {proc.stderr.strip()}")


def import_times(stderr: str) -> dict[str, float]:
    """Seconds each top-level package took to import (the sum of its modules' own times),
    from ``python -X importtime``'s report on ``stderr``."""
    seconds: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        own, _cumulative, module = line.removeprefix("import time:").split("|")
        package = module.strip().split(".")[0]
        seconds[package] = seconds.get(package, 0.0) + int(own) / 1e6
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command")
    parser.add_argument(
        "--run", type=Path, default=ROOT / "data" / "quick-demo", help="results directory"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = demo_data(options.run, Path(work))
        every = {"python -c pass": ["-c", "pass"], "import ssdlab": ["-c", "import ssdlab"]}
        every |= {name: ["-m", "ssdlab", *c.args] for name, c in commands(data).items()}
        imports = {}
        for name, command in commands(data).items():  # warm caches; check each does its work
            check_ran(name, command, ssdlab(command.args, data.out))
            imports[name] = import_times(ssdlab(command.args, data.out, "-X", "importtime").stderr)
        times: dict[str, list[float]] = {name: [] for name in every}
        for _ in range(options.runs):
            for name, args in every.items():
                times[name].append(python(args, data.out)[1])
    report(commands(data), {name: statistics.median(t) for name, t in times.items()}, imports)


def report(
    measured: dict[str, Command], median: dict[str, float], imports: dict[str, dict[str, float]]
) -> None:
    """Print each command's median, ratio, time beyond ``python -c pass``, own work and
    start-up against the goal, and the heavy libraries it imported."""
    bare, loaded = median["python -c pass"], median["import ssdlab"]
    print(f"baseline: python -c pass {bare:.3f} s, python -c 'import ssdlab' {loaded:.3f} s")
    print(
        f"{'ssdlab ...':18s} {'median':>7s} {'x imp':>6s} {'beyond':>7s} {'own':>6s} "
        f"{'start':>6s} goal  heavy imports (s; ! = forbidden, not used)"
    )
    failed = []
    for name, command in measured.items():
        spent = imports[name]
        used = sum(spent.get(lib, 0.0) for lib in command.uses)
        outside = max(0.0, median[name] - bare - sum(spent.values()))
        start = max(0.0, median[name] - used - outside)
        budget = HELP_BUDGET_S if name == "--help" else START_BUDGET_S
        met = start <= budget
        if not met:
            failed.append(name)
        unused = {lib for lib in FORBIDDEN if lib not in command.uses}
        heavy = " ".join(
            f"{lib}{'!' * (lib in unused)} {spent[lib]:.2f}" for lib in HEAVY if lib in spent
        )
        print(
            f"{name:18s} {median[name]:7.3f} {median[name] / loaded:6.1f} "
            f"{median[name] - bare:7.3f} {used + outside:6.3f} {start:6.3f} "
            f"{'met ' if met else 'NOT '}  {heavy}"
        )
    print(
        f"goal: start-up within {START_BUDGET_S} s plus own work (--help {HELP_BUDGET_S} s): "
        + (f"NOT met by {', '.join(failed)}" if failed else "met by every command")
    )


if __name__ == "__main__":
    main()
