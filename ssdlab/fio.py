"""Find fio, write job files, and run fio while parsing its live status line."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import fio_options
from .errors import FioError, SuiteError
from .layout import LOG_PREFIX
from .suite import NAME_PATTERN, Step
from .sysinfo import HostInfo

PR_SET_PDEATHSIG = 1
LOG_WINDOW_MS = 1000

_ETA_PCT = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_ETA_BW = re.compile(r"\]\[((?:[rwt]=[\d.]+[KMGTP]?i?B/s,?)+)\]")
_ETA_IOPS = re.compile(r"\]\[((?:[rwt]=[\d.]+[kMG]?,?)+) IOPS\]")
_ETA_LEFT = re.compile(r"\[eta (?:(\d+)d:)?(?:(\d+)h:)?(?:(\d+)m:)?(\d+)s\]")
_UNIT: dict[str, float] = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_COUNT = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def fio_binary() -> str:
    """Path of the fio executable (``$SSDLAB_FIO`` or ``fio`` on PATH)."""
    found = shutil.which(os.environ.get("SSDLAB_FIO", "fio"))
    if not found:
        raise FioError(
            "fio not found: install it (Debian: apt-get install fio; conda: conda install "
            "-c conda-forge fio) or point SSDLAB_FIO at it"
        )
    return found


def fio_version(binary: str | None = None) -> str:
    """fio's version string, e.g. ``fio-3.33``."""
    out = subprocess.run(
        [binary or fio_binary(), "--version"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip()


def pinned_clocksource(host: HostInfo | None) -> str | None:
    """The ``clocksource`` every job of a run gets: ``cpu`` when the kernel keeps time with
    the TSC and the TSC is invariant, else None (fio chooses).

    Left to itself, fio uses the TSC only if a 1,000-sample cross-CPU test finds it in step,
    and that test is a race: on a VM whose vCPU TSCs differ by a few ns it passes or fails
    from one fio process to the next, and the losers use ``clock_gettime`` at about half the
    IOPS on a CPU-bound job (measured on the ``null`` engine). When the kernel's own clock
    is the TSC, clock_gettime reads the same counters, so pinning ``cpu`` costs no accuracy
    and makes every step of a run time itself the same way.
    """
    if host is not None and host.clocksource == "tsc" and host.invariant_tsc:
        return "cpu"
    return None


def job_file(
    step: Step, filename: str, *, direct: bool, header: str, clocksource: str | None = None
) -> str:
    """The fio job file for one step: ramp excluded, per-second and histogram logs on, log
    times in epoch milliseconds (to align with power meters and other clocks), and fio's
    ``clocksource`` when the run pins one (:func:`pinned_clocksource`).

    The last line of defence of :mod:`ssdlab.fio_options` (the suite was checked when it was
    loaded): SuiteError for an option that would override ssdlab's own lines or a step field,
    and for a value, target or header that could end its line in the job file."""
    fio_options.check_target(filename)
    glob: dict[str, str | int | float | bool] = {
        "filename": fio_options.target_value(filename),
        "ioengine": step.ioengine,
        "direct": direct,
    }
    if clocksource:
        glob["clocksource"] = clocksource
    if step.loops:
        glob["loops"] = step.loops  # size-based: runtime, if any, only caps it
    else:
        glob["time_based"] = True
    if step.runtime_s:
        glob["runtime"] = f"{round(step.runtime_s * 1000)}ms"
    if step.ramp_s:
        glob["ramp_time"] = f"{round(step.ramp_s * 1000)}ms"
    glob |= {
        "group_reporting": True,
        "log_avg_msec": LOG_WINDOW_MS,
        "log_hist_msec": LOG_WINDOW_MS,
        "log_unix_epoch": True,
        "write_bw_log": LOG_PREFIX,
        "write_iops_log": LOG_PREFIX,
        "write_lat_log": LOG_PREFIX,
        "write_hist_log": LOG_PREFIX,
    }
    if step.size:
        glob["size"] = step.size
    if step.offset:
        glob["offset"] = step.offset
    job: dict[str, str | int | float | bool] = {
        "rw": step.rw,
        "bs": step.bs,
        "iodepth": step.iodepth,
        "numjobs": step.numjobs,
    }
    if step.rwmixread is not None:
        job["rwmixread"] = step.rwmixread
    for key, value in step.options.items():
        if problem := fio_options.override_problem(key, value):
            raise SuiteError(f"step {step.name!r}: {problem}")
        if key not in glob:  # an option repeating ssdlab's own value
            job[key] = value
    _check_lines(step, header, {**glob, **job})
    lines = [f"; {header}", "[global]"]
    lines += [f"{k}={fio_options.fio_value(v)}" for k, v in glob.items()]
    lines += ["", f"[{step.name}]"]
    lines += [f"{k}={fio_options.fio_value(v)}" for k, v in job.items()]
    return "\n".join(lines) + "\n"


def _check_lines(step: Step, header: str, options: dict[str, str | int | float | bool]) -> None:
    """SuiteError unless everything keeps to its line: the header is one line, the step's
    name a section name, every value but the target (checked and escaped before) fio's plain
    syntax."""
    if problem := fio_options.line_problem(header):
        raise SuiteError(f"job file header for step {step.name!r}: {problem}")
    if not re.fullmatch(NAME_PATTERN, step.name):
        raise SuiteError(f"step {step.name!r}: not a valid section name for a job file")
    for key, value in options.items():
        if key != "filename" and (problem := fio_options.value_problem(value)):  # checked
            raise SuiteError(f"step {step.name!r}: {key}: {problem}")


@dataclass
class FioStatus:
    """One parse of fio's status line: progress, live rates (summed over directions)."""

    percent: float | None = None
    iops: float | None = None
    bw_bytes_s: float | None = None
    eta_s: int | None = None


def _sum_rates(text: str, units: dict[str, float]) -> float:
    """``r=150MiB/s,w=64.2MiB/s`` or ``r=38.4k,w=16.4k`` summed over directions."""
    return sum(
        float(number) * units[prefix]
        for number, prefix in re.findall(r"[rwt]=([\d.]+)([kKMGTP]?)", text)
    )


def parse_status_line(line: str) -> FioStatus | None:
    """Parse ``Jobs: 1 (f=1): [r(1)][60.0%][r=300MiB/s][r=76.8k IOPS][eta 00m:02s]``."""
    if not line.startswith("Jobs:"):
        return None
    status = FioStatus()
    if m := _ETA_PCT.search(line):
        status.percent = float(m.group(1))
    if m := _ETA_BW.search(line):
        status.bw_bytes_s = _sum_rates(m.group(1), _UNIT)
    if m := _ETA_IOPS.search(line):
        status.iops = _sum_rates(m.group(1), _COUNT)
    if m := _ETA_LEFT.search(line):
        d, h, mi, s = (int(x) if x else 0 for x in m.groups())
        status.eta_s = ((d * 24 + h) * 60 + mi) * 60 + s
    return status


@dataclass
class FioOutcome:
    """How a fio process ended."""

    returncode: int
    interrupted: bool
    stderr: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """fio's own error text, or a generic one for a non-zero exit."""
        if self.interrupted:
            return "interrupted"
        if self.returncode == 0:
            return None
        errs = self.stderr + [n for n in self.notes if n.startswith("fio:")]
        text = "; ".join(dict.fromkeys(errs))
        if len(text) > 400:
            text = text[:400] + "…"
        return f"fio exited with status {self.returncode}" + (f": {text}" if text else "")


def run_fio(
    jobfile: Path,
    output_json: Path,
    *,
    on_status: Callable[[FioStatus], None] | None = None,
    binary: str | None = None,
    readonly: bool = False,
) -> FioOutcome:
    """Run fio on ``jobfile`` in its directory, writing json+ to ``output_json``;
    ``readonly`` adds fio's ``--readonly``, so fio refuses any write, file layout or
    truncation whatever the job file says (a step that does not write).

    Status lines go to ``on_status``; other stdout lines become the outcome's notes and
    stderr is kept in ``fio.stderr`` beside the output. Ctrl-C or SIGTERM stops fio (it still
    writes its results) and the outcome is marked interrupted.
    """
    cwd = jobfile.parent
    cmd = [
        binary or fio_binary(),
        "--output-format=json+",
        f"--output={output_json.name}",
        "--eta=always",
        "--eta-newline=1",
        *(["--readonly"] if readonly else []),
        jobfile.name,
    ]
    interrupted = False
    notes: list[str] = []
    buf = b""
    proc: subprocess.Popen[bytes] | None = None
    with (cwd / "fio.stderr").open("wb") as stderr:
        previous = signal.signal(signal.SIGTERM, raise_keyboard_interrupt)
        try:
            proc = subprocess.Popen(
                cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=stderr, preexec_fn=die_with_parent
            )
            while chunk := _read(proc):
                buf += chunk
                *lines, buf = re.split(rb"[\r\n]", buf)
                for raw in lines:
                    _handle_line(raw.decode(errors="replace").strip(), on_status, notes)
        except KeyboardInterrupt:
            interrupted = True
            if proc is None:  # stopped before fio started
                raise
            _stop(proc)
        finally:
            signal.signal(signal.SIGTERM, previous)
        _handle_line(buf.decode(errors="replace").strip(), on_status, notes)
        returncode = proc.wait()
    stderr_lines = (cwd / "fio.stderr").read_text(errors="replace").splitlines()
    return FioOutcome(
        returncode, interrupted, [e.strip() for e in stderr_lines if e.strip()], notes
    )


def _read(proc: subprocess.Popen[bytes]) -> bytes:
    assert proc.stdout is not None
    return os.read(proc.stdout.fileno(), 65536)


def _handle_line(
    line: str, on_status: Callable[[FioStatus], None] | None, notes: list[str]
) -> None:
    if not line:
        return
    status = parse_status_line(line)
    if status is None:
        notes.append(line)
    elif on_status is not None:
        on_status(status)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask fio to stop (it flushes results), then drain its output; kill it if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        assert proc.stdout is not None
        proc.stdout.read()
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def die_with_parent() -> None:
    """In a child process (fio, a forked import): get SIGTERM if ssdlab dies (even by
    SIGKILL), so no orphaned fio keeps writing to the target or to a step directory a resumed
    run is replacing, and no orphaned import goes on alone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def raise_keyboard_interrupt(signum: int, frame: object) -> None:
    """A signal handler that makes SIGTERM stop a run the way Ctrl-C does."""
    raise KeyboardInterrupt
