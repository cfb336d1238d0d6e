"""The review's set-up section: what was tested and in which state, and the caveats a reader
needs before trusting a figure as a drive's.

It states the target (a block device and its model, or a file and its file system), the span
the measurements addressed against the target's capacity, the purge, the preconditioning (or
that there was none), and where the numbers cannot describe a drive: reads of blocks the run
had not written, a virtual machine, the page cache, a synchronous engine, a scaled run, a
preconditioning cut at its time cap, steps stopped or left out. What a run did not record
(older runs, imports) is said to be not recorded, never guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import polars as pl

from .. import findings
from ..analysis.drive import DriveAnalysis
from ..analysis.fill import fill_totals, preconditioning_steps
from ..errors import SsdlabError
from ..facts import drive_facts, run_facts, scale_note
from ..fio_options import option_bytes, span_bytes
from ..manifest import LOADABLE, Manifest, StepRecord
from ..phrases import rephrase
from ..suite import Step
from ..sysinfo import BARE_METAL, MEMORY_FS_TYPES, UNIDENTIFIED
from ..tables import format_bytes
from ..units import MB, format_capacity, format_duration
from ..vocab import SYNC_ENGINES
from .section import Section, table

#: file systems whose files are in memory: no drive holds them
#: file systems whose files are on another machine or behind a hypervisor's share
REMOTE_FILE_SYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "9p", "virtiofs", "ceph"})

Region = tuple[int, int]


def setup_section(drive: DriveAnalysis) -> Section:
    """Drive identity, host, versions and durations; the target, the span tested, the purge
    and the preconditioning; the caveats where the figures cannot describe a drive; and the
    steps left out (failed, or a file missing or unreadable)."""
    manifest, summary = drive.results.manifest, drive.results.summary
    parts = [
        table(drive_facts(manifest, summary), "Drive and host"),
        table(run_facts(manifest, summary), "Test"),
    ]
    native = manifest.source == "run"
    fills = preconditioning_steps(drive.steps, drive.fills, manifest)
    writes_totals = fill_totals(drive.steps, drive.fills, manifest)
    filled = writes_totals.filter(pl.col("step_index").is_in(list(fills)))
    if filled.height:
        view = filled.select(
            pl.col("step").alias("Step"),
            pl.col("workload").alias("Workload"),
            pl.col("passes").alias("Passes"),
            pl.col("io_bytes").map_elements(format_bytes, return_dtype=pl.String).alias("Written"),
            (pl.col("bw_bytes_s") / MB).alias("MB/s"),
            pl.col("runtime_s").map_elements(format_duration, return_dtype=pl.String).alias("Time"),
        )
        parts.append(table(view, "Preconditioning", numeric=("Written", "Time")))
    sentences = [
        _target(manifest),
        _span(manifest, fills),
        _purge(manifest),
        *_preconditioning(manifest, filled, native),
        *_unwritten_reads(manifest, summary, writes_totals),
        *_host(manifest),
        *_buffered(manifest),
        *_below_depth(manifest, drive.steps),
        *_scaled(manifest),
        *_short_fills(filled, summary),
        *(f"{line[0].upper()}{line[1:]}." for line in manifest.failures()),
        *_interrupted(summary),
        *(
            f"Left out, as a file is missing or could not be read: {damage}."
            for damage in drive.results.damaged
        ),
    ]
    return Section(sentences, parts)


def _counted(manifest: Manifest) -> list[StepRecord]:
    """The steps whose results count (:data:`~ssdlab.manifest.LOADABLE`) and whose
    workload is recorded, in run order."""
    return sorted(
        (s for s in manifest.steps if s.status in LOADABLE and s.workload is not None),
        key=lambda s: s.index,
    )


def _names(records: Iterable[StepRecord | str]) -> str:
    return findings.and_list([r if isinstance(r, str) else r.name for r in records])


def _share(part: int, whole: int) -> str:
    """``0.024 %``, ``3.1 %``, ``25 %``, ``100 %``."""
    pct = 100 * part / whole
    return f"{pct:.0f} %" if pct >= 10 else f"{pct:.1f} %" if pct >= 1 else f"{pct:.2g} %"


def _target(manifest: Manifest) -> str:
    """What the target is: a block device and its model, or a file and its file system."""
    target = manifest.target
    if target is None:
        return f"The target is not recorded ({_not_recorded(manifest)})."
    size = f" of {format_capacity(target.size_bytes)}" if target.size_bytes else ""
    if target.kind == "block":
        device = target.device
        model = (device or {}).get("model")
        named = (
            f"model {model}"
            if model
            else "model not recorded"
            if device is None
            else "the kernel reports no model"
        )
        loop = (
            ": a loop device, whose bytes are in a file, so its figures are those of that "
            "file's file system and storage"
            if (device or {}).get("type") == "loop"
            else ""
        )
        return f"The target is a block device{size}, {target.path} ({named}){loop}."
    what = "a temporary file in the results directory" if target.temporary else "a file"
    fs = target.file_system
    if fs is None:
        where = "its file system not recorded"
    elif fs.type is None:
        where = f"on a file system ssdlab could not identify (device {fs.device})"
    else:
        named = fs.source not in (None, "", "none", fs.type)
        where = f"in the {fs.type} file system{f' of {fs.source}' if named else ''}"
    caveat = ""
    if fs is not None and fs.type in MEMORY_FS_TYPES:
        caveat = ": its bytes are in memory, so no figure of this run describes a drive"
    elif fs is not None and fs.type in REMOTE_FILE_SYSTEMS:
        caveat = ": its figures are those of a network or shared file system, not of a drive"
    return f"The target is {what}{size}, {target.path}, {where}{caveat}."


def _not_recorded(manifest: Manifest) -> str:
    return "imported results" if manifest.source == "import" else "not in this run's manifest"


def _regions(step: Step, target_bytes: int) -> list[Region]:
    """The byte ranges ``step``'s jobs address in a target of ``target_bytes``: from its
    offset (each job ``offset_increment`` further), its size (else to the end), within the
    target. SsdlabError for a size option no byte count can be made of."""
    start = option_bytes("offset", step.offset, target_bytes) if step.offset else 0
    length = span_bytes(step, target_bytes)
    increment = step.options.get("offset_increment")
    step_bytes = option_bytes("offset_increment", increment, target_bytes) if increment else 0
    starts = [(start or 0) + job * (step_bytes or 0) for job in range(step.numjobs)]
    return [(s, min(s + length, target_bytes)) for s in dict.fromkeys(starts) if s < target_bytes]


def _merged(regions: Iterable[Region]) -> list[Region]:
    """Overlapping or touching ranges joined, in order."""
    merged: list[Region] = []
    for start, end in sorted(regions):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _covered(regions: list[Region], written: list[Region]) -> bool:
    """Whether every range of ``regions`` lies within the merged ranges ``written``."""
    return all(any(s >= ws and e <= we for ws, we in written) for s, e in regions)


def _step_regions(records: Iterable[StepRecord], target_bytes: int) -> list[Region] | None:
    """The merged ranges the steps ``records`` addressed; None when one's is not known."""
    regions: list[Region] = []
    for record in records:
        assert record.workload is not None
        try:
            regions += _regions(record.workload, target_bytes)
        except SsdlabError:
            return None
    return _merged(regions)


def _span(manifest: Manifest, fills: set[int]) -> str:
    """The bytes the measurements addressed (the preconditioning aside) against the
    target's capacity: ``256 MiB of the 1 TiB device (0.024 %)``."""
    target = manifest.target
    records = [r for r in _counted(manifest) if r.index not in fills] or _counted(manifest)
    if target is None or not target.size_bytes or not records:
        why = "no target size" if records else "no step's workload"
        return f"The span tested against the capacity is not recorded ({why})."
    regions = _step_regions(records, target.size_bytes)
    if regions is None:
        return (
            "The span tested against the capacity is not known (a step's size is not a byte count)."
        )
    tested = sum(end - start for start, end in regions)
    kind = "device" if target.kind == "block" else "file"
    return (
        f"The measurements addressed {format_capacity(tested)} of the "
        f"{format_capacity(target.size_bytes)} {kind} ({_share(tested, target.size_bytes)})."
    )


def _purge(manifest: Manifest) -> str:
    """Whether and how the target was purged before the first step."""
    if manifest.source != "run":
        return f"Whether the target was purged is not recorded ({_not_recorded(manifest)})."
    if manifest.purge is None:
        return (
            "The target was not purged before the run (ssdlab run --purge does that): it held "
            "whatever earlier use left on it."
        )
    how = " (every block discarded)" if manifest.purge.startswith("blkdiscard") else ""
    return f"The target was purged before the first step: {manifest.purge}{how}."


def _preconditioning(manifest: Manifest, filled: pl.DataFrame, native: bool) -> list[str]:
    """How the target was preconditioned (method, bytes, passes), or that it was not; the
    measured steps that ran before the preconditioning."""
    if not native:
        return [f"The preconditioning is not recorded ({_not_recorded(manifest)})."]
    if not filled.height:
        state = "the purge" if manifest.purge else "earlier use"
        return [
            "The target was not preconditioned: no size-based write step ran, so the figures "
            f"are those of the target in the state {state} left it."
        ]
    how = [
        f"{step} ({rephrase(workload)}, "
        f"{findings.count(passes, 'pass') if passes else 'passes not recorded'}"
        f", {format_bytes(io_bytes)} written)"
        for step, workload, passes, io_bytes in filled.select(
            "step", "workload", "passes", "io_bytes"
        ).iter_rows()
    ]
    sentences = [
        f"The target was preconditioned by {findings.count(filled.height, 'size-based write step')}"
        f": {findings.and_list(how)}; {format_bytes(filled['io_bytes'].sum())} written in all."
    ]
    first = filled["step_index"].min()  # the first fill: every step before it is measured
    before = [r for r in _counted(manifest) if r.index < first]
    if before:
        sentences.append(
            f"{findings.count(len(before), 'measured step')} ran before the preconditioning, on "
            f"a target not yet preconditioned: {_names(before)}."
        )
    return sentences


def _io_steps(summary: pl.DataFrame, direction: str) -> set[int]:
    """Steps of the summary that moved bytes in ``direction``."""
    if not summary.height or not {"direction", "io_bytes"} <= set(summary.columns):
        return set()
    rows = summary.filter((pl.col("direction") == direction) & (pl.col("io_bytes") > 0))
    return set(rows["step_index"].to_list())


def _unwritten_reads(
    manifest: Manifest, summary: pl.DataFrame, writes_totals: pl.DataFrame
) -> list[str]:
    """On a block device, the steps that read blocks this run had not written before them:
    before any write, or after writes none of which is known to have written their whole
    span (only a size-based write that ran to its end is: ``writes_totals``, the
    :func:`~ssdlab.analysis.fill.fill_totals` of every size-based write)."""
    target = manifest.target
    if target is None or target.kind != "block" or not target.size_bytes:
        return []
    reads, writes = _io_steps(summary, "read"), _io_steps(summary, "write")
    whole = pl.col("planned_bytes").is_not_null() & (pl.col("io_bytes") >= pl.col("planned_bytes"))
    complete = set(writes_totals.filter(whole)["step_index"].to_list())
    written: list[Region] = []
    wrote = False
    unwritten, partly = [], []
    for record in _counted(manifest):
        if record.index in reads:
            regions = _step_regions([record], target.size_bytes)
            if not wrote:
                unwritten.append(record.name)
            elif regions is None or not _covered(regions, written):
                partly.append(record.name)
        wrote = wrote or record.index in writes
        if record.index in complete:
            written = _merged(written + (_step_regions([record], target.size_bytes) or []))
    if not unwritten and not partly:
        return []
    which = [f"{_names(unwritten)} before any write"] if unwritten else []
    if partly:
        which.append(f"{_names(partly)} after writes that need not have covered their span")
    purged = (manifest.purge or "").startswith("blkdiscard")
    return [
        f"{findings.count(len(unwritten) + len(partly), 'step')} read blocks this run had not "
        f"written ({'; '.join(which)}): their figures may come from blocks never written"
        f"{' or discarded by the purge' if purged else ''}, which a drive can answer without "
        "reading its flash, and are not comparable with reads of written data."
    ]


def _host(manifest: Manifest) -> list[str]:
    """Whether the host is a virtual machine, and what that means for the target."""
    if manifest.source != "run" or manifest.host is None:
        return []
    virtual = manifest.host.virtualization
    if virtual is None:
        return ["Whether the host is a virtual machine is not recorded."]
    if virtual == BARE_METAL:
        return []
    name = "hypervisor not identified" if virtual == UNIDENTIFIED else virtual
    if manifest.target is not None and manifest.target.kind == "file":
        return [
            f"The target is a file on a virtual machine ({name}): the figures are those of a "
            "virtual disk, the host's caches and its other guests, not of a drive."
        ]
    return [
        f"The host is a virtual machine ({name}): unless the device is passed through, it is "
        "a virtual disk and the figures are those of the hypervisor's storage, not of a drive."
    ]


def _buffered(manifest: Manifest) -> list[str]:
    """The steps that ran with buffered I/O (``direct=0``): through the page cache."""
    buffered = [
        r
        for r in _counted(manifest)
        if (r.direct if r.direct is not None else r.workload and r.workload.direct) is False
    ]
    if not buffered:
        return []
    target = manifest.target
    why = (
        " (the target's file system does not take O_DIRECT)"
        if target is not None and not target.direct_supported
        else ""
    )
    return [
        f"{findings.count(len(buffered), 'step')} ran with buffered I/O (direct=0) through the "
        f"page cache{why}: {_names(buffered)}. Figures of buffered I/O include the host's "
        "memory, not only the drive."
    ]


def _below_depth(manifest: Manifest, steps: pl.DataFrame) -> list[str]:
    """The steps fio ran below the queue depth they name: by fio's own depth distribution
    (``qd_reached`` of the classified ``steps``), else, where fio did not say, by a
    synchronous engine (:data:`SYNC_ENGINES`) at an ``iodepth`` above 1, which keeps one I/O
    per job in flight."""
    ran = steps.group_by("step_index", "step").agg(
        pl.col("iodepth").max(), pl.col("iodepth_run").min(), pl.col("qd_reached").min()
    )
    depths = {
        index: (step, asked, run)
        for index, step, asked, run, reached in ran.iter_rows()
        if reached is not None and not reached
    }
    known = set(ran.filter(pl.col("qd_reached").is_not_null())["step_index"].to_list())
    for record in _counted(manifest):
        assert record.workload is not None
        engine, asked = record.workload.ioengine, record.workload.iodepth
        if record.index not in known and engine in SYNC_ENGINES and asked > 1:
            depths[record.index] = (record.name, asked, 1)
    short = [depths[i] for i in sorted(depths)]
    if not short:
        return []
    kinds = Counter((asked, run) for _, asked, run in short)
    how = findings.and_list(
        [
            f"QD{a} per job run at QD{r} in {findings.count(n, 'step')}"
            for (a, r), n in kinds.items()
        ]
    )
    names = [step for step, _, _ in short]
    shown = (
        _names(names) if len(names) <= 6 else f"{', '.join(names[:3])} and {len(names) - 3} more"
    )
    return [
        f"fio ran below the configured queue depth in {findings.count(len(short), 'step')} "
        f"({how}: {shown}); the drive saw the depth run, not the one named (a synchronous engine "
        "such as psync keeps one I/O per job in flight whatever iodepth says)."
    ]


def _scaled(manifest: Manifest) -> list[str]:
    """What a run scaled by ``--scale`` is."""
    if manifest.source != "run" or manifest.scale == 1:
        return []
    return [f"The run is scaled by --scale: {scale_note(manifest, 'x')}."]


def _short_fills(filled: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """A sentence per preconditioning step that ended at its time cap with less written than
    its passes plan (:func:`~ssdlab.analysis.fill.cut_at_cap`; an interrupted step has its
    own sentence)."""
    stopped = set(summary.filter(pl.col("status") == "interrupted")["step_index"].to_list())
    short = filled.filter(pl.col("cut_at_cap") & ~pl.col("step_index").is_in(stopped))
    return [
        f"{step} ended at its time cap ({format_duration(runtime_s)}) having written "
        f"{format_bytes(io_bytes)} of its planned {format_bytes(planned)} "
        f"({io_bytes / planned:.0%}): the drive is not preconditioned as the suite means, so "
        "the figures after it may not be those of a preconditioned drive."
        for step, planned, io_bytes, runtime_s in short.select(
            "step", "planned_bytes", "io_bytes", "runtime_s"
        ).iter_rows()
    ]


def _interrupted(summary: pl.DataFrame) -> list[str]:
    """A sentence naming the steps stopped before their end (their figures cover only the
    time they ran; the tables mark them)."""
    if not summary.height:
        return []
    stopped = (
        summary.filter(pl.col("status") == "interrupted")
        .group_by("step_index", "step")
        .agg(pl.col("runtime_s").max())
        .sort("step_index")
    )
    if not stopped.height:
        return []
    ran = ", ".join(
        f"{step} after {format_duration(runtime_s)}"
        for step, runtime_s in stopped.select("step", "runtime_s").iter_rows()
    )
    return [
        f"{findings.count(stopped.height, 'step')} stopped before the end ({ran}): their "
        "figures cover only the time they ran and are marked (interrupted) in the tables."
    ]
