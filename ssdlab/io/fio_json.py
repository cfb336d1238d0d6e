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

import polars as pl

from ..errors import InputError
from ..units import parse_size

DIRECTIONS = ("read", "write", "trim")
#: fio's default percentile list, as canonical column suffixes (99.9 -> ``p99_9``).
DEFAULT_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
_RW_DIRECTIONS = {
    "read": {"read"}, "randread": {"read"}, "write": {"write"}, "randwrite": {"write"},
    "trim": {"trim"}, "randtrim": {"trim"}, "rw": {"read", "write"},
    "readwrite": {"read", "write"}, "randrw": {"read", "write"}, "trimwrite": {"trim", "write"},
}  # fmt: skip


def percentile_name(p: float) -> str:
    """Column suffix for a percentile: 99.9 -> ``p99_9``, 50 -> ``p50``."""
    return "p" + f"{p:g}".replace(".", "_")


@dataclass
class FioJson:
    """A parsed fio JSON result.

    ``jobs``: one row per job x direction (``<stat>_samples`` is fio's ``N``, 3.18+). ``percentiles``: every reported percentile, long
    (``job_index``, ``direction``, ``stat`` clat/lat/slat, ``percentile``, ``value_ns``).
    ``bins``: json+ latency histogram (``job_index``, ``direction``, ``stat``, ``lat_ns`` = the
    bin's value as fio reports it, ``count``). ``meta``: fio version, timestamps, options.
    """

    jobs: pl.DataFrame
    percentiles: pl.DataFrame
    bins: pl.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)


def _decode_objects(text: str, path: Path) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, skipping non-JSON lines around them."""
    decoder = json.JSONDecoder()
    objects: list[dict[str, Any]] = []
    pos = 0
    for m in re.finditer(r"^\{", text, flags=re.MULTILINE):
        if m.start() < pos:
            continue
        try:
            obj, pos = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}: truncated or malformed fio JSON at line {exc.lineno}, column "
                f"{exc.colno}: {exc.msg}"
            ) from None
        if isinstance(obj, dict):
            objects.append(obj)
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


def _job_rows(
    top: dict[str, Any], job_index: int, job: dict[str, Any], fio_major: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    options = _options(top, job)
    rw = options.get("rw") or options.get("readwrite") or "read"
    wanted = _RW_DIRECTIONS.get(rw.split(":")[0], set())
    mixed = len(wanted) > 1
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
            "rwmixread": _int_opt(options, "rwmixread", 50) if mixed else None,
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
            bins = lat.get("bins") or {}
            if bins and fio_major >= 3:
                bin_rows += [
                    {
                        "job_index": job_index,
                        "direction": direction,
                        "stat": stat,
                        "lat_ns": float(k) * scale,
                        "count": int(v),
                    }
                    for k, v in bins.items()
                ]
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
_BIN_SCHEMA = {
    "job_index": pl.Int64,
    "direction": pl.String,
    "stat": pl.String,
    "lat_ns": pl.Float64,
    "count": pl.Int64,
}


def _major(version: str) -> int:
    m = re.search(r"(\d+)\.", version or "")
    return int(m.group(1)) if m else 3


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
    if b"\0" in raw[:4096]:
        raise InputError(f"{path}: binary file, not fio JSON output")
    text = raw.decode("utf-8", errors="replace")
    objects = [o for o in _decode_objects(text, path) if "jobs" in o or "client_stats" in o]
    if not objects:
        what = "empty file" if not text.strip() else "no fio JSON result (no 'jobs' object)"
        raise InputError(f"{path}: {what}")
    top = objects[-1]
    version = top.get("fio version", "")
    rows, pct_rows, bin_rows = [], [], []
    for index, job in enumerate(top.get("jobs") or top.get("client_stats") or []):
        r, p, b = _job_rows(top, index, job, _major(version))
        rows += r
        pct_rows += p
        bin_rows += b
    meta = {
        "path": str(path),
        "fio_version": version,
        "timestamp_ms": top.get("timestamp_ms") or (top.get("timestamp", 0) * 1000 or None),
        "time": top.get("time"),
        "global_options": top.get("global options") or {},
        "job_options": [j.get("job options") or {} for j in top.get("jobs") or []],
        "job_start_ms": [j.get("job_start") for j in top.get("jobs") or []],
        "snapshots": len(objects),
        "disk_util": top.get("disk_util") or [],
    }
    return FioJson(
        jobs=pl.DataFrame(rows, infer_schema_length=None),
        percentiles=pl.DataFrame(pct_rows, schema=_PCT_SCHEMA),
        bins=pl.DataFrame(bin_rows, schema=_BIN_SCHEMA),
        meta=meta,
    )
