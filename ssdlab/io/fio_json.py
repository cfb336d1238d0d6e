"""fio JSON / json+ output (``--output-format=json`` or ``json+``).

Units of the canonical columns: latencies in nanoseconds (fio 2.x microsecond fields are
converted), bandwidth in bytes/s, sizes in bytes, runtime in seconds, CPU in percent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import InputError
from ..units import parse_size, percentile_name
from .fio_hist import plat_idx_to_val

DIRECTIONS = ("read", "write", "trim")
#: fio's default percentile list, as canonical column suffixes (99.9 -> ``p99_9``).
DEFAULT_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
_RW_DIRECTIONS = {
    "read": {"read"}, "randread": {"read"}, "write": {"write"}, "randwrite": {"write"},
    "trim": {"trim"}, "randtrim": {"trim"}, "rw": {"read", "write"},
    "readwrite": {"read", "write"}, "randrw": {"read", "write"}, "trimwrite": {"trim", "write"},
}  # fmt: skip


@dataclass
class FioJson:
    """A parsed fio JSON result.

    ``jobs``: one row per job x direction (``<stat>_samples`` is fio's ``N``, 3.18+).
    ``percentiles``: every reported percentile, long (``job_index``, ``direction``, ``stat``
    clat/lat/slat, ``percentile``, ``value_ns``).
    ``bins``: json+ latency histogram (``job_index``, ``direction``, ``stat``, ``lat_ns`` = the
    bin's value as fio reports it, ``count``). ``aggregate``: the ``All clients`` rows of a
    client/server run, kept apart from the per-host ``jobs``. ``snapshots``: with
    ``--status-interval``, every snapshot's cumulative ``io_bytes``/``total_ios``/
    ``runtime_s`` per job x direction and the rates over each interval (``interval_iops``,
    ``interval_bw_bytes_s``). ``steadystate``: fio's ``ss=`` samples (``iops``, ``bw_bytes_s``)
    with its verdict. ``meta``: fio version, timestamps, options.
    """

    jobs: pl.DataFrame
    percentiles: pl.DataFrame
    bins: pl.DataFrame
    aggregate: pl.DataFrame
    snapshots: pl.DataFrame
    steadystate: pl.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)


_OBJECT_START = re.compile(r"^\{", re.MULTILINE)


def _decode_objects(text: str, path: Path) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, skipping non-JSON lines around them."""
    decoder = json.JSONDecoder()
    objects: list[dict[str, Any]] = []
    start = _OBJECT_START.search(text)
    while start:
        try:
            obj, pos = decoder.raw_decode(text, start.start())
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}: truncated or malformed fio JSON at line {exc.lineno}, column "
                f"{exc.colno}: {exc.msg}"
            ) from None
        if isinstance(obj, dict):
            objects.append(obj)
        start = _OBJECT_START.search(text, pos)
    return objects


def _options(top: dict[str, Any], job: dict[str, Any]) -> dict[str, str]:
    glob = top.get("global options") or {}
    if isinstance(glob, list):  # fio >= 3.39 client mode: one object per host
        glob = {k: v for part in glob for k, v in part.items()}
    return {**glob, **(job.get("job options") or {})}


def _bs_for(value: str | None, direction: str) -> int | None:
    """Block size in bytes for one direction of fio's ``bs`` (``4k``, ``4k,64k``)."""
    if not value:
        return 4096
    parts = value.split(",")
    idx = DIRECTIONS.index(direction)
    part = parts[min(idx, len(parts) - 1)] or parts[0]
    try:
        return parse_size(part)
    except ValueError:
        return None  # ranges and bssplit have no single block size


def _int_opt(options: dict[str, str], key: str, default: int | None) -> int | None:
    try:
        return int(options[key])
    except (KeyError, ValueError):
        return default


def _latency(dir_stats: dict[str, Any], stat: str) -> tuple[dict[str, Any], float]:
    """The latency object for ``stat`` and the factor converting it to ns."""
    if f"{stat}_ns" in dir_stats:
        return dir_stats[f"{stat}_ns"], 1.0
    return dir_stats.get(stat) or {}, 1000.0


def _bins(bins: dict[str, Any], scale: float, index_keys: bool) -> tuple | None:
    """json+ bins as arrays (latency in ns, count) of the non-empty ones, or None. The keys
    are latencies, or (fio 2.2.12-2.19) bin indices of the µs histogram; 2.x also stored
    ``FIO_IO_U_PLAT_*`` constants among them, which are skipped."""
    keys = list(bins)
    try:
        values = np.array(keys, dtype=np.float64)
    except ValueError:  # the constants
        keys = [k for k in keys if k[:1].isdigit()]
        values = np.array(keys, dtype=np.float64)
    counts = np.fromiter((bins[k] for k in keys), dtype=np.int64, count=len(keys))
    keep = counts != 0
    if not keep.any():
        return None
    lat_ns = plat_idx_to_val(values.astype(np.int64)) * 1000.0 if index_keys else values * scale
    return lat_ns[keep], counts[keep]


def _job_rows(
    top: dict[str, Any], job_index: int, job: dict[str, Any], version: tuple[int, ...]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple]]:
    """A job's rows per direction, its percentile rows, and its json+ bins per direction and
    stat as (job_index, direction, stat, lat_ns array, count array)."""
    options = _options(top, job)
    rw = options.get("rw") or options.get("readwrite") or "read"
    wanted = set(_RW_DIRECTIONS.get(rw.split(":")[0], set()))
    mixed = len(wanted) > 1
    share = _int_opt(options, "rwmixread", 50) if mixed else None
    if share == 100:  # a 100/0 or 0/100 "mix" does only one direction
        wanted.discard("write")
    elif share == 0:
        wanted.discard("read")
    rows, pct_rows, bin_rows = [], [], []
    for direction in DIRECTIONS:
        d = job.get(direction)
        if not isinstance(d, dict) or (direction not in wanted and not d.get("io_bytes")):
            continue
        io_bytes = d.get("io_bytes", 0) if "io_kbytes" in d else d.get("io_bytes", 0) * 1024
        row: dict[str, Any] = {
            "job_index": job_index,
            "jobname": job.get("jobname"),
            "groupid": job.get("groupid"),
            "hostname": job.get("hostname"),
            "error": job.get("error", 0),
            "direction": direction,
            "rw": rw,
            "bs_bytes": _bs_for(options.get("bs") or options.get("blocksize"), direction),
            "iodepth": _int_opt(options, "iodepth", 1),
            "numjobs": _int_opt(options, "numjobs", 1),
            "rwmixread": share,
            "iops": float(d.get("iops", 0.0)),
            "bw_bytes_s": float(d["bw_bytes"] if "bw_bytes" in d else d.get("bw", 0) * 1024),
            "io_bytes": int(io_bytes),
            "total_ios": d.get("total_ios"),
            "runtime_s": d.get("runtime", 0) / 1000.0,
            "usr_cpu": job.get("usr_cpu"),
            "sys_cpu": job.get("sys_cpu"),
        }
        for stat in ("lat", "clat", "slat"):
            lat, scale = _latency(d, stat)
            for key in ("min", "mean", "max", "stddev"):
                value = lat.get(key)
                row[f"{stat}_{key}_ns"] = None if value is None else float(value) * scale
            row[f"{stat}_samples"] = lat.get("N")
            for key, value in (lat.get("percentile") or {}).items():
                pct_rows.append(
                    {
                        "job_index": job_index,
                        "direction": direction,
                        "stat": stat,
                        "percentile": float(key),
                        "value_ns": float(value) * scale,
                    }
                )
            if bins := _bins(lat.get("bins") or {}, scale, (2, 2, 12) <= version < (2, 20)):
                bin_rows.append((job_index, direction, stat, *bins))
        reported = {
            r["percentile"]: r["value_ns"]
            for r in pct_rows
            if r["job_index"] == job_index and r["direction"] == direction and r["stat"] == "clat"
        }
        for p in DEFAULT_PERCENTILES:
            row[f"clat_{percentile_name(p)}_ns"] = reported.get(float(p))
        rows.append(row)
    return rows, pct_rows, bin_rows


_PCT_SCHEMA = {
    "job_index": pl.Int64,
    "direction": pl.String,
    "stat": pl.String,
    "percentile": pl.Float64,
    "value_ns": pl.Float64,
}
_SNAP_SCHEMA = {
    "snapshot": pl.Int64,
    "job_index": pl.Int64,
    "direction": pl.String,
    "io_bytes": pl.Int64,
    "total_ios": pl.Int64,
    "runtime_s": pl.Float64,
}
_SS_SCHEMA = {
    "job_index": pl.Int64,
    "sample": pl.Int64,
    "iops": pl.Float64,
    "bw_bytes_s": pl.Float64,
    "criterion": pl.String,
    "attained": pl.Boolean,
}
AGGREGATE_JOBNAME = "All clients"
_BIN_SCHEMA = {
    "job_index": pl.Int64,
    "direction": pl.String,
    "stat": pl.String,
    "lat_ns": pl.Float64,
    "count": pl.Int64,
}


def fio_version_tuple(version: str) -> tuple[int, ...]:
    """``fio-3.33`` -> (3, 33); ``fio-2.2.10`` -> (2, 2, 10); unknown -> (3,)."""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return tuple(int(g) for g in m.groups() if g is not None) if m else (3,)


def _snapshot_rows(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for snap, top in enumerate(objects):
        for index, job in enumerate(top.get("jobs") or top.get("client_stats") or []):
            for direction in DIRECTIONS:
                d = job.get(direction)
                if isinstance(d, dict) and d.get("total_ios"):
                    io = d.get("io_bytes", 0) * (1 if "io_kbytes" in d else 1024)
                    rows.append(
                        {
                            "snapshot": snap,
                            "job_index": index,
                            "direction": direction,
                            "io_bytes": int(io),
                            "total_ios": int(d["total_ios"]),
                            "runtime_s": d.get("runtime", 0) / 1000.0,
                        }
                    )
    return rows


def snapshot_rates(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per-interval IOPS and bandwidth from cumulative status-interval snapshots."""
    over = [*keys, "job_index", "direction"]
    first = pl.col("snapshot") == pl.col("snapshot").min().over(over)

    def delta(col: str) -> pl.Expr:
        return pl.when(first).then(pl.col(col)).otherwise(pl.col(col).diff().over(over))

    dt = delta("runtime_s")
    return frame.sort(*over, "snapshot").with_columns(
        interval_iops=pl.when(dt > 0).then(delta("total_ios") / dt),
        interval_bw_bytes_s=pl.when(dt > 0).then(delta("io_bytes") / dt),
    )


def _steadystate_rows(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for index, job in enumerate(jobs):
        ss = job.get("steadystate")
        if not isinstance(ss, dict):
            continue
        data = ss.get("data") or {}
        for i, (iops, bw) in enumerate(zip(data.get("iops", []), data.get("bw", []), strict=False)):
            rows.append(
                {
                    "job_index": index,
                    "sample": i,
                    "iops": float(iops),
                    "bw_bytes_s": float(bw),  # ss data bw is bytes/s, unlike a job's KiB/s bw
                    "criterion": ss.get("ss"),
                    "attained": bool(ss.get("attained")),
                }
            )
    return rows


@dataclass
class FioRows:
    """A parsed fio JSON result as plain rows, for building frames of many results at once."""

    jobs: list[dict[str, Any]]
    aggregate: list[dict[str, Any]]
    percentiles: list[dict[str, Any]]
    bins: list[tuple]  # (job_index, direction, stat, lat_ns array, count array)
    snapshots: list[dict[str, Any]]
    steadystate: list[dict[str, Any]]
    meta: dict[str, Any]


def parse_fio_json(raw: bytes, path: Path) -> FioRows:
    """Parse the bytes of a fio JSON/json+ output (text around the JSON is ignored)."""
    if b"\0" in raw[:4096]:
        raise InputError(f"{path}: binary file, not fio JSON output")
    text = raw.decode("utf-8", errors="replace")
    objects = [o for o in _decode_objects(text, path) if "jobs" in o or "client_stats" in o]
    if not objects:
        what = "empty file" if not text.strip() else "no fio JSON result (no 'jobs' object)"
        raise InputError(f"{path}: {what}")
    top = objects[-1]
    version = top.get("fio version", "")
    jobs = top.get("jobs") or top.get("client_stats") or []
    parsed = FioRows([], [], [], [], _snapshot_rows(objects), _steadystate_rows(jobs), {})
    for index, job in enumerate(jobs):
        rows, pcts, bins = _job_rows(top, index, job, fio_version_tuple(version))
        client_total = "client_stats" in top and job.get("jobname") == AGGREGATE_JOBNAME
        (parsed.aggregate if client_total else parsed.jobs).extend(rows)
        parsed.percentiles += pcts
        parsed.bins += bins
    parsed.meta = {
        "path": str(path),
        "fio_version": version,
        "timestamp_ms": top.get("timestamp_ms") or (top.get("timestamp", 0) * 1000 or None),
        "time": top.get("time"),
        "global_options": top.get("global options") or {},
        "job_options": [j.get("job options") or {} for j in jobs],
        "job_names": [j.get("jobname") for j in jobs],
        "job_hosts": [j.get("hostname") for j in jobs],
        "job_start_ms": [j.get("job_start") for j in jobs],
        "hosts": sorted({j["hostname"] for j in jobs if j.get("hostname")}),
        "snapshots": len(objects),
        "disk_util": top.get("disk_util") or [],
    }
    return parsed


def fio_frames(results: list[FioRows], ids: list[dict[str, Any]] | None = None) -> FioJson:
    """One FioJson of many parsed results; ``ids[i]`` (e.g. step index and name) is added
    to every row of ``results[i]``. ``meta`` is that of the last result."""
    ids = ids or [{} for _ in results]
    keys = list(ids[0]) if ids else []
    id_schema = {
        k: pl.Int64 if isinstance(v, int) else pl.String for k, v in (ids[0] if ids else {}).items()
    }

    def with_ids(out: pl.DataFrame, owner: Any) -> pl.DataFrame:
        """``out`` with the ids of the result (index ``owner``) each row came from."""
        return out.with_columns(
            pl.Series(k, [i[k] for i in ids], dtype=id_schema[k]).gather(owner) for k in keys
        )

    def frame(attr: str, schema: dict[str, Any] | None) -> pl.DataFrame:
        data = [row for res in results for row in getattr(res, attr)]
        out = pl.DataFrame(data, schema=schema, infer_schema_length=None)
        owner = np.repeat(np.arange(len(results)), [len(getattr(r, attr)) for r in results])
        return with_ids(out, owner)

    def bins() -> pl.DataFrame:
        chunks = [(n, *chunk) for n, res in enumerate(results) for chunk in res.bins]
        schema = {"owner": pl.Int64} | _BIN_SCHEMA
        if not chunks:
            return with_ids(pl.DataFrame(schema=schema), []).drop("owner")
        heads = pl.DataFrame([c[:4] for c in chunks], schema=list(schema)[:4], orient="row")
        rows = np.repeat(np.arange(len(chunks)), [len(c[4]) for c in chunks])
        out = heads[rows].with_columns(
            pl.Series(name, np.concatenate([c[i] for c in chunks]))
            for i, name in ((4, "lat_ns"), (5, "count"))
        )
        out = out.cast(schema)  # type: ignore[arg-type]
        return with_ids(out, out["owner"]).drop("owner")

    return FioJson(
        jobs=frame("jobs", None),
        percentiles=frame("percentiles", _PCT_SCHEMA),
        bins=bins(),
        aggregate=frame("aggregate", None),
        snapshots=snapshot_rates(frame("snapshots", _SNAP_SCHEMA), keys),
        steadystate=frame("steadystate", _SS_SCHEMA),
        meta=results[-1].meta if results else {},
    )


def read_fio_json(path: str | Path) -> FioJson:
    """Read a fio JSON or json+ output file (text around the JSON is ignored).

    When the file holds several JSON objects (``--status-interval``), the last one is the
    result; ``meta["snapshots"]`` counts them.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    return fio_frames([parse_fio_json(raw, path)])
