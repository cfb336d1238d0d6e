"""Drive telemetry: SMART readers, snapshots and write amplification, endurance, power.

- SMART: ``read_smart(path)`` reads nvme-cli (smart-log, OCP smart-add-log, id-ctrl, Intel
  smart-log-add) and smartctl JSON into a :class:`SmartRecord`; ``read_snapshot(path)`` merges
  a directory of captures; ``waf(record)`` and ``smart_delta(before, after)``.
- Endurance: :mod:`ssdlab.telemetry.endurance` (DWPD/TBW, P/E cycles, projected life).
- Power: :mod:`ssdlab.telemetry.power` (meter readers, live sources and samplers,
  ``step_power``, ``efficiency``).
- During ``ssdlab run``: :mod:`ssdlab.telemetry.hooks` (``--smart``, ``--power``), stored as
  :mod:`ssdlab.telemetry.store` describes; the frames ``smart``, ``waf``, ``power``,
  ``power_trace`` and ``endurance`` of ``ssdlab.load`` come from :mod:`ssdlab.telemetry.frames`.

Units follow the field names: bytes, °C, hours, percent, seconds, watts; TB = 10^12 bytes.
"""

from ..formats import Probe
from .endurance import DriveSpec, WearCheck, load_drive_spec, projected_life_years, wear_check
from .power import PowerTrace, efficiency, read_power, step_power
from .record import SmartRecord
from .smart import SMART_FORMATS, detect_smart, read_smart
from .snapshot import SmartDelta, read_snapshot, smart_delta, waf

__all__ = [
    "SMART_FORMATS",
    "DriveSpec",
    "PowerTrace",
    "Probe",
    "SmartDelta",
    "SmartRecord",
    "WearCheck",
    "detect_smart",
    "efficiency",
    "load_drive_spec",
    "projected_life_years",
    "read_power",
    "read_smart",
    "read_snapshot",
    "smart_delta",
    "step_power",
    "waf",
    "wear_check",
]
