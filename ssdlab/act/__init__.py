"""Aerospike Certification Tool (ACT) storage workload: native logs, latency tables and the
pass rule (as ``act_latency.py``), ACT's derived rates, and a fio emulation of the workload."""

from .histogram import bin_edges_ns, edge_bin_ns, hist_log_table
from .latency import ACT_LIMITS, format_table, latency_table, passes
from .log import ActLog, read_act_log
from .workload import ActConfig, DerivedConfig, derive, fio_jobs, format_derived

__all__ = [
    "ACT_LIMITS",
    "ActConfig",
    "ActLog",
    "DerivedConfig",
    "bin_edges_ns",
    "derive",
    "edge_bin_ns",
    "fio_jobs",
    "format_derived",
    "format_table",
    "hist_log_table",
    "latency_table",
    "passes",
    "read_act_log",
]
