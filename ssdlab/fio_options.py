"""Which fio options a suite may pass to fio: the one policy for suite files and job files.

The job file ssdlab writes is the only thing fio runs, and ssdlab decides the target, the
direction and what runs. So a step's ``options``:

- never set what a step field sets (:data:`STEP_FIELDS`) or what ssdlab sets itself for the
  target, the clock, logs and output (:data:`SSDLAB_OWN`); there is no opt-in for these;
- may set options on :data:`ALLOWED` (performance shaping fio documents as harmless);
- never hold what fio's job-file parser reads as more than one option or another file
  (:data:`DIRECTIVES`), nor an option that makes fio open other files than the judged target
  (:data:`NEVER`); there is no opt-in for these either;
- may set a :data:`GUARDED` option (files, writes, programs) or an option the policy does not
  know only when the user names it with ``--allow-fio-option NAME``; a suite file cannot;
  an option that writes (:data:`WRITING`) makes the step write;
- hold values of letters, digits and ``_ . , : / % + -`` only, at most :data:`MAX_VALUE`
  characters (:func:`value_problem`), so no value starts a new line, a section or an
  expansion in the job file; a ``/`` only in an :data:`ALLOWED` option (``bssplit``): in
  any other it names a file (:func:`_file_problem`), whatever the opt-ins.

An ``ioengine`` other than :data:`SAFE_ENGINES` (``sg``, ``net``...) needs
``--allow-fio-option ioengine``; a library path, ``external:...`` or ``exec`` never passes.

An alias (``fio --cmdhelp=NAME`` prints them) is in the same group as the option it names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from .errors import SuiteError
from .units import parse_size
from .vocab import MIXED_BS_OPTIONS

if TYPE_CHECKING:
    from .suite import Step

#: fio option (and alias) -> the step field that sets it
STEP_FIELDS: dict[str, str] = {
    "rw": "rw", "readwrite": "rw",
    "bs": "bs", "blocksize": "bs",
    "iodepth": "iodepth",
    "numjobs": "numjobs",
    "rwmixread": "rwmixread", "rwmixwrite": "rwmixread",
    "runtime": "runtime_s", "timeout": "runtime_s", "time_based": "runtime_s",
    "ramp_time": "ramp_s",
    "loops": "loops",
    "size": "size",
    "offset": "offset", "fileoffset": "offset",
    "ioengine": "ioengine",
    "direct": "direct", "buffered": "direct",
}  # fmt: skip

#: options ssdlab sets, or that change the target, the clock or the output ssdlab reads
SSDLAB_OWN = frozenset({
    "filename", "name", "description", "wait_for", "new_group", "group_reporting",
    "clocksource", "gtod_reduce", "gtod_cpu", "stats", "disable_lat", "disable_clat",
    "disable_slat", "disable_bw_measurement", "disable_bw", "unified_rw_reporting", "kb_base",
    "unit_base",
    "significant_figures", "per_job_logs", "write_bw_log", "write_iops_log", "write_lat_log",
    "write_hist_log", "bwavgtime", "iopsavgtime", "log_avg_msec", "log_hist_msec",
    "log_hist_coarseness", "log_max_value", "log_offset", "log_prio", "log_entries",
    "log_compression", "log_compression_cpus", "log_store_compressed", "log_unix_epoch",
    "log_alternate_epoch", "log_alternate_epoch_clock_id",
})  # fmt: skip

#: ssdlab's own options a suite may repeat with ssdlab's value (a no-op, kept for old suites)
SSDLAB_FIXED = {"group_reporting": "1"}

#: options that only shape the workload (checked against fio 3.33's HOWTO)
ALLOWED = frozenset({
    "norandommap", "randrepeat", "allrandrepeat", "randseed", "random_distribution",
    "random_generator", "percentage_random", "bssplit", "bsrange", "blocksize_range", "ba",
    "blockalign", "offset_align", "offset_increment", "zero_buffers", "refill_buffers",
    "scramble_buffers", "buffer_compress_percentage", "buffer_compress_chunk",
    "dedupe_percentage", "thinktime", "thinktime_spin", "thinktime_blocks",
    "thinktime_blocks_type", "thinktime_iotime", "rate", "rate_iops", "rate_process",
    "rate_cycle", "ratecycle", "rate_ignore_thinktime", "iodepth_batch", "iodepth_batch_submit",
    "iodepth_batch_complete", "iodepth_batch_complete_min", "iodepth_batch_complete_max",
    "iodepth_low", "hipri", "fixedbufs", "registerfiles", "sqthread_poll", "sqthread_poll_cpu",
    "cpus_allowed", "cpus_allowed_policy", "cpumask", "numa_cpu_nodes", "numa_mem_policy",
    "nice", "prio", "prioclass", "fsync", "fdatasync", "end_fsync", "fsync_on_close", "sync",
    "invalidate", "fadvise_hint", "percentile_list", "clat_percentiles", "lat_percentiles",
    "io_size", "io_limit", "number_ios", "file_service_type", "thread",
    "stonewall", "wait_for_previous", "startdelay", "atomic", "pre_read",
    # libaio and io_uring: priorities, as prio/prioclass (cmdprio_bssplit is bssplit's form)
    "cmdprio", "cmdprio_class", "cmdprio_percentage", "cmdprio_bssplit",
})  # fmt: skip

#: options a load sweep sets on its rate-limited steps (``rate_iops`` per job and direction,
#: ``rate_process``): a sweep's own ``options`` may not hold these or other rate caps. On a
#: plain step ``rate``/``rate_iops``/``rate_process`` stay allowed: they only pace the I/O
SWEEP_OWN = frozenset({"rate", "rate_iops", "rate_process", "rate_min", "rate_iops_min"})

#: fio 3.33's job-file parser (init.c ``__parse_jobs_ini``, parse.c ``strip_blank_end``,
#: options.c ``option_dup_subs``/``fio_keyword_replace``): what it reads in a line as more
#: than ``name=value``; refused in names and values whatever the opt-ins
DIRECTIVES: dict[str, str] = {
    "include": "fio reads a line starting with include as an include of another job file",
    "[": "fio reads a line starting with [ as a new job section",
    ";": "fio reads the rest of the line as a comment",
    "#": "fio reads the rest of the line as a comment",
    "$": "fio substitutes ${VAR} from the environment, and $ncpus, $mb_memory and $pagesize "
    "(then runs bc on the line)",
    "(": "fio evaluates a value starting with ( as arithmetic",
    "\n": "a line break makes the rest a job-file line of its own",
}

RUNS = "runs programs or loads code"
ELSEWHERE = "makes fio read or write other files than the target ssdlab judged"
#: options no opt-in allows, by the reason shown: files no target check has judged
NEVER: dict[str, frozenset[str]] = {
    ELSEWHERE: frozenset({
        "directory", "filename_format", "opendir", "read_iolog", "write_iolog",
        "read_iolog_chunked", "replay_no_stall", "replay_redirect", "replay_scale",
        "replay_align", "replay_time_scale", "replay_skip", "merge_blktrace_file",
        "merge_blktrace_scalars", "merge_blktrace_iters", "verify_state_load",
        # engine options (fio's HOWTO, "I/O engine specific parameters") naming a file, a
        # path or a socket: e4defrag's donor, rados' ceph.conf, libblkio's target, nbd's URI
        # (a unix socket), libnfs's and libhdfs' paths, SPDK's config files
        "donorname", "conf", "libblkio_path", "uri", "nfs_url", "hdfsdirectory", "spdk_conf",
        "spdk_json_conf",
    }),
}  # fmt: skip

#: engines that run programs or load code (any engine fio does not know is loaded as a
#: library: ``external:PATH``, a path or a ``.so`` name)
NEVER_ENGINES = frozenset({"exec", "external"})
_ENGINE = re.compile(r"[a-z][a-z0-9_-]*")
#: ``mem``/``iomem`` take ``TYPE:FILE``; a file backs (and truncates) the I/O buffers
FILE_BACKED = frozenset({"mem", "iomem"})

#: characters in a value: fio 3.33 reads at most 8191 characters of a line (OPT_LEN_MAX) and
#: the rest as a line of its own (``include`` and all); lines stay far below that
MAX_VALUE = 1000
#: characters in any job-file line (a target's ``filename``, a comment)
MAX_LINE = 4000

FILES = "chooses files or devices fio opens"
WRITES = "makes fio write (or trim, or verify by writing)"
PROGRAMS = "runs programs or changes the system"
#: options refused unless opted in, by the reason shown
GUARDED: dict[str, frozenset[str]] = {
    FILES: frozenset({
        "nrfiles", "nr_files", "openfiles", "unique_filename", "lockfile", "mem", "iomem",
    }),
    WRITES: frozenset({
        "allow_mounted_write", "trim_percentage", "trim_verify_zero", "trim_backlog",
        "trim_backlog_batch", "verify", "do_verify", "verify_only", "verify_interval",
        "verify_offset", "verify_pattern", "verify_fatal", "verify_dump", "verify_async",
        "verify_backlog", "verify_backlog_batch", "experimental_verify", "verify_state_save",
        "fill_device", "fill_fs", "zonemode", "zonesize", "zonecapacity",
        "zonerange", "zoneskip", "read_beyond_wp", "max_open_zones", "job_max_open_zones",
        "ignore_zone_limits", "zone_reset_threshold", "zone_reset_frequency",
        "create_serialize", "create_fsync", "create_on_open", "create_only",
        "allow_file_create", "overwrite", "file_append", "unlink", "unlink_each_loop",
        "filesize",  # a file smaller than it is laid out again, even for reads
    }),
    PROGRAMS: frozenset({
        "exec_prerun", "exec_postrun", "trigger", "trigger-file", "trigger-timeout",
        "trigger-remote", "ioscheduler", "cgroup", "cgroup_nodelete", "cgroup_weight", "uid",
        "gid", "lockmem",
    }),
}  # fmt: skip

#: guarded options whose value is the program they run: their opt-in already lets it do
#: anything, so it may be a path
RUN_PROGRAM = frozenset({"exec_prerun", "exec_postrun"})

#: options that make fio write even for a reading step
WRITING = GUARDED[WRITES]

#: engines that only do the I/O the job describes on the job's own files
SAFE_ENGINES = frozenset(
    {"libaio", "io_uring", "psync", "pvsync", "pvsync2", "sync", "posixaio", "null", "mmap"}
)

_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_VALUE = re.compile(r"[A-Za-z0-9_.,:/%+-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHARE = re.compile(r"(\d+(?:\.\d+)?)%")
_TARGET_BAD = re.compile(r"[\x00-\x1f\x7f$\\#;]")
_LINE_BREAK = re.compile(r"[\n\r\x0b\x0c]")


def fio_value(value: str | int | float | bool) -> str:
    """An option value as the job file writes it (booleans as 1/0)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _directive(text: str, *, name: bool) -> str | None:
    """The :data:`DIRECTIVES` key fio would act on in ``text``, an option's name (read from
    the start of its line) or value, or None. An ``include`` is found in any case, after
    blanks, and after a line break; fio itself matches it case-sensitively."""
    lines = _LINE_BREAK.split(text)
    starts = lines if name else lines[1:]
    if any(line.strip().lower().startswith("include") for line in starts):
        return "include"
    if len(lines) > 1:
        return "\n"
    if name and text.strip().startswith("["):
        return "["
    return next((mark for mark in "$;#[(" if mark in text), None)


def _never(name: str) -> str:
    """Why option ``name`` can never be in a job file, whatever the opt-ins ('' when it can):
    fio would read a directive in it, or it is on :data:`NEVER`."""
    if found := _directive(name, name=True):
        return f"holds {found!r}: {DIRECTIVES[found]}; no opt-in allows it"
    why = next((why for why, names in NEVER.items() if name.strip().lower() in names), None)
    return f"{why}: no opt-in allows it" if why else ""


def value_problem(value: str | int | float | bool) -> str | None:
    """Why ``value`` cannot go into a job file, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"value {value} is not a finite number"
    text = fio_value(value)
    if len(text) > MAX_VALUE:
        return f"value of {len(text):,} characters: at most {MAX_VALUE:,} (fio splits long lines)"
    if _VALUE.fullmatch(text):
        return None
    if not text:
        return "value is empty"
    bad = next(repr(c) for c in text if not _VALUE.fullmatch(c))
    if found := _directive(text, name=False):
        return f"value {text!r} has {bad}: {DIRECTIVES[found]}"
    return f"value {text!r} has {bad}: fio values here are letters, digits and _.,:/%+-"


def _name_problem(name: str, value: str | int | float | bool) -> str:
    """Why option ``name`` is refused whatever the user opts in to ('' when it is not)."""
    if (found := _directive(name, name=True)) or not _NAME.fullmatch(name):
        why = f"it {_never(name)}" if found else "lowercase letters, digits, _ and -"
        return f"option {name!r} is not a fio option name: {why}"
    if problem := _never(name):
        return f"option {name!r} {problem}"
    if name in STEP_FIELDS:
        return f"option {name!r}: set it as the step's `{STEP_FIELDS[name]}` field"
    if name in SSDLAB_OWN and SSDLAB_FIXED.get(name) != fio_value(value):
        return (
            f"option {name!r}: ssdlab sets it (target, clock, logs or output); overriding it "
            "would break the target or the results"
        )
    return ""


def override_problem(name: str, value: str | int | float | bool) -> str:
    """Why ``name = value`` cannot be in a job file ('' when it can): a bad name or value, a
    directive or an option of :data:`NEVER`, an option a step field or ssdlab itself sets, or
    a value naming a file (:func:`_file_problem`)."""
    if problem := _name_problem(name, value):
        return problem
    if problem := value_problem(value):
        return f"option {name!r}: {problem}"
    return _file_problem(name, fio_value(value))


def _file_problem(name: str, text: str) -> str:
    """Why the value ``text`` of option ``name`` names a file ('' when it does not): a ``/``
    in any option but :data:`ALLOWED` ones (an engine's option, such as ``donorname``, may
    name any file) and :data:`RUN_PROGRAM`, ``TYPE:FILE`` in :data:`FILE_BACKED`."""
    if ("/" in text and name not in ALLOWED | RUN_PROGRAM) or (name in FILE_BACKED and ":" in text):
        return f"option {name!r}: {text!r} names a file, and {ELSEWHERE}"
    return ""


def option_problem(name: str, value: str | int | float | bool, allowed: Collection[str]) -> str:
    """Why the step option ``name = value`` is refused ('' when it is fine); ``allowed``
    holds the names the user opted in to."""
    if problem := _name_problem(name, value):
        return problem
    if name not in ALLOWED and name not in SSDLAB_FIXED and name not in allowed:
        why = next((why for why, names in GUARDED.items() if name in names), None)
        why = why or "is not on ssdlab's list of options it passes to fio"
        return f"option {name!r} {why}: refused unless you run with --allow-fio-option {name}"
    return override_problem(name, value)


def sweep_option_problem(name: str) -> str:
    """Why a load sweep's step cannot have option ``name`` ('' when it can): the sweep sets
    the rate itself (:data:`SWEEP_OWN`)."""
    if name in SWEEP_OWN:
        return f"option {name!r}: a load sweep sets the rate of its steps itself"
    return ""


def opt_in_problem(name: str) -> str:
    """Why ``--allow-fio-option name`` cannot be given ('' when it can)."""
    if problem := _never(name):
        return f"--allow-fio-option {name!r} {problem}"
    if not _NAME.fullmatch(name):
        return f"--allow-fio-option {name!r}: not a fio option name"
    if name != "ioengine" and name in STEP_FIELDS:
        return f"--allow-fio-option {name}: set the step's `{STEP_FIELDS[name]}` field instead"
    if name in SSDLAB_OWN:
        return f"--allow-fio-option {name}: ssdlab sets it itself; no opt-in can change it"
    return ""


def ioengine_problem(engine: str, allowed: Collection[str]) -> str:
    """Why ``ioengine`` is refused ('' when it is fine): never an engine fio would load as a
    library or one that runs programs (:data:`NEVER_ENGINES`); one outside
    :data:`SAFE_ENGINES` only with the user's opt-in."""
    if problem := value_problem(engine):
        return f"ioengine: {problem}"
    if not _ENGINE.fullmatch(engine) or engine in NEVER_ENGINES:
        return (
            f"ioengine {engine!r} {RUNS} (fio loads an engine name it does not know as a "
            "library; exec runs programs): no opt-in allows it"
        )
    if engine in SAFE_ENGINES or "ioengine" in allowed:
        return ""
    return (
        f"ioengine {engine!r} can run programs or do other I/O than the job's: refused unless "
        f"you run with --allow-fio-option ioengine (safe: {', '.join(sorted(SAFE_ENGINES))})"
    )


def check_options(
    options: Mapping[str, str | int | float | bool], allowed: Collection[str], where: str
) -> None:
    """Raise SuiteError ``where: <problem>`` for the first refused option."""
    for name, value in options.items():
        if problem := option_problem(name, value, allowed):
            raise SuiteError(f"{where}: {problem}")


def writes(rw_writes: bool, ioengine: str, options: Collection[str]) -> bool:
    """Whether fio would write: by the direction, an engine outside :data:`SAFE_ENGINES`
    (ssdlab cannot tell what it does) or an option that writes (:data:`WRITING`)."""
    return rw_writes or ioengine not in SAFE_ENGINES or not WRITING.isdisjoint(options)


def option_bytes(
    name: str, value: str | int | float | bool, target_bytes: int | None
) -> int | None:
    """Bytes in the size-like option ``name``: a fio size, or a share (``10%``) of
    ``target_bytes`` rounded up (None when that is not known); SuiteError for anything else."""
    text = fio_value(value).strip()
    if share := _SHARE.fullmatch(text):
        return None if target_bytes is None else math.ceil(target_bytes * float(share[1]) / 100)
    try:
        return parse_size(text)
    except ValueError:
        raise SuiteError(
            f"option {name!r}: {text!r} is neither a size (e.g. 64m) nor a share of the target "
            "(e.g. 10%)"
        ) from None


def span_bytes(step: Step, target_bytes: int) -> int:
    """Bytes a step's I/O spans in a target of ``target_bytes``: its size (absolute or a
    share), else the target past its offset."""
    if step.size:
        return option_bytes("size", step.size, target_bytes) or 0
    offset = option_bytes("offset", step.offset, target_bytes) if step.offset else 0
    return target_bytes - (offset or 0)


#: options that make a size-based step move another amount than ``loops`` x its span: its
#: I/O amount, mixed block sizes, verify reads
IO_AMOUNT = frozenset({"io_size", "io_limit", "number_ios", "verify", *MIXED_BS_OPTIONS})


def planned_io_bytes(step: Step, target_bytes: int | None) -> int | None:
    """Bytes a size-based step (``loops``) moves when it runs to its end: ``loops`` x
    ``numjobs`` x its span (:func:`span_bytes`) in whole blocks (fio leaves out a last
    partial block). None when that is not known: a time-based step, an unknown target size,
    a ramp (fio leaves its I/O out of the totals), an option of :data:`IO_AMOUNT`, or
    ``offset_increment`` without a ``size`` (each job's span differs)."""
    if (
        not step.loops
        or target_bytes is None
        or step.ramp_s
        or not IO_AMOUNT.isdisjoint(step.options)
        or ("offset_increment" in step.options and not step.size)
    ):
        return None
    span = span_bytes(step, target_bytes)
    return step.loops * step.numjobs * (span - span % step.bs_bytes)


def furthest_byte(step: Step, target_bytes: int | None) -> int | None:
    """Where the furthest I/O of ``step``'s jobs may end, in bytes from the target's start:
    ``offset`` + ``offset_increment`` x (``numjobs`` - 1) + ``size``, a share ``offset``
    aligned up to ``offset_align`` (else ``bs``; fio aligns to the smallest block, never
    more). fio grows a file target to that end: a file shorter than it is no limit.

    None when fio itself keeps the jobs inside the target (checked with fio 3.33): without
    ``size`` each job works to the target's end, with a share ``size`` fio cuts each job's
    at the end, and a job starting past the end is an error; also None when a share of the
    target decides and ``target_bytes`` is not known. ``io_size`` (``io_limit``,
    ``number_ios``) only sets how much I/O is done inside that region; the options that
    place I/O elsewhere (``zonemode``, ``zoneskip``, ``filesize``...) are on
    :data:`GUARDED`."""
    if not step.size or _SHARE.fullmatch(step.size.strip()):
        return None
    end = parse_size(step.size)
    if step.offset:
        offset = option_bytes("offset", step.offset, target_bytes)
        if offset is None:
            return None
        if _SHARE.fullmatch(step.offset.strip()):
            align = option_bytes("offset_align", step.options.get("offset_align", 0), None)
            offset = -(-offset // (align or step.bs_bytes)) * (align or step.bs_bytes)
        end += offset
    increment = step.options.get("offset_increment")
    if increment is not None and step.numjobs > 1:
        each = option_bytes("offset_increment", increment, target_bytes)
        if each is None:
            return None
        end += each * (step.numjobs - 1)
    return end


def _target_problem(path: str) -> str:
    """Why ``path`` cannot be a job file's ``filename`` ('' when it can): see
    :func:`check_target`."""
    if found := _TARGET_BAD.search(path):
        problem = f"it holds {found[0]!r}"
        if found[0] in "#;":
            problem += " (fio would read the rest as a comment and open another file)"
        return problem
    if path != path.strip():
        return "it starts or ends with a blank"
    if len(target_value(path)) > MAX_VALUE:
        return f"{len(path):,} characters, at most {MAX_VALUE:,} (fio splits long lines)"
    return ""


def check_target(path: str) -> None:
    """SuiteError unless ``path`` can be a job file's ``filename``: no control character,
    ``$`` (fio expands variables), ``\\`` (fio's escape), ``#`` or ``;`` (fio 3.33 ends the
    value there, as a comment, and has no escape for them), no blank at either end (fio
    strips it), at most :data:`MAX_VALUE` characters escaped. A ``:``, fio's separator of
    file names, is escaped by :func:`target_value`; fio takes every other character (``=``,
    ``[``, ``%``, quotes, blanks inside) as it is."""
    if problem := _target_problem(path):
        raise SuiteError(f"target {path!r} cannot be written to a fio job file: {problem}")


def target_value(path: str) -> str:
    """``path`` as a job file's ``filename`` value: ``:`` escaped, as fio documents."""
    return path.replace(":", "\\:")


def line_problem(text: str) -> str | None:
    """Why ``text`` cannot be a job-file comment (a control character ends the line; fio
    reads what follows its first 8191 characters as a line of its own)."""
    if m := _CONTROL.search(text):
        return f"{text[: m.start()]!r} is followed by control character {m.group()!r}"
    if len(text) > MAX_LINE:
        return f"{text[:40]!r}... has {len(text):,} characters, at most {MAX_LINE:,}"
    return None


def _job_line_problem(line: str) -> str:
    """Why fio would read the job-file ``line`` as more than a comment, a section or one
    option ssdlab may write ('' when it would not)."""
    text = line.strip()
    if len(line) > MAX_LINE:
        return f"{len(line):,} characters, at most {MAX_LINE:,} (fio splits long lines)"
    if not text or text[0] in ";#":
        return ""
    if text[0] == "[":
        return "" if re.fullmatch(r"\[[A-Za-z0-9][A-Za-z0-9._-]*\]", text) else "a bad section"
    name, _, value = text.partition("=")
    if problem := _never(name) or ("" if _NAME.fullmatch(name) else "not a fio option name"):
        return f"option {name!r}: {problem}"
    if name == "filename":
        return _target_problem(value.replace("\\:", ":"))
    if name == "ioengine":
        return ioengine_problem(value, ("ioengine",))
    return value_problem(value) or _file_problem(name, value)


def job_file_problem(text: str) -> str | None:
    """Why fio must not run the job file ``text``, or None: the last gate, on the text fio
    reads. Each line, as fio 3.33 reads it, is blank, a comment, a section ``[name]`` or a
    ``name=value`` holding no :data:`DIRECTIVES` and no :data:`NEVER` option or engine,
    at most :data:`MAX_LINE` characters."""
    for number, line in enumerate(text.split("\n"), 1):
        if problem := _job_line_problem(line):
            return f"line {number}: {problem}"
    return None
