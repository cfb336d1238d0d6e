"""The facts of a run as two-column tables: the drive and host, and how the test ran."""

from __future__ import annotations

import polars as pl

from .manifest import Manifest
from .tables import UNKNOWN
from .units import format_capacity, format_duration, format_size


def facts_table(facts: list[tuple[str, str | None]]) -> pl.DataFrame:
    """Two-column Item/Value table of the facts whose value is known."""
    known = [(item, value) for item, value in facts if value not in (None, "", "–")]
    return pl.DataFrame(known, schema=["Item", "Value"], orient="row")


def drive_facts(manifest: Manifest, summary: pl.DataFrame | None = None) -> pl.DataFrame:
    """What was tested and on which host: drive identity (or file target), host, CPU. What
    the results do not record (an import knows only what fio's JSON holds) is ``unknown``."""
    target, host = manifest.target, manifest.host
    device = (target.device if target is not None else None) or {}
    facts: list[tuple[str, str | None]] = []
    if target is None or target.kind == "block":
        facts += [
            ("Model", device.get("model") or UNKNOWN),
            ("Serial", device.get("serial") or UNKNOWN),
            ("Firmware", device.get("firmware") or UNKNOWN),
            ("Capacity", _capacity(device.get("size_bytes")) or UNKNOWN),
            ("Block size (logical / physical)", _block_sizes(device) or UNKNOWN),
            ("Transport", device.get("transport") or UNKNOWN),
        ]
    if target is not None:
        size = f" ({format_capacity(target.size_bytes)})" if target.size_bytes else ""
        facts.append(("Target", f"{target.kind} {target.path}{size}"))
    else:
        facts.append(("Target", f"{UNKNOWN} (not recorded by {_recorder(manifest)})"))
    if host is not None:
        memory = f", {format_capacity(host.memory_bytes)} memory" if host.memory_bytes else ""
        threads = f" ({host.cpu_count} threads)" if host.cpu_count else ""
        facts += [
            ("Host", host.hostname),
            ("OS / kernel", f"{host.os} / {host.kernel}"),
            ("CPU", f"{host.cpu_model}{threads}{memory}"),
            ("fio clock", _fio_clock(manifest.fio_clocksource, host.clocksource)),
        ]
    else:
        facts += [
            ("Host", _hostnames(summary) or UNKNOWN),
            ("OS / kernel", UNKNOWN),
            ("CPU", UNKNOWN),
        ]
    if manifest.source == "import":
        facts += [
            ("fio", manifest.fio_version or UNKNOWN),
            ("fio jobs", _jobs(summary) or UNKNOWN),
            ("Job options", _job_options(summary) or UNKNOWN),
            ("Measured", _measured_times(manifest) or UNKNOWN),
        ]
    return facts_table(facts)


def _recorder(manifest: Manifest) -> str:
    return "the imported files" if manifest.source == "import" else "this run"


def _hostnames(summary: pl.DataFrame | None) -> str | None:
    """The hosts fio reported (client/server runs) or ssdlab recorded, from the summary."""
    if summary is None:
        return None
    names: set[str] = set()
    for column in ("hostname", "host"):
        if column in summary.columns and summary[column].dtype == pl.String:
            names |= set(summary[column].drop_nulls().to_list())
    return ", ".join(sorted(names)) or None


def _jobs(summary: pl.DataFrame | None) -> str | None:
    """fio's job names, in order, at most eight."""
    if summary is None or "jobname" not in summary.columns or not summary.height:
        return None
    names = summary["jobname"].drop_nulls().unique(maintain_order=True).to_list()
    if not names:
        return None
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return ", ".join(names[:8]) + more


def _job_options(summary: pl.DataFrame | None) -> str | None:
    """The workloads fio's output describes: rw, block size, QD (jobs x iodepth), mix."""
    if summary is None or not summary.height or "rw" not in summary.columns:
        return None
    columns = [c for c in ("rw", "bs_bytes", "iodepth", "numjobs", "rwmixread") if c in summary]
    rows = summary.select(columns).unique(maintain_order=True)
    texts = []
    for row in rows.iter_rows(named=True):
        parts = [f"rw={row['rw']}"] if row.get("rw") else []
        if row.get("bs_bytes"):
            parts.append(f"bs={format_size(row['bs_bytes'])}")
        if row.get("iodepth"):
            parts.append(f"{row.get('numjobs') or 1} × QD{row['iodepth']}")
        if row.get("rwmixread") is not None and "rw" in (row.get("rw") or ""):
            parts.append(f"rwmixread={row['rwmixread']}")
        texts.append(" ".join(parts))
    unique = list(dict.fromkeys(t for t in texts if t))
    more = f"; and {len(unique) - 6} more" if len(unique) > 6 else ""
    return "; ".join(unique[:6]) + more or None


def _measured_times(manifest: Manifest) -> str | None:
    """When the steps ran, from their recorded start and end times."""
    starts = [s.started for s in manifest.steps if s.started]
    ends = [s.ended for s in manifest.steps if s.ended]
    if not starts:
        return None
    first = min(starts)
    last = max(ends) if ends else None
    span = f" to {last:%Y-%m-%d %H:%M:%S %Z}" if last and last > first else ""
    return f"{first:%Y-%m-%d %H:%M:%S %Z}{span}".strip()


def _fio_clock(pinned: str | None, kernel: str | None) -> str | None:
    if pinned:
        return f"clocksource={pinned} for every step (kernel clock: {kernel})"
    return f"chosen by fio (kernel clock: {kernel})" if kernel else None


def _capacity(size_bytes: int | None) -> str | None:
    return f"{format_capacity(size_bytes)} ({size_bytes:,} bytes)" if size_bytes else None


def _block_sizes(device: dict) -> str | None:
    logical, physical = device.get("logical_block_bytes"), device.get("physical_block_bytes")
    return f"{logical} / {physical} bytes" if logical and physical else None


def scale_note(manifest: Manifest, times: str = " ×") -> str | None:
    """What a scaled run is, in words (``0.01 × the suite's durations ...``; ``times``: how
    the factor is written); None at full scale."""
    if manifest.scale == 1:
        return None
    length = "shortened" if manifest.scale < 1 else "lengthened"
    return (
        f"{manifest.scale:g}{times} the suite's durations and absolute sizes: a {length} run, "
        "not the full test"
    )


def _span(manifest: Manifest) -> str | None:
    """The LBA span the steps addressed: ``size`` from ``offset``, as the suite gave them."""
    spans = []
    for step in manifest.steps:
        w = step.workload
        if w is None:
            continue
        text = f"{_size_text(w.size)} of the target" if w.size else "the whole target"
        if w.offset:
            text += f" from offset {_size_text(w.offset)}"
        spans.append(text)
    unique = list(dict.fromkeys(spans))
    return ", ".join(unique) if unique else None


def _size_text(value: str) -> str:
    """A suite's size as people read it: ``75%``, ``16g``, or bytes as ``25.6 MiB``."""
    return format_capacity(int(value)) if value.isdigit() else value


def _engines(manifest: Manifest) -> str | None:
    engines = list(dict.fromkeys(s.workload.ioengine for s in manifest.steps if s.workload))
    return ", ".join(engines) if engines else None


def _threads_qd(manifest: Manifest, summary: pl.DataFrame) -> str | None:
    """The jobs x iodepth combinations run, ``1 × 1, 4 × 32`` (QD = their product)."""
    pairs = {(s.workload.numjobs, s.workload.iodepth) for s in manifest.steps if s.workload}
    if not pairs and {"numjobs", "iodepth"} <= set(summary.columns):
        rows = summary.select("numjobs", "iodepth").drop_nulls().unique().iter_rows()
        pairs = {(int(j), int(d)) for j, d in rows}
    return ", ".join(f"{j} × {d}" for j, d in sorted(pairs)) if pairs else None


def _settings(manifest: Manifest) -> str | None:
    """The ``--set`` overrides as given; None when not recorded (imports, older runs)."""
    if manifest.source != "run" or manifest.params is None:
        return None
    if not manifest.params:
        return "none (the suite's own parameters)"
    return ", ".join(f"{name}={value}" for name, value in manifest.params.items())


def run_facts(manifest: Manifest, summary: pl.DataFrame) -> pl.DataFrame:
    """How the test ran: the scale first (when not 1), suite, settings (``--set``, LBA span,
    engine, jobs x iodepth), versions, times and durations, purge, direct I/O."""
    steps_ok = sum(s.status == "ok" for s in manifest.steps)
    direct = {s.direct for s in manifest.steps if s.direct is not None}
    measured = (
        summary.group_by("step_index").agg(pl.col("runtime_s").max())["runtime_s"].sum()
        if "runtime_s" in summary.columns and summary.height
        else None
    )
    native = manifest.source == "run"
    wall = (
        (manifest.ended - manifest.started).total_seconds()
        if native and manifest.ended and manifest.started
        else None
    )
    source = (
        f"imported from {len(manifest.steps)} fio results"
        if manifest.source == "import" and manifest.steps
        else f"imported ({manifest.suite_description})"
        if manifest.source == "import"
        else "ssdlab run"
    )
    started = (
        f"{manifest.started:%Y-%m-%d %H:%M:%S %Z}"
        if native and manifest.started
        else _measured_times(manifest) or UNKNOWN
    )
    fio_steps = bool(summary.height)
    facts = [
        ("Scale", scale_note(manifest)),
        ("Label", manifest.label),
        ("Suite", manifest.suite),
        ("Source", source),
        ("Run id", manifest.run_id),
        (
            "Status",
            f"{manifest.status}, {steps_ok} of {len(manifest.steps)} steps ok"
            if manifest.steps
            else f"{manifest.status}, no fio steps (ACT trials only)",
        ),
        ("Started", started),
        ("Imported", f"{manifest.created:%Y-%m-%d %H:%M:%S %Z}" if not native else None),
        ("Wall time", format_duration(wall) if wall else None),
        ("Measured time", format_duration(measured) if measured else None),
        ("Settings (--set)", _settings(manifest)),
        (
            "fio options opted in",
            ", ".join(manifest.allowed_fio_options) if manifest.allowed_fio_options else None,
        ),
        ("LBA span", _span(manifest) or (UNKNOWN if fio_steps else None)),
        ("I/O engine", _engines(manifest) or (UNKNOWN if fio_steps else None)),
        ("Jobs × iodepth", _threads_qd(manifest, summary)),
        ("Purge", manifest.purge or ("none" if native else None)),
        ("Direct I/O", ", ".join("yes" if d else "no" for d in sorted(direct))),
        ("fio", manifest.fio_version or (UNKNOWN if fio_steps else None)),
        ("ssdlab", manifest.ssdlab_version),
    ]
    return facts_table(facts)
