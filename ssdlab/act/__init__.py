"""Aerospike Certification Tool (ACT) storage workload: native logs, latency tables and the
pass rule (as ``act_latency.py``), ACT's derived rates, a fio emulation of the workload run
slice by slice into results directories, and the search for a drive's ACT score."""

from .histogram import edge_bin_ns, hist_log_table
from .latency import ACT_LIMITS, format_table, latency_table, passes
from .log import ActLog, read_act_log
from .search import Search, find_score
from .trials import ActRecord, FioSettings, SliceResult, Trial, native_trial
from .workload import ActConfig, DerivedConfig, derive, fio_jobs, format_derived

__all__ = [
    "ACT_LIMITS",
    "ActConfig",
    "ActLog",
    "ActRecord",
    "DerivedConfig",
    "FioSettings",
    "Search",
    "SliceResult",
    "Trial",
    "derive",
    "edge_bin_ns",
    "find_score",
    "fio_jobs",
    "format_derived",
    "format_table",
    "hist_log_table",
    "latency_table",
    "native_trial",
    "passes",
    "read_act_log",
]
