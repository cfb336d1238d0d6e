"""Suite expansion benchmark: loading a suite whose ``bs`` list has 2N entries against one
of N entries (N = 1,000 by default, :data:`~ssdlab.suite.MAX_LIST`).

Run: ``.venv/bin/python benchmarks/bench_suite_expand.py [--entries 1000] [--runs 7]``

Both are measured in the same run, interleaved, in this process: ``load_suite`` of a suite
file with one step expanding an N-entry ``bs`` list into N steps, and of one with two such
steps (2N). Prints the median time of each and their ratio: about 2 when expansion is
linear (it was quadratic: 4 and more).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ssdlab.suite import MAX_LIST, load_suite


def suite_file(directory: Path, entries: int) -> Path:
    """A suite of ``entries`` steps from ``bs`` lists of at most :data:`MAX_LIST` sizes."""
    steps = []
    for first in range(0, entries, MAX_LIST):
        sizes = ", ".join(
            f'"{512 * (i + 1)}"' for i in range(first, min(first + MAX_LIST, entries))
        )
        steps.append(f'[[steps]]\nname = "s{first}-{{bs}}"\nbs = [{sizes}]\n')
    path = directory / f"bs{entries}.toml"
    path.write_text('name = "bench"\n[defaults]\nrw = "read"\nruntime_s = 1\n' + "".join(steps))
    return path


def load_s(path: Path) -> float:
    """Seconds to load (expand and validate) the suite at ``path``."""
    start = time.perf_counter()
    load_suite(path)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=MAX_LIST, help="N, the smaller list")
    parser.add_argument("--runs", type=int, default=7, help="loads of each suite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, large = (suite_file(Path(tmp), n) for n in (args.entries, 2 * args.entries))
        load_s(small), load_s(large)  # warm the imports and caches
        times: dict[Path, list[float]] = {small: [], large: []}
        for _ in range(args.runs):
            for path in (small, large):
                times[path].append(load_s(path))
    small_s, large_s = (statistics.median(times[p]) for p in (small, large))
    print(f"{args.entries:>6,} entries: {small_s * 1000:8.1f} ms")
    print(f"{2 * args.entries:>6,} entries: {large_s * 1000:8.1f} ms")
    print(f"ratio: {large_s / small_s:.2f} (2 = linear)")


if __name__ == "__main__":
    main()
