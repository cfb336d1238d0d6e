"""Start-up benchmark: ``ssdlab --help`` against the interpreter's own start-up.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--runs 21]``

Both are measured in the same run, interleaved, as fresh processes: the baseline is
``python -c pass``, the measured command ``python -m ssdlab --help`` (the ``ssdlab`` script
does the same). Prints the median wall time of each, the ratio, and the absolute time of
``ssdlab --help`` against its budget (0.25 s); also the subcommand helps that must start
without the data libraries.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

BUDGET_S = 0.25
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "ssdlab --help": ["-m", "ssdlab", "--help"],
    "ssdlab import --help": ["-m", "ssdlab", "import", "--help"],
    "ssdlab run --help": ["-m", "ssdlab", "run", "--help"],
}


def wall_s(args: list[str]) -> float:
    """Seconds from starting ``python ARGS`` to its exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command")
    runs = parser.parse_args().runs
    for args in COMMANDS.values():  # warm the page cache and the bytecode caches
        wall_s(args)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, args in COMMANDS.items():
            times[name].append(wall_s(args))
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["python -c pass"]
    for name, value in median.items():
        print(f"{name:24s} median {value * 1000:7.1f} ms  min {min(times[name]) * 1000:7.1f} ms")
    help_s = median["ssdlab --help"]
    print(
        f"ssdlab --help: {help_s:.3f} s ({help_s / base:.1f}x python -c pass); "
        f"budget {BUDGET_S} s: {'met' if help_s <= BUDGET_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
