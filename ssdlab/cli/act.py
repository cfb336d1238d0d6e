"""ACT commands: emulate Aerospike's ACT storage workload with fio, score a drive by ACT's
rule, and read native ACT logs."""

from __future__ import annotations

import math
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..errors import SsdlabError
from . import app, output_path, stderr, target_size_option

if TYPE_CHECKING:
    from ..act.run import ActTrials

#: exit status of a command whose trial, search or log did not pass (a verdict, not an error:
#: what was measured is printed and kept)
VERDICT_FAILED = 1

act_app = typer.Typer(
    help="Aerospike ACT: emulate the storage workload with fio, score a drive, read ACT logs.",
    no_args_is_help=True,
)
app.add_typer(act_app, name="act")


class TableFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


Load = Annotated[float, typer.Option(help="Multiple of the 1x load (2000 reads/s, 1000 writes/s).")]
Out = Annotated[
    Path,
    typer.Option("--out", "-o", parser=output_path, help="Results directory (re-run to resume)."),
]
Target = Annotated[
    Path | None,
    typer.Option(help="File (created if missing) or block device. Default: a temporary file."),
]
TargetSize = Annotated[
    str | None, typer.Option(help="Size of a file target, e.g. 8g (default 1g).")
]
Label = Annotated[str | None, typer.Option(help="Name of the drive/target in reports.")]
DestroyData = Annotated[
    str | None,
    typer.Option(
        "--destroy-data",
        help="Confirm writing to a block device: its kernel name (nvme0n1) or serial.",
    ),
]
Slice = Annotated[
    int | None,
    typer.Option(
        "--slice", min=1, help="Slice length in seconds (default: 3600, or the duration)."
    ),
]
Settings = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="ACT setting by ACT's name: record-bytes=1500 (repeatable); rates are 1x."
    ),
]
HistMsec = Annotated[
    int | None,
    typer.Option(help="Histogram log window in ms (default: 10000, or a quarter of the slice)."),
]
SmallReadJobs = Annotated[
    int | None, typer.Option(help="fio jobs sharing the small reads (default: service-threads).")
]
IoEngine = Annotated[str, typer.Option(help="fio ioengine (ACT reads synchronously: psync).")]
FioOptions = Annotated[
    list[str] | None,
    typer.Option("--fio-option", help="Further fio option for every job: name=value (repeatable)."),
]
AllowFioOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-fio-option",
        help="Let --fio-option or --ioengine use this guarded fio option or engine (e.g. "
        "ioengine); see docs/safety.md (repeatable).",
    ),
]
MaxLag = Annotated[
    float | None,
    typer.Option(help="Seconds a job may fall behind its rate (default: max-lag-sec, 10)."),
]


def _pairs(items: list[str] | None, what: str) -> dict[str, str]:
    pairs = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SsdlabError(f"{what} takes name=value, not {item!r}")
        pairs[name.strip()] = value.strip()
    return pairs


def _trials(
    out: Path,
    *,
    target: Path | None,
    target_size: str | None,
    label: str | None,
    destroy_data: str | None,
    duration: int | None,
    slice_: int | None,
    settings: list[str] | None,
    hist_msec: int | None,
    small_read_jobs: int | None,
    ioengine: str,
    fio_option: list[str] | None,
    allow_fio_option: list[str] | None,
    max_lag: float | None,
    load: float | None = None,
    search: tuple[float | None, float, float] | None = None,
) -> ActTrials:
    """The trials of ``act run`` (at ``load``) and ``act score`` (``search``: its start,
    resolution and max load) from their options."""
    from ..act.run import act_trials

    return act_trials(
        out,
        settings=_pairs(settings, "--set"),
        duration_s=duration,
        slice_s=slice_,
        hist_msec=hist_msec,
        small_read_jobs=small_read_jobs,
        ioengine=ioengine,
        fio_options=_pairs(fio_option, "--fio-option"),
        allow_fio_options=allow_fio_option or (),
        max_lag_s=max_lag,
        target=target,
        target_size=target_size_option(target_size) if target_size else None,
        label=label,
        destroy_data=destroy_data,
        console=stderr(),
        load=load,
        search=search,
    )


@act_app.command("run")
def run(
    load: Load,
    out: Out,
    target: Target = None,
    target_size: TargetSize = None,
    label: Label = None,
    destroy_data: DestroyData = None,
    duration: Annotated[
        int | None, typer.Option(min=1, help="Seconds (default: test-duration-sec, 24 h).")
    ] = None,
    slice_: Slice = None,
    set_: Settings = None,
    hist_msec: HistMsec = None,
    small_read_jobs: SmallReadJobs = None,
    ioengine: IoEngine = "psync",
    fio_option: FioOptions = None,
    allow_fio_option: AllowFioOption = None,
    max_lag: MaxLag = None,
) -> None:
    """Run one ACT trial at LOAD x and judge it slice by slice (exit 1 unless it passes).

    Each slice is one fio run of ACT's jobs; small-read latencies come from fio's histogram
    logs, where the bin straddling 1/8/64 ms counts as over (conservative: act.json keeps
    that bin's share as pct_edge_<T>ms). A job falling more than --max-lag seconds behind its
    requested rate fails the trial as "can't keep up", as native ACT stops.
    """
    trials = _trials(
        out,
        target=target,
        target_size=target_size,
        label=label,
        destroy_data=destroy_data,
        duration=duration,
        slice_=slice_,
        settings=set_,
        hist_msec=hist_msec,
        small_read_jobs=small_read_jobs,
        ioengine=ioengine,
        fio_option=fio_option,
        allow_fio_option=allow_fio_option,
        max_lag=max_lag,
        load=load,
    )
    with trials:
        trial = trials.trial(load)
    if trial.status != "passed":
        raise SystemExit(VERDICT_FAILED)


@act_app.command()
def score(
    out: Out,
    target: Target = None,
    target_size: TargetSize = None,
    label: Label = None,
    destroy_data: DestroyData = None,
    start: Annotated[
        float | None,
        typer.Option(help="First load to try (default: 1x, doubling to an upper bound)."),
    ] = None,
    resolution: Annotated[
        float, typer.Option(help="Stop bisecting when passing and failing loads are this close.")
    ] = 1.0,
    max_load: Annotated[float, typer.Option(help="Highest load to try.")] = 1024.0,
    duration: Annotated[
        int, typer.Option(min=1, help="Seconds per trial (reviews use 1 h; certification 24 h).")
    ] = 3600,
    slice_: Slice = None,
    set_: Settings = None,
    hist_msec: HistMsec = None,
    small_read_jobs: SmallReadJobs = None,
    ioengine: IoEngine = "psync",
    fio_option: FioOptions = None,
    allow_fio_option: AllowFioOption = None,
    max_lag: MaxLag = None,
) -> None:
    """Find the drive's ACT score, the highest load that passes, with few trials.

    Prints the score, what bounds it (the load that failed, or --max-load when every load
    tried passed: then the score is a lower bound), the trials' length, and what a trial
    shorter than ACT's 24 h rating run is not; act.json keeps the search.
    """
    from ..review.act_findings import act_cap, act_caveat, act_length

    trials = _trials(
        out,
        target=target,
        target_size=target_size,
        label=label,
        destroy_data=destroy_data,
        duration=duration,
        slice_=slice_,
        settings=set_,
        hist_msec=hist_msec,
        small_read_jobs=small_read_jobs,
        ioengine=ioengine,
        fio_option=fio_option,
        allow_fio_option=allow_fio_option,
        max_lag=max_lag,
        search=(start, resolution, max_load),
    )
    timing = trials.timing
    with trials:
        search = trials.score(start=start, resolution=resolution, max_load=max_load)
    tried = ", ".join(f"{load:g}x" for load in search.tried)
    length = act_length(timing.duration_s, timing.slice_s)
    caveat = act_caveat(timing.duration_s, timing.slice_s)
    if search.score is None:
        print(f"no load passed in trials of {length} (tried {tried})")
        raise SystemExit(VERDICT_FAILED)
    if search.capped:
        shown = f"at least {search.score:g}x: {act_cap(max_load)}"
    else:
        failed = min(load for load in search.tried if load > search.score)
        shown = f"{search.score:g}x, the highest load that passed; {failed:g}x failed"
    print(f"ACT score: {shown} (trials of {length}; tried {tried}; resolution {resolution:g})")
    if caveat:
        print(caveat)


@act_app.command()
def config(
    load: Load = 1.0,
    set_: Settings = None,
    fio_target: Annotated[
        str | None, typer.Option("--fio", help="Also print the fio job file for this target.")
    ] = None,
) -> None:
    """Print ACT's DERIVED CONFIGURATION for LOAD x (and the fio job file emulating it)."""
    from ..act.workload import config_text

    print(config_text(_pairs(set_, "--set"), load, fio_target), end="")


def _verdict_line(path: Path, status: str, reason: str) -> None:
    """``LOG: passed|failed|abandoned: why`` on stderr (can't keep up is a failure too)."""
    shown = {"cant_keep_up": "failed (can't keep up)"}.get(status, status)
    style = {"passed": "green", "abandoned": "yellow"}.get(status, "red")
    stderr().print(
        f"{escape(str(path))}: [{style}]{shown}[/]: {escape(reason)}",
        soft_wrap=True,
        highlight=False,
    )


@act_app.command()
def latency(
    log: Annotated[Path, typer.Argument(help="ACT 6.x act_storage log (its stdout).")],
    slice_: Annotated[int, typer.Option("--slice", min=1, help="Slice length in seconds.")] = 3600,
    thresholds: Annotated[
        str, typer.Option(help="Comma-separated thresholds in ms (powers of two).")
    ] = "1,8,64",
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
    histogram: Annotated[
        list[str] | None,
        typer.Option(help="Histogram to show (repeatable; default: every one in the log)."),
    ] = None,
    rate: Annotated[
        bool, typer.Option("--rate", help="Add the rate column to the table (-x).")
    ] = False,
) -> None:
    """Print act_latency.py's per-slice table of an ACT log and ACT's verdict on it.

    The verdict (on stderr) judges the 'reads' histogram by ACT's rule; a log that stopped
    with an ERROR fails whatever its table says. Exit 1 when the log fails.
    """
    from ..act.latency import format_table, latency_report

    try:
        limits = [float(t) for t in thresholds.split(",")]
    except ValueError:
        limits = []
    if not limits or not all(math.isfinite(limit) for limit in limits):
        raise SsdlabError(f"--thresholds takes numbers like 1,8,64, not {thresholds!r}")
    report = latency_report(log, slice_s=slice_, thresholds_ms=limits, histograms=histogram)
    table = report.table
    if table is not None and format is TableFormat.table:
        microseconds = report.log.microsecond_histograms
        sys.stdout.write(format_table(table, microseconds=microseconds, rate=rate))
    elif table is not None:
        sys.stdout.write(table.write_csv() if format is TableFormat.csv else table.write_json())
    if report.status is not None:
        _verdict_line(log, report.status, report.reason)
    if report.failed:
        raise SystemExit(VERDICT_FAILED)


@act_app.command("import")
def import_(
    log: Annotated[Path, typer.Argument(help="ACT 6.x act_storage log (its stdout).")],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", parser=output_path, help="Results directory: new, or one to add to."
        ),
    ],
    slice_: Annotated[int, typer.Option("--slice", min=1, help="Slice length in seconds.")] = 3600,
    load: Annotated[
        float | None,
        typer.Option(help="The log's load multiple (default: its read rate / 2000 per device)."),
    ] = None,
    label: Label = None,
    other_device: Annotated[
        bool,
        typer.Option(
            "--other-device",
            help="Add a log of another device than the results directory's trials: marked, "
            "and left out of the score (refused without this).",
        ),
    ] = False,
) -> None:
    """Add a native ACT log to a results directory as an ACT trial (beside fio trials).

    The log's devices must be the device the directory's trials ran on (its target, else its
    first trial's), unless --other-device is given.
    """
    from ..act.imports import import_act_log

    trial = import_act_log(
        log, out, slice_s=slice_, load=load, label=label, other_device=other_device
    )
    print(trial.summary)
