"""fio JSON / json+ output (``--output-format=json`` or ``json+``).

Units of the canonical columns: latencies in nanoseconds (fio 2.x microsecond fields are
converted), bandwidth in bytes/s, sizes in bytes, runtime in seconds, CPU in percent (fio's
``usr_cpu``/``sys_cpu`` are ``usr_cpu_pct``/``sys_cpu_pct``: every column names its unit).

Every value is checked where it is read: a wrong type, a negative, NaN or infinite number
(fio writes none of them), a count beyond 64-bit or a percentile outside 0..100 rejects the
file with an :class:`~ssdlab.errors.InputError` naming it and the field
(``jobs[0].read.clat_ns.N``). Option values must be strings (integers are taken as their
decimal text). Bytes that are not UTF-8 are replaced, as fio copies file names verbatim.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError
from ..units import parse_size, percentile_name
from ..vocab import DIRECTIONS, MIXED_BS_OPTIONS, RW_DIRECTIONS, RWMIXREAD_DEFAULT, base_rw
from .fio_bins import GROUPS, PLAT_VAL
from .text import json_error, read_bytes, size_limit, too_large

#: fio's default percentile list, as canonical column suffixes (99.9 -> ``p99_9``).
DEFAULT_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)


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


#: where a JSON object starts: at a line's start, or where fio's own verify messages written
#: into the same --output file run into the result (``... wanted acca{``)
_OBJECT_START = re.compile(r'^\{|\{(?=\s*"fio version")', re.MULTILINE)
INT64_MAX = 2**63 - 1
JSON_KIND = "fio JSON output"  #: its size limit's name (:data:`~ssdlab.io.text.SIZE_LIMITS`)
#: json+ bins of fio 2.2.12-2.19 are indices of its 19 x 64 microsecond bins
_V2_BINS = GROUPS[2] * PLAT_VAL


def _decode_objects(text: str, path: Path) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, skipping non-JSON lines around them."""
    decoder = json.JSONDecoder()
    objects: list[dict[str, Any]] = []
    start = _OBJECT_START.search(text)
    while start:
        try:
            obj, pos = decoder.raw_decode(text, start.start())
        except (ValueError, RecursionError) as exc:
            raise json_error(exc, path, "fio JSON", ", not fio output") from None
        if isinstance(obj, dict):
            objects.append(obj)
        start = _OBJECT_START.search(text, pos)
    return objects


def _at(where: str, key: str) -> str:
    """The name of field ``key`` of the object named ``where`` (``"<file>: "`` for the top)."""
    return f"{where}{key}" if where.endswith(" ") else f"{where}.{key}"


def _wrong(where: str, expected: str, value: Any) -> InputError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return InputError(f"{where}: expected {expected}, found {shown}")


def _object(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``parent[key]``, an object; empty when absent or null."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong(_at(where, key), "an object", value)
    return value


def _list(parent: dict[str, Any], key: str, where: str) -> list[Any]:
    """``parent[key]``, a list; empty when absent or null."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong(_at(where, key), "a list", value)
    return value


def _finite(value: Any, where: str, scale: float = 1.0) -> float:
    """``value x scale`` for a JSON number from 0 to 2^63 (no rate, latency or byte count
    of a real run is larger, and the frames hold such figures as 64-bit integers)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= 2**64:
        scaled = float(value) * scale
        if 0 <= scaled <= INT64_MAX:
            return scaled
    raise _wrong(where, "a number from 0 to 2^63", value)


def _number(parent: dict[str, Any], key: str, where: str, scale: float = 1.0) -> float | None:
    """``parent[key] x scale`` (see :func:`_finite`); None when absent or null."""
    value = parent.get(key)
    return None if value is None else _finite(value, _at(where, key), scale)


def _whole(value: Any, where: str, scale: int = 1) -> int:
    """``value x scale`` for a JSON integer whose product is in 0 .. 2^63 - 1."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value * scale <= INT64_MAX:
        return value * scale
    raise _wrong(where, "an integer from 0 to 2^63 - 1", value)


def _count(parent: dict[str, Any], key: str, where: str, scale: int = 1) -> int | None:
    """``parent[key] x scale`` (see :func:`_whole`); None when absent or null."""
    value = parent.get(key)
    return None if value is None else _whole(value, _at(where, key), scale)


def _text(parent: dict[str, Any], key: str, where: str) -> str | None:
    """``parent[key]``, a string; None when absent or null."""
    value = parent.get(key)
    if value is not None and not isinstance(value, str):
        raise _wrong(_at(where, key), "a string", value)
    return value


def _option_values(value: Any, where: str) -> dict[str, str]:
    """An option dump as strings (a number is taken as its decimal text)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong(where, "an object of option names to values", value)
    options = {}
    for key, option in value.items():
        if isinstance(option, int) and not isinstance(option, bool):
            option = str(option)
        if not isinstance(option, str):
            raise _wrong(_at(where, key), "a string", option)
        options[key] = option
    return options


def _global_options(top: dict[str, Any], path: Path) -> dict[str, str] | list[dict[str, str]]:
    """``global options``: one object, or (fio >= 3.39 client mode) a list of one per host."""
    glob = top.get("global options")
    where = f"{path}: global options"
    if isinstance(glob, list):
        return [_option_values(part, f"{where}[{i}]") for i, part in enumerate(glob)]
    return _option_values(glob, where)


def _options(glob: dict[str, str] | list[dict[str, str]], job: dict[str, str]) -> dict[str, str]:
    if isinstance(glob, list):
        glob = {k: v for part in glob for k, v in part.items()}
    return {**glob, **job}


def _bs_for(options: dict[str, str], direction: str, where: str) -> int | None:
    """Block size in bytes for one direction of fio's ``bs`` (``4k``, ``4k,64k``; fio's
    default 4k when absent); None when the job mixes sizes
    (:data:`~ssdlab.vocab.MIXED_BS_OPTIONS`)."""
    if any(options.get(key) for key in MIXED_BS_OPTIONS):
        return None
    value = options.get("bs") or options.get("blocksize")
    if not value:
        return 4096
    parts = value.split(",")
    idx = DIRECTIONS.index(direction)
    part = parts[min(idx, len(parts) - 1)] or parts[0]
    try:
        size = parse_size(part)
    except ValueError:
        return None  # ranges and bssplit have no single block size
    except OverflowError:
        size = INT64_MAX + 1
    if size > INT64_MAX:
        raise _wrong(f"{where}.bs", "a block size below 2^63 bytes", value)
    return size


def _int_opt(options: dict[str, str], key: str, default: int | None, where: str) -> int | None:
    """An integer option (``default`` when absent or not an integer); negatives are refused."""
    try:
        value = int(options[key])
    except (KeyError, ValueError):
        return default
    if not 0 <= value <= INT64_MAX:
        raise _wrong(_at(where, key), "an integer from 0 to 2^63 - 1", options[key])
    return value


def _read_share(options: dict[str, str], where: str) -> int:
    """A mixed job's read share in %: ``rwmixread``, else 100 - ``rwmixwrite`` (fio runs
    ``rwmixwrite=30`` as 70/30), else fio's default :data:`~ssdlab.vocab.RWMIXREAD_DEFAULT`."""
    if "rwmixread" not in options and "rwmixwrite" in options:
        written = _int_opt(options, "rwmixwrite", 100 - RWMIXREAD_DEFAULT, where)
        return 100 - min(written or 0, 100)
    return _int_opt(options, "rwmixread", RWMIXREAD_DEFAULT, where) or 0


def _latency(dir_stats: dict[str, Any], stat: str, where: str) -> tuple[dict[str, Any], float, str]:
    """The latency object for ``stat``, the factor converting it to ns, and its name."""
    if f"{stat}_ns" in dir_stats:
        return _object(dir_stats, f"{stat}_ns", where), 1.0, f"{where}.{stat}_ns"
    return _object(dir_stats, stat, where), 1000.0, f"{where}.{stat}"


def _bins(bins: dict[str, Any], scale: float, index_keys: bool, where: str) -> tuple | None:
    """json+ bins as arrays (latency in ns, count) of the non-empty ones, or None. The keys
    are latencies, or (fio 2.2.12-2.19) bin indices of the µs histogram; 2.x also stored
    ``FIO_IO_U_PLAT_*`` constants among them, which are skipped. A key that is no finite
    latency >= 0 (no index of the 1216 bins in 2.x) or a count that is no 64-bit integer >= 0
    rejects the file (checked on whole arrays; :func:`_bad_bin` names the culprit)."""
    keys = [k for k in bins if not k.startswith("FIO_IO_U_PLAT_")]
    if not keys:  # plain JSON (not json+): no bins, and no need of numpy
        return None
    import numpy as np  # here: numpy takes a tenth of a second to import; plain JSON needs none

    from .fio_hist import plat_idx_to_val

    raw = [bins[k] for k in keys]
    try:
        if not all(type(v) is int for v in raw):
            raise ValueError
        values = np.array(keys, dtype=np.float64)
        counts = np.array(raw, dtype=np.int64)
    except (ValueError, OverflowError):
        _bad_bin(keys, raw, index_keys, where)
        raise  # _bad_bin always raises
    limit = _V2_BINS if index_keys else np.inf  # NaN and infinity fail the test too
    fits = (values >= 0) & (values < limit) & (counts >= 0)
    if index_keys:
        fits &= values == np.floor(values)
    if not fits.all():
        _bad_bin(keys, raw, index_keys, where)
    keep = counts != 0
    if not keep.any():
        return None
    if counts.sum(dtype=np.float64) > INT64_MAX:
        raise InputError(f"{where}: bin counts add up to more than 2^63 - 1")
    values = values[keep]
    lat_ns = plat_idx_to_val(values.astype(np.int64)) * 1000.0 if index_keys else values * scale
    if not np.isfinite(lat_ns).all():
        raise InputError(f"{where}: a bin latency is out of range")
    return lat_ns, counts[keep]


def _bad_bin(keys: list[str], counts: list[Any], index_keys: bool, where: str) -> None:
    """Raise the InputError naming the first bin whose key or count no fio writes."""
    limit = _V2_BINS if index_keys else math.inf
    for key, count in zip(keys, counts, strict=True):
        _whole(count, f"{where}[{key!r}]")
        try:
            latency = float(key)
        except ValueError:
            latency = -1.0
        if not 0 <= latency < limit or (index_keys and not latency.is_integer()):
            raise _wrong(where, "bin keys that are latencies >= 0 (bin indices in 2.x)", key)
    raise InputError(f"{where}: bins no fio writes")


def depth_run(levels: Any) -> int | None:
    """The queue depth fio kept most of the job's time, from its ``iodepth_level``
    distribution (``{"1": 0.1, ..., "32": 99.9, ">=64": 0.0}``): the lower bound of the
    fullest bucket (1, 2, 4, ... 64); None when fio did not report one that can be read."""
    if not isinstance(levels, dict):
        return None
    shares = {}
    for key, share in levels.items():
        depth = str(key).removeprefix(">=")
        if not depth.isdigit() or not isinstance(share, int | float) or not share > 0:
            continue
        shares[int(depth)] = float(share)
    return max(shares, key=lambda d: (shares[d], d)) if shares else None


def _totals(d: dict[str, Any], where: str) -> tuple[int, int | None, float]:
    """A direction's ``io_bytes`` (fio < 2.21 wrote KiB there: no ``io_kbytes``), ``total_ios``
    and runtime in seconds."""
    io_bytes = _count(d, "io_bytes", where, 1 if "io_kbytes" in d else 1024) or 0
    runtime_ms = _number(d, "runtime", where) or 0.0
    return io_bytes, _count(d, "total_ios", where), runtime_ms / 1000.0


def _job_rows(
    options: dict[str, str],
    job_index: int,
    job: dict[str, Any],
    version: tuple[int, ...],
    where: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple]]:
    """A job's rows per direction, its percentile rows, and its json+ bins per direction and
    stat as (job_index, direction, stat, lat_ns array, count array)."""
    opt_where = f"{where}.job options"
    rw = options.get("rw") or options.get("readwrite") or "read"
    wanted = set(RW_DIRECTIONS.get(base_rw(rw), ()))
    mixed = len(wanted) > 1
    share = _read_share(options, opt_where) if mixed else None
    if share == 100:  # a 100/0 or 0/100 "mix" does only one direction
        wanted.discard("write")
    elif share == 0:
        wanted.discard("read")
    head = {
        "job_index": job_index,
        "jobname": _text(job, "jobname", where),
        "groupid": _count(job, "groupid", where),
        "hostname": _text(job, "hostname", where),
        "error": _count(job, "error", where) or 0,
        "iodepth_run": depth_run(job.get("iodepth_level")),
    }
    cpu = {f"{key}_pct": _number(job, key, where) for key in ("usr_cpu", "sys_cpu")}
    rows, pct_rows, bin_rows = [], [], []
    for direction in DIRECTIONS:
        if job.get(direction) is None:
            continue
        d = _object(job, direction, where)
        dw = f"{where}.{direction}"
        io_bytes, total_ios, runtime_s = _totals(d, dw)
        if direction not in wanted and not io_bytes:
            continue
        bw = _number(d, "bw_bytes", dw) if "bw_bytes" in d else _number(d, "bw", dw, 1024.0)
        row: dict[str, Any] = {
            **head,
            "direction": direction,
            "rw": rw,
            "bs_bytes": _bs_for(options, direction, dw),
            "iodepth": _int_opt(options, "iodepth", 1, opt_where),
            "numjobs": _int_opt(options, "numjobs", 1, opt_where),
            "rwmixread": share,
            "iops": _number(d, "iops", dw) or 0.0,
            "bw_bytes_s": bw or 0.0,
            "io_bytes": io_bytes,
            "total_ios": total_ios,
            "runtime_s": runtime_s,
            **cpu,
        }
        reported: dict[float, float] = {}
        for stat in ("lat", "clat", "slat"):
            lat, scale, lw = _latency(d, stat, dw)
            samples = _count(lat, "N", lw)
            for key in ("min", "mean", "max", "stddev"):  # fio writes 0s when it has none
                row[f"{stat}_{key}_ns"] = None if samples == 0 else _number(lat, key, lw, scale)
            row[f"{stat}_samples"] = samples
            for key, value in _object(lat, "percentile", lw).items():
                try:
                    percentile = float(key)
                except ValueError:
                    percentile = math.nan
                if not 0 <= percentile <= 100:
                    raise _wrong(f"{lw}.percentile", "percentile keys from 0 to 100", key)
                value_ns = _finite(value, f"{lw}.percentile[{key!r}]", scale)
                pct_rows.append(
                    {
                        "job_index": job_index,
                        "direction": direction,
                        "stat": stat,
                        "percentile": percentile,
                        "value_ns": value_ns,
                    }
                )
                if stat == "clat":
                    reported[percentile] = value_ns
            index_keys = (2, 2, 12) <= version < (2, 20)
            if bins := _bins(_object(lat, "bins", lw), scale, index_keys, f"{lw}.bins"):
                bin_rows.append((job_index, direction, stat, *bins))
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
    # (?<!\d): tried once per run of digits, so a long run takes linear time, not quadratic
    m = re.search(r"(?<!\d)(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?", version or "")
    return tuple(int(g) for g in m.groups() if g is not None) if m else (3,)


def _jobs(top: dict[str, Any], where: str) -> tuple[str, list[dict[str, Any]]]:
    """The key (``jobs``, or ``client_stats`` of a client/server run) and its job objects."""
    key = "jobs" if top.get("jobs") or not top.get("client_stats") else "client_stats"
    jobs = _list(top, key, where)
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise _wrong(f"{where}{key}[{index}]", "an object", job)
    return key, jobs


def _snapshot_rows(objects: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    rows = []
    for snap, top in enumerate(objects):
        where = f"{path}: status object {snap + 1}: "
        key, jobs = _jobs(top, where)
        for index, job in enumerate(jobs):
            for direction in DIRECTIONS:
                if job.get(direction) is None:
                    continue
                dw = f"{where}{key}[{index}].{direction}"
                io_bytes, total_ios, runtime_s = _totals(_object(job, direction, dw), dw)
                if total_ios:
                    rows.append(
                        {
                            "snapshot": snap,
                            "job_index": index,
                            "direction": direction,
                            "io_bytes": io_bytes,
                            "total_ios": total_ios,
                            "runtime_s": runtime_s,
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


def _steadystate_rows(jobs: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    rows = []
    for index, job in enumerate(jobs):
        if job.get("steadystate") is None:
            continue
        jw = f"{where}[{index}]"
        ss = _object(job, "steadystate", jw)
        sw = f"{jw}.steadystate"
        data = _object(ss, "data", sw)
        iops, bw = _list(data, "iops", f"{sw}.data"), _list(data, "bw", f"{sw}.data")
        criterion, attained = _text(ss, "ss", sw), ss.get("attained")
        if attained is not None and not isinstance(attained, int):
            raise _wrong(f"{sw}.attained", "0, 1, true or false", attained)
        for i, (one_iops, one_bw) in enumerate(zip(iops, bw, strict=False)):
            rows.append(
                {
                    "job_index": index,
                    "sample": i,
                    "iops": _finite(one_iops, f"{sw}.data.iops[{i}]"),
                    # ss data bw is bytes/s, unlike a job's KiB/s bw
                    "bw_bytes_s": _finite(one_bw, f"{sw}.data.bw[{i}]"),
                    "criterion": criterion,
                    "attained": bool(attained),
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


def _disk_util(top: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """``disk_util``: a list of objects of names, counts and percentages."""
    disks = _list(top, "disk_util", f"{path}: ")
    for i, disk in enumerate(disks):
        if not isinstance(disk, dict):
            raise _wrong(f"{path}: disk_util[{i}]", "an object", disk)
        for key, value in disk.items():
            finite = isinstance(value, float) and math.isfinite(value)
            if not (isinstance(value, (str, int)) or finite):
                raise _wrong(f"{path}: disk_util[{i}].{key}", "a string or a number", value)
    return disks


def parse_fio_json(raw: bytes, path: Path) -> FioRows:
    """Parse the bytes of a fio JSON/json+ output (text around the JSON is ignored); see the
    module docstring for what is checked; bytes beyond the limit of fio JSON output
    (:data:`~ssdlab.io.text.SIZE_LIMITS`) are refused unparsed."""
    if len(raw) > size_limit(JSON_KIND):
        raise too_large(path, len(raw), JSON_KIND)
    if b"\0" in raw[:4096]:
        raise InputError(f"{path}: binary file, not fio JSON output")
    text = raw.decode("utf-8", errors="replace")
    objects = [o for o in _decode_objects(text, path) if "jobs" in o or "client_stats" in o]
    if not objects:
        what = "empty file" if not text.strip() else "no fio JSON result (no 'jobs' object)"
        raise InputError(f"{path}: {what}")
    top = objects[-1]
    top_where = f"{path}: "
    version = _text(top, "fio version", top_where) or ""
    key, jobs = _jobs(top, top_where)
    glob = _global_options(top, path)
    parsed = FioRows([], [], [], [], [], [], {})
    job_options, job_starts = [], []
    for index, job in enumerate(jobs):
        where = f"{path}: {key}[{index}]"
        job_options.append(_option_values(job.get("job options"), f"{where}.job options"))
        job_starts.append(_count(job, "job_start", where))
        rows, pcts, bins = _job_rows(
            _options(glob, job_options[-1]), index, job, fio_version_tuple(version), where
        )
        client_total = key == "client_stats" and job.get("jobname") == AGGREGATE_JOBNAME
        (parsed.aggregate if client_total else parsed.jobs).extend(rows)
        parsed.percentiles += pcts
        parsed.bins += bins
    parsed.snapshots = _snapshot_rows(objects, path)
    parsed.steadystate = _steadystate_rows(jobs, f"{path}: {key}")
    parsed.meta = {
        "path": str(path),
        "fio_version": version,
        "timestamp_ms": _count(top, "timestamp_ms", top_where)
        or _count(top, "timestamp", top_where, 1000)
        or None,
        "time": _text(top, "time", top_where),
        "global_options": glob,
        "job_options": job_options,
        "job_names": [j.get("jobname") for j in jobs],
        "job_hosts": [j.get("hostname") for j in jobs],
        "job_start_ms": job_starts,
        "hosts": sorted({j["hostname"] for j in jobs if j.get("hostname")}),
        "snapshots": len(objects),
        "disk_util": _disk_util(top, path),
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
        owner = [n for n, res in enumerate(results) for _ in getattr(res, attr)]
        return with_ids(out, owner)

    def bins() -> pl.DataFrame:
        chunks = [(n, *chunk) for n, res in enumerate(results) for chunk in res.bins]
        schema = {"owner": pl.Int64} | _BIN_SCHEMA
        if not chunks:
            return with_ids(pl.DataFrame(schema=schema), []).drop("owner")
        import numpy as np  # json+ only (its bins are numpy arrays: numpy is imported)

        heads = pl.DataFrame([c[:4] for c in chunks], schema=list(schema)[:4], orient="row")
        rows = np.repeat(np.arange(len(chunks)), [len(c[4]) for c in chunks])
        out = heads[rows].with_columns(
            pl.Series(name, np.concatenate([c[i] for c in chunks]))
            for i, name in ((4, "lat_ns"), (5, "count"))
        )
        out = out.cast(schema)  # type: ignore[arg-type]
        return with_ids(out, out["owner"]).drop("owner")

    jobs = frame("jobs", None)
    return FioJson(
        jobs=jobs.with_columns(  # a latency no job has samples of is null throughout
            pl.col(c).cast(pl.Float64)
            for c, t in jobs.schema.items()
            if c.endswith("_ns") and t == pl.Null
        ).with_columns(pl.col(c).cast(pl.Int64) for c in ("iodepth_run",) if c in jobs.columns),
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
    return fio_frames([parse_fio_json(read_bytes(path, kind=JSON_KIND), path)])
