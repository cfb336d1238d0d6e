"""QoS targets: profiles of per-workload latency, throughput and exceedance limits
(:mod:`.profile`; built-ins in ``profiles/``), and the verdicts of a run's steps against
them (:mod:`.judge`). ``ssdlab qos check`` prints them; ``ssdlab report --qos`` adds them to
the drive review (:mod:`ssdlab.review.qos`)."""

from __future__ import annotations

from .judge import VERDICT_SCHEMA, check, judge, matched, passed, slice_exceedance
from .profile import Profile, builtin_profiles, load_profile

__all__ = [
    "VERDICT_SCHEMA",
    "Profile",
    "builtin_profiles",
    "check",
    "judge",
    "load_profile",
    "matched",
    "passed",
    "slice_exceedance",
]
