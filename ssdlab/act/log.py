"""Native ACT 6.x ``act_storage`` / ``act_index`` logs (what ACT writes to stdout).

Layout, as printed by ACT (``act_storage.c``, ``cfg_storage.c``, ``histogram.c``)::

    ACT version 6.6
    <TOOL> CONFIGURATION            key: value lines, blank line
    DERIVED CONFIGURATION           key: value lines, blank line
    /dev/x size = N bytes, N large blocks, minimum IO size = N bytes
    HISTOGRAM NAMES                 one name a line, blank line
    after N sec:                    every report-interval-sec
    <name> (T total)                then up to 4 "(BB: count)" buckets a line, non-zero only
    ...                             blank line ends the report

Counts are cumulative since the start; bucket ``b`` holds [2^(b-1), 2^b) ms (µs with
``microsecond-histograms: yes``), bucket 0 holds [0, 1). ``ERROR`` lines (and the lines ACT
prints after them) can land anywhere, even inside a report, because other threads print them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..formats import Format, Probe
from ..io.text import read_text

_VERSION_RE = re.compile(r"^ACT version (\S+)$")
# header and configuration numbers have at most 18 digits (they fit 64 bits): a longer one
# stays text; in reports a longer one is an error (see _Parser.number)
_N = r"\d{1,18}"
_MAX_DIGITS = 18
_CPUS_RE = re.compile(rf"^detected ({_N}) CPUs$")
_CONFIG_RE = re.compile(r"^(ACT-\w+) CONFIGURATION$")
_KEY_RE = re.compile(r"^([\w-]+):\s*(.*)$")
_DEVICE_RE = re.compile(
    rf"^(?P<name>\S+) size = (?P<size>{_N}) bytes, (?P<blocks>{_N}) large blocks, "
    rf"minimum IO size = (?P<min_io>{_N}) bytes$"
)
_AFTER_RE = re.compile(r"^after (\d+) sec:$")
_HIST_RE = re.compile(r"^(\S+) \((\d+) total\)$")
_BUCKETS_RE = re.compile(r"^(?:\(\d+: \d+\)\s*)+$")
_BUCKET_RE = re.compile(r"\((\d+): (\d+)\)")
_INT_RE = re.compile(rf"^-?{_N}$")
_FLOAT_RE = re.compile(rf"^-?{_N}\.{_N}$")
_RANGE_RE = re.compile(rf"^({_N}) \.\.\. ({_N})$")
#: ACT's histograms have buckets 0 .. 64 (``N_BUCKETS`` in histogram.c)
MAX_BUCKET = 64
#: configuration values ssdlab computes with: name -> (the check, what it expects)
_CHECKED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "report-interval-sec": (lambda v: type(v) is int and v > 0, "a whole number > 0"),
    "test-duration-sec": (lambda v: type(v) is int and v >= 0, "a whole number >= 0"),
    "num-devices": (lambda v: type(v) is int and v > 0, "a whole number > 0"),
    "read-reqs-per-sec": (lambda v: type(v) in (int, float) and v >= 0, "a number >= 0"),
    "internal-read-reqs-per-sec": (lambda v: type(v) in (int, float) and v >= 0, "a number >= 0"),
    "microsecond-histograms": (lambda v: type(v) is bool, "yes or no"),
}


@dataclass(frozen=True)
class Histogram:
    """One histogram in one report: ``total`` and ``buckets`` (index -> count), cumulative."""

    total: int
    buckets: dict[int, int]

    def count_below(self, bucket: int) -> int:
        """Operations in buckets ``0 .. bucket`` (latency under 2^bucket ms or µs)."""
        return sum(c for b, c in self.buckets.items() if b <= bucket)


@dataclass(frozen=True)
class Report:
    """One ``after N sec:`` report: every histogram's cumulative counts."""

    seconds: int
    histograms: dict[str, Histogram]


@dataclass(frozen=True)
class Device:
    """A device line: ``<name> size = N bytes, N large blocks, minimum IO size = N bytes``."""

    name: str
    size_bytes: int
    large_blocks: int
    min_io_bytes: int


@dataclass
class ActLog:
    """A parsed ACT log.

    ``config`` / ``derived``: the CONFIGURATION and DERIVED CONFIGURATION blocks keyed by ACT's
    names, values typed (int, float, bool for yes/no, ``(lo, hi)`` for ``a ... b``, a list for
    ``device-names``). ``reports``: complete reports in time order. ``errors``: ``ERROR`` lines
    (ACT may stop early on one and still exit 0); ``messages``: other unexpected text lines in
    the report section, such as ACT's explanation after an ERROR. ``meta``: ``cpus`` (detected),
    ``dropped_partial_report_s`` (the time of a truncated last report, left out).
    """

    path: Path
    version: str
    tool: str
    config: dict[str, Any]
    derived: dict[str, Any]
    devices: list[Device]
    histogram_names: list[str]
    reports: list[Report]
    errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def report_interval_s(self) -> int:
        """Seconds between reports (ACT's default is 1)."""
        return int(self.config.get("report-interval-sec", 1))

    @property
    def microsecond_histograms(self) -> bool:
        """True when buckets are powers of two microseconds instead of milliseconds."""
        return bool(self.config.get("microsecond-histograms", False))

    @property
    def status(self) -> Literal["failed", "complete", "incomplete"]:
        """``failed`` on any ERROR line, ``complete`` when reports reach test-duration-sec."""
        if self.errors:
            return "failed"
        duration = self.config.get("test-duration-sec")
        last = self.reports[-1].seconds if self.reports else 0
        return "complete" if duration is not None and last >= duration else "incomplete"


def typed_value(key: str, raw: str) -> Any:
    """An ACT configuration value as ACT prints it, typed (see :class:`ActLog`)."""
    value = raw.strip()
    if key == "device-names":
        return value.split()
    if value in ("yes", "no"):
        return value == "yes"
    if _INT_RE.match(value):
        return int(value)
    if _FLOAT_RE.match(value):
        return float(value)
    m = _RANGE_RE.match(value)
    return (int(m.group(1)), int(m.group(2))) if m else value


class _Parser:
    """Line-by-line state machine over one log's text."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.pos = 0
        self.errors: list[str] = []
        self.messages: list[str] = []

    def fail(self, lineno: int, what: str) -> InputError:
        return InputError(f"{self.path}: line {lineno}: {what}")

    def number(self, digits: str, lineno: int) -> int:
        """A report's time or count; more than 18 digits (beyond 64 bits) is an error."""
        if len(digits) > _MAX_DIGITS:
            raise self.fail(lineno, f"{digits[:20]}... is too large for a time or count")
        return int(digits)

    def block(self) -> dict[str, Any]:
        """``key: value`` lines after a block title, up to the next blank line."""
        values: dict[str, Any] = {}
        while self.pos < len(self.lines) and self.lines[self.pos].strip():
            line = self.lines[self.pos].strip()
            self.pos += 1
            if line.startswith("ERROR"):
                self.errors.append(line)
            elif m := _KEY_RE.match(line):
                values[m.group(1)] = typed_value(m.group(1), m.group(2))
            else:
                raise self.fail(self.pos, f"expected 'name: value', got {line!r}")
        return values

    def names(self) -> list[str]:
        names = []
        while self.pos < len(self.lines) and self.lines[self.pos].strip():
            names.append(self.lines[self.pos].strip())
            self.pos += 1
        return names

    def header(self) -> dict[str, Any]:
        found: dict[str, Any] = {"devices": [], "cpus": None}
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            if _AFTER_RE.match(line):
                break
            self.pos += 1
            if m := _VERSION_RE.match(line):
                found["version"] = m.group(1)
            elif m := _CPUS_RE.match(line):
                found["cpus"] = int(m.group(1))
            elif m := _CONFIG_RE.match(line):
                found["tool"], found["config"] = m.group(1), self.block()
            elif line == "DERIVED CONFIGURATION":
                found["derived"] = self.block()
            elif line == "HISTOGRAM NAMES":
                found["names"] = self.names()
            elif m := _DEVICE_RE.match(line):
                found["devices"].append(
                    Device(m["name"], int(m["size"]), int(m["blocks"]), int(m["min_io"]))
                )
            elif line.startswith("ERROR"):
                self.errors.append(line)
        return found

    def reports(self) -> list[tuple[int, Report]]:
        """Every report, complete or not, with the line number of its ``after`` line."""
        reports: list[tuple[int, Report]] = []
        current: tuple[int, Report] | None = None
        hist: tuple[str, int, dict[int, int]] | None = None

        def close_hist() -> None:
            nonlocal hist
            if hist is not None and current is not None:
                name, total, buckets = hist
                current[1].histograms[name] = Histogram(total, buckets)
            hist = None

        for lineno, raw in enumerate(self.lines[self.pos :], start=self.pos + 1):
            line = raw.strip()
            if line.startswith("ERROR"):
                self.errors.append(line)
            elif m := _AFTER_RE.match(line):
                close_hist()
                current = (lineno, Report(self.number(m.group(1), lineno), {}))
                reports.append(current)
            elif current is not None and (m := _HIST_RE.match(line)):
                close_hist()
                hist = (m.group(1), self.number(m.group(2), lineno), {})
            elif hist is not None and _BUCKETS_RE.match(line):
                for b, c in _BUCKET_RE.findall(line):
                    if self.number(b, lineno) > MAX_BUCKET:
                        raise self.fail(lineno, f"bucket {b} does not exist (ACT has 0 .. 64)")
                    hist[2][int(b)] = self.number(c, lineno)
            elif line:
                self.messages.append(line)
            else:  # a blank line ends a report
                close_hist()
                current = None
        close_hist()
        return reports


def _check_report(log_names: list[str], report: Report) -> str | None:
    """Why a report is incomplete, or None. ACT prints total = sum of the printed buckets."""
    for name in log_names:
        h = report.histograms.get(name)
        if h is None:
            return f"histogram {name!r} missing"
        if sum(h.buckets.values()) != h.total:
            return f"histogram {name!r} buckets sum to {sum(h.buckets.values())}, not {h.total}"
    return None


def _check_order(path: Path, numbered: list[tuple[int, Report]]) -> None:
    for (_, prev), (lineno, cur) in pairwise(numbered):
        if cur.seconds <= prev.seconds:
            raise InputError(
                f"{path}: line {lineno}: 'after {cur.seconds} sec' follows 'after "
                f"{prev.seconds} sec' (two runs in one file?)"
            )
        for name, h in cur.histograms.items():
            before = prev.histograms.get(name)
            if before is not None and any(
                c < before.buckets.get(b, 0) for b, c in h.buckets.items()
            ):
                raise InputError(
                    f"{path}: line {lineno}: histogram {name!r} counts went down; ACT's "
                    "counts are cumulative"
                )


def read_act_log(path: str | Path) -> ActLog:
    """Read a native ACT 6.x log (``act_storage`` or ``act_index`` stdout).

    A last report cut short (ACT killed, file copied while running) is dropped and its time
    noted in ``meta["dropped_partial_report_s"]``; an incomplete report anywhere else, an empty
    or non-ACT file, or another ACT major version raises :class:`InputError`.
    """
    path = Path(path)
    text = read_text(path, "an ACT log", "ACT logs")
    if not text.strip():
        raise InputError(f"{path}: empty file")
    lines = text.splitlines()
    if not text.endswith("\n") and not _BUCKETS_RE.match(lines[-1].strip()):
        lines.pop()  # cut mid-line (ACT killed, or copied while running): not data
    parser = _Parser(path, lines)
    head = parser.header()
    if "version" not in head:
        raise InputError(f"{path}: not an ACT log (no 'ACT version' line)")
    if not head["version"].startswith("6."):
        raise InputError(f"{path}: ACT version {head['version']} is not supported (ACT 6.x only)")
    for key, title in (
        ("config", "CONFIGURATION"),
        ("derived", "DERIVED CONFIGURATION"),
        ("names", "HISTOGRAM NAMES"),
    ):
        if key not in head:
            if parser.errors:
                raise InputError(f"{path}: ACT stopped before the test: {parser.errors[0]}")
            raise InputError(f"{path}: truncated ACT log: no {title} block")
    for block, values in ((head["tool"], head["config"]), ("DERIVED", head["derived"])):
        for key, (valid, expected) in _CHECKED.items():
            if key in values and not valid(values[key]):
                raise InputError(
                    f"{path}: {block} CONFIGURATION: {key}: expected {expected}, "
                    f"found {values[key]!r:.60}"
                )
    numbered = parser.reports()
    meta: dict[str, Any] = {"cpus": head["cpus"]}
    complete = []
    for i, (lineno, report) in enumerate(numbered):
        problem = _check_report(head["names"], report)
        if problem is None:
            complete.append((lineno, report))
        elif i == len(numbered) - 1:
            meta["dropped_partial_report_s"] = report.seconds
        else:
            raise InputError(
                f"{path}: line {lineno}: report 'after {report.seconds} sec' is incomplete: "
                f"{problem}"
            )
    _check_order(path, complete)
    return ActLog(
        path=path,
        version=head["version"],
        tool=head["tool"],
        config=head["config"],
        derived=head["derived"],
        devices=head["devices"],
        histogram_names=head["names"],
        reports=[r for _, r in complete],
        errors=parser.errors,
        messages=parser.messages,
        meta=meta,
    )


_ACT_VERSION = re.compile(r"^ACT version \S+", re.MULTILINE)


def is_act_log(probe: Probe) -> bool:
    """Whether a file is a native ACT log: an ``ACT version`` line in its first 64 KiB."""
    return _ACT_VERSION.search(probe.head) is not None


FORMAT = Format("act_log", "ACT", read_act_log, is_act_log)
