"""Live power sampling in a background thread, every ``interval_s`` seconds until stopped.

Samples are stamped with the wall clock (``time.time()``, epoch seconds) halfway through the
measurement. Failed measurements (a command's non-zero exit, a timeout, unparsable output,
an unreadable file, and any other exception a sampler's ``measure`` raises, e.g. a plug-in's
bug) are counted in ``meta["errors"]`` with ``meta["last_error"]``; readings rejected as
invalid (0 W from a BMC, ...) in ``meta["invalid"]``; sampling goes on either way.

- :class:`CommandSampler`: any command printing watts; :class:`IpmitoolSampler` on top of it
  (whole-server power from the BMC).
- :class:`RaplSampler`: Linux RAPL energy counters. RAPL measures CPU package (or DRAM)
  power, never drive power: use it to account for the host, not the SSD.
"""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import polars as pl

from .ipmitool import parse_instantaneous
from .trace import PowerTrace

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def parse_watts(text: str) -> float:
    """The first number in ``text``, in watts."""
    m = _NUMBER.search(text)
    if m is None:
        raise ValueError(f"no number in command output {text.strip()[:80]!r}")
    return float(m.group())


class PeriodicSampler:
    """Base class: calls :meth:`measure` every ``interval_s`` seconds in a thread.

    Use as a context manager, or :meth:`start` then :meth:`stop`; :meth:`trace` gives the
    samples so far. Subclasses implement :meth:`measure` and may extend :meth:`describe`.
    ``on_sample(time_s, watts)``, when set, is called from the sampling thread with every
    valid sample as it comes (e.g. to append it to a file); its exceptions count as errors.
    """

    def __init__(self, interval_s: float = 1.0) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.interval_s = interval_s
        self._samples: list[tuple[float, float]] = []
        self._invalid = 0
        self._errors = 0
        self._last_error: str | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._measured = threading.Event()  # the first measurement is done (or failed)
        self._thread: threading.Thread | None = None
        self.on_sample: Callable[[float, float], None] | None = None

    def measure(self) -> tuple[float, float | None] | None:
        """One measurement: (epoch seconds, watts or None if invalid), or None for no sample."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """What the trace's ``meta`` says about the source."""
        return {"interval_s": self.interval_s}

    def _sample_once(self) -> None:
        try:
            result = self.measure()
            if result is None:
                return
            when, watts = result
            with self._lock:
                if watts is None:
                    self._invalid += 1
                else:
                    self._samples.append((when, watts))
            if watts is not None and self.on_sample is not None:
                self.on_sample(when, watts)
        except Exception as exc:  # never ends sampling: counted, and the run says so
            expected = isinstance(exc, (OSError, subprocess.SubprocessError, ValueError))
            with self._lock:
                self._errors += 1
                self._last_error = str(exc) if expected else repr(exc)  # repr: a bug's type

    def _run(self) -> None:
        next_tick = time.monotonic()
        while not self._stopping.is_set():
            self._sample_once()
            self._measured.set()
            next_tick += self.interval_s
            late = time.monotonic() - next_tick
            if late > 0:  # a slow measurement: skip the ticks it overran
                next_tick += math.ceil(late / self.interval_s) * self.interval_s
            self._stopping.wait(max(0.0, next_tick - time.monotonic()))

    def start(self) -> PeriodicSampler:
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self._thread = threading.Thread(target=self._run, name="power-sampler", daemon=True)
        self._thread.start()
        return self

    def wait_first(self, timeout_s: float) -> bool:
        """Wait until the first measurement is done (a slow meter or a loaded machine may
        take a while); False if ``timeout_s`` passed first."""
        return self._measured.wait(timeout_s)

    def stop(self) -> PowerTrace:
        """Stop sampling (letting a running measurement finish) and return the trace."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        return self.trace()

    def trace(self) -> PowerTrace:
        with self._lock:
            samples = list(self._samples)
            counts = {"invalid": self._invalid, "errors": self._errors}
            last_error = self._last_error
        frame = pl.DataFrame(
            samples, schema={"time_s": pl.Float64, "power_w": pl.Float64}, orient="row"
        )
        meta = {**self.describe(), "samples": len(samples), **counts, "last_error": last_error}
        return PowerTrace(frame, meta)

    def __enter__(self) -> PeriodicSampler:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class CommandSampler(PeriodicSampler):
    """Run ``command`` every ``interval_s`` seconds; ``parse`` turns its stdout into watts.

    ``command`` is an argument list, or a string split like a shell would (no shell runs).
    Each run may take up to ``timeout_s`` (default: the interval, at least 1 s).
    """

    source = "command"

    def __init__(
        self,
        command: Sequence[str] | str,
        interval_s: float = 1.0,
        *,
        parse: Callable[[str], float | None] = parse_watts,
        timeout_s: float | None = None,
    ) -> None:
        super().__init__(interval_s)
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        self.parse = parse
        self.timeout_s = timeout_s if timeout_s is not None else max(interval_s, 1.0)

    def measure(self) -> tuple[float, float | None]:
        started = time.time()
        out = subprocess.run(
            self.command, capture_output=True, text=True, timeout=self.timeout_s, check=True
        ).stdout
        return (started + time.time()) / 2, self.parse(out)

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "command": self.command, **super().describe()}


class IpmitoolSampler(CommandSampler):
    """Sample ``ipmitool [args] dcmi power reading``; 0 W and 65535 W count as invalid.

    ``args`` go before ``dcmi`` (e.g. ``["-I", "lanplus", "-H", host, "-U", user, "-f",
    password_file]``).
    """

    source = "ipmitool_dcmi"

    def __init__(
        self,
        interval_s: float = 1.0,
        *,
        args: Sequence[str] = (),
        ipmitool: str = "ipmitool",
        timeout_s: float | None = None,
    ) -> None:
        super().__init__(
            [ipmitool, *args, "dcmi", "power", "reading"],
            interval_s,
            parse=parse_instantaneous,
            timeout_s=timeout_s,
        )


class RaplSampler(PeriodicSampler):
    """CPU power from a RAPL domain (``/sys/class/powercap/intel-rapl:N``): never drive power.

    Power is the change of ``energy_uj`` (µJ) between two reads over the time between them,
    stamped halfway; the counter wraps at ``max_energy_range_uj``. The first read only sets
    the baseline.
    """

    source = "rapl"

    def __init__(
        self, domain: str | Path = "/sys/class/powercap/intel-rapl:0", interval_s: float = 1.0
    ) -> None:
        super().__init__(interval_s)
        self.domain = Path(domain)
        self._previous: tuple[float, int] | None = None

    def _read_uj(self, name: str) -> int:
        return int((self.domain / name).read_text().strip())

    def measure(self) -> tuple[float, float] | None:
        now, energy = time.time(), self._read_uj("energy_uj")
        previous, self._previous = self._previous, (now, energy)
        if previous is None or now <= previous[0]:
            return None
        delta = energy - previous[1]
        if delta < 0:
            delta += self._read_uj("max_energy_range_uj")
        return (previous[0] + now) / 2, delta / 1e6 / (now - previous[0])

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "domain": str(self.domain),
            "scope": "CPU (RAPL), not drive power",
            **super().describe(),
        }
