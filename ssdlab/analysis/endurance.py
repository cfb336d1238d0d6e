"""Write amplification per workload and endurance projected from every source a drive offers.

Units: bytes (``tbw_bytes``: host bytes the drive takes over its life), drive writes per day
(``dwpd``, full user capacity per day over the warranty), years of 365 days, ``waf`` NAND /
host bytes. See :mod:`ssdlab.telemetry.endurance` for the arithmetic and the drive file.

Each source of a projection gives a budget, what the drive may write over its life; a
workload's projected TBW is that budget at the workload's WAF, the WAF of its last step (the
drive's most settled state; :func:`waf_by_workload`):

- ``rating``: the data sheet's TBW (or DWPD x capacity x 365 x years) under its own workload,
  JESD219 for an enterprise drive. Scaled to another workload only when the run measured
  JESD219's WAF on the drive: TBW x WAF(JESD219) / WAF(workload).
- ``P/E cycles``: rated P/E cycles x raw NAND capacity, the NAND bytes the drive may
  program; TBW = that / WAF.
- ``wear (run)``: the NVMe Percentage Used (SATA: the wear-out attribute) the run consumed,
  per byte it wrote: host (NAND) bytes x 100 / percent used, at the run's WAF.
- ``wear (lifetime)``: the same from the drive's lifetime counters and percent used.
- ``erase count``: lifetime bytes x rated P/E cycles / the average erase count.

Without a drive file or options the SMART sources still project (capacity from SMART, a
5-year warranty assumed); every row names its source and its assumptions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InputError
from ..manifest import Manifest
from ..telemetry import store
from ..telemetry.endurance import (
    DAYS_PER_YEAR,
    TB,
    DriveSpec,
    dwpd_from_tbw,
    load_drive_spec,
    tbw_from_dwpd,
)
from .drive import DriveAnalysis
from .steady_state import SteadyState, snia_steady_state

#: the JEDEC JESD219 enterprise endurance workload as fio runs it (100 % random writes)
JESD219_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
JESD219_DISTRIBUTION = "zoned:50/5:30/15:20/80"
JESD219 = "JESD219 enterprise"
#: the warranty a projection assumes when neither the drive file nor an option gives one
DEFAULT_WARRANTY_YEARS = 5.0
#: segments whose WAF the convergence verdict judges (the SNIA PTS window)
CONVERGENCE_WINDOW = 5

WAF_STEP_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "workload": pl.String,
    "host_bytes": pl.Int64,
    "nand_bytes": pl.Int64,
    "waf": pl.Float64,
}
WAF_WORKLOAD_SCHEMA = {
    "workload": pl.String,
    "steps": pl.Int64,
    "host_bytes": pl.Int64,
    "nand_bytes": pl.Int64,
    "waf": pl.Float64,
    "last_waf": pl.Float64,
}
PROJECTION_SCHEMA = {
    "source": pl.String,
    "workload": pl.String,
    "waf": pl.Float64,
    "tbw_bytes": pl.Float64,
    "dwpd": pl.Float64,
    "warranty_years": pl.Float64,
    "assumptions": pl.String,
}
INPUT_SCHEMA = {"item": pl.String, "value": pl.Float64, "unit": pl.String, "from": pl.String}

_TB_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*(gb|tb|pb)?\s*$", re.IGNORECASE)
_TB_SCALE = {"gb": 1e-3, "tb": 1.0, "pb": 1e3}


def parse_tb(text: str | float, what: str) -> float:
    """Decimal terabytes in ``7000``, ``7000TB``, ``7PB`` or ``960GB``; InputError naming
    ``what`` otherwise, or when not positive."""
    match = _TB_TEXT.match(str(text))
    value = float(match[1]) * _TB_SCALE[(match[2] or "tb").lower()] if match else 0.0
    if value <= 0:
        raise InputError(f"{what}: {text!r} is not a positive size in TB (e.g. 7000TB, 3.84)")
    return value


def is_jesd219(options: dict[str, Any]) -> bool:
    """Whether a step's fio options make it the JESD219 enterprise workload."""
    return (
        str(options.get("bssplit", "")) == JESD219_BSSPLIT
        and str(options.get("random_distribution", "")) == JESD219_DISTRIBUTION
    )


def jesd219_steps(manifest: Manifest) -> set[int]:
    """Indexes of a native run's JESD219 steps (size-based writes, yet tests, not fills)."""
    return {
        record.index
        for record in manifest.steps
        if record.workload is not None and is_jesd219(record.workload.options)
    }


def waf_steps(waf: pl.DataFrame, steps: pl.DataFrame, manifest: Manifest) -> pl.DataFrame:
    """The ``waf`` frame's steps with their workload: :data:`JESD219` for the JESD219
    workload, else the label of :func:`~.workloads.classify` (``4K random write``, fills
    included: ``steps`` is the classified frame with them), else the step's name."""
    labels = dict(
        steps.group_by("step_index", maintain_order=True).agg(pl.col("workload").first()).rows()
    )
    labels |= dict.fromkeys(jesd219_steps(manifest), JESD219)
    return (
        waf.with_columns(
            workload=pl.col("step_index").replace_strict(
                labels, default=pl.col("step"), return_dtype=pl.String
            )
        )
        .select(list(WAF_STEP_SCHEMA))
        .cast(WAF_STEP_SCHEMA)  # type: ignore[arg-type]
        .sort("step_index")
    )


def waf_by_workload(by_step: pl.DataFrame) -> pl.DataFrame:
    """Per workload of :func:`waf_steps` with a known WAF: its steps, host and NAND bytes,
    ``waf`` over them all and ``last_waf`` of its last step (the drive's most settled state:
    what projections use), in the order the run first wrote each."""
    known = by_step.filter(pl.col("waf").is_not_null() & (pl.col("host_bytes") > 0))
    return (
        known.group_by("workload", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("steps"),
            pl.col("host_bytes").sum(),
            pl.col("nand_bytes").sum(),
            pl.col("waf").last().alias("last_waf"),
        )
        .with_columns(waf=pl.col("nand_bytes") / pl.col("host_bytes"))
        .select(list(WAF_WORKLOAD_SCHEMA))
        .cast(WAF_WORKLOAD_SCHEMA)  # type: ignore[arg-type]
    )


def waf_convergence(by_step: pl.DataFrame, workload: str = JESD219) -> SteadyState | None:
    """The SNIA PTS rule (data excursion 20 %, slope 10 % of the average) over the WAF of
    ``workload``'s last :data:`CONVERGENCE_WINDOW` segments; None with fewer than 3."""
    values = by_step.filter(pl.col("workload") == workload)["waf"].drop_nulls().to_list()
    if len(values) < 3:
        return None
    return snia_steady_state(values, min(CONVERGENCE_WINDOW, len(values)))


@dataclass(frozen=True)
class Rating:
    """What a projection knows of the drive (bytes, years, cycles; None: unknown) and where
    each figure came from (``sources``: field -> ``drive.toml``, ``--dwpd``, ``SMART``, ...)."""

    capacity_bytes: float | None = None
    warranty_years: float = DEFAULT_WARRANTY_YEARS
    tbw_bytes: float | None = None
    dwpd: float | None = None
    pe_cycles: float | None = None
    raw_capacity_bytes: float | None = None
    sources: dict[str, str] = field(default_factory=dict)


def rating(
    spec: DriveSpec | None = None,
    spec_name: str = "drive file",
    smart_capacity_bytes: int | None = None,
    **given: float | None,
) -> Rating:
    """The drive's rating from, in this order of precedence: ``given`` options (keys of
    :data:`OPTIONS`: TB for ``capacity_tb``, ``rated_tbw`` and ``raw_capacity_tb``; None:
    not given), the drive file ``spec`` (named ``spec_name``), the SMART capacity. A given
    TBW or DWPD replaces the file's rating (both of them); the missing one of the two is
    derived from the other."""
    from_spec: dict[str, float | None] = {}
    if spec is not None:
        from_spec = {
            "capacity_tb": spec.capacity_tb,
            "warranty_years": spec.warranty_years,
            "rated_tbw": spec.rated_tbw,
            "dwpd": spec.dwpd,
            "pe_cycles": spec.pe_cycles,
            "raw_capacity_tb": spec.raw_tb,
        }
        if given.get("rated_tbw") is not None or given.get("dwpd") is not None:
            from_spec |= {"rated_tbw": None, "dwpd": None}
    values: dict[str, float] = {}
    sources: dict[str, str] = {}
    for name, option in OPTIONS.items():
        for value, where in ((given.get(name), option), (from_spec.get(name), spec_name)):
            if value is not None:
                values[name], sources[name] = float(value), where
                break
    if "capacity_tb" not in values and smart_capacity_bytes:
        values["capacity_tb"], sources["capacity_tb"] = smart_capacity_bytes / TB, "SMART"
    years = values.get("warranty_years", DEFAULT_WARRANTY_YEARS)
    sources.setdefault("warranty_years", "assumed")
    capacity = values.get("capacity_tb")
    tbw, dwpd = values.get("rated_tbw"), values.get("dwpd")
    if tbw is not None and dwpd is not None and capacity:
        implied = tbw_from_dwpd(dwpd, capacity, years)
        if abs(implied - tbw) > 0.05 * tbw:
            raise InputError(
                f"the rated TBW ({tbw:,.0f} TB, {sources['rated_tbw']}) and DWPD ({dwpd:g}, "
                f"{sources['dwpd']}) disagree: {dwpd:g} DWPD x {capacity:g} TB x 365 x "
                f"{years:g} years is {implied:,.0f} TB; give one of them"
            )
    if tbw is None and dwpd is not None and capacity:
        tbw, sources["rated_tbw"] = tbw_from_dwpd(dwpd, capacity, years), "from DWPD"
    if dwpd is None and tbw is not None and capacity:
        dwpd, sources["dwpd"] = dwpd_from_tbw(tbw, capacity, years), "from TBW"
    raw = values.get("raw_capacity_tb")
    return Rating(
        capacity_bytes=None if capacity is None else capacity * TB,
        warranty_years=years,
        tbw_bytes=None if tbw is None else tbw * TB,
        dwpd=dwpd,
        pe_cycles=values.get("pe_cycles"),
        raw_capacity_bytes=None if raw is None else raw * TB,
        sources={_FIELDS[k]: v for k, v in sources.items()},
    )


#: the rating's inputs and the options (``ssdlab endurance project``) that give them
OPTIONS = {
    "capacity_tb": "--capacity",
    "warranty_years": "--warranty-years",
    "rated_tbw": "--rated-tbw",
    "dwpd": "--dwpd",
    "pe_cycles": "--pe-cycles",
    "raw_capacity_tb": "--raw-capacity",
}
#: the fields of :class:`Rating` the inputs set
_FIELDS = {
    "capacity_tb": "capacity_bytes",
    "warranty_years": "warranty_years",
    "rated_tbw": "tbw_bytes",
    "dwpd": "dwpd",
    "pe_cycles": "pe_cycles",
    "raw_capacity_tb": "raw_capacity_bytes",
}


@dataclass(frozen=True)
class Wear:
    """Counters a wear source read: ``host_bytes`` and ``nand_bytes`` written while
    ``consumed`` (a share of life, 0..1) was used up; ``what`` describes it."""

    host_bytes: float
    nand_bytes: float | None
    consumed: float
    what: str


def smart_wear(smart: pl.DataFrame, pe_cycles: float | None) -> dict[str, Wear | str]:
    """The wear sources of a ``smart`` frame: ``wear (run)``, ``wear (lifetime)``, ``erase
    count``; each a :class:`Wear`, or why it cannot project."""
    if not smart.height:
        return dict.fromkeys(_WEAR_SOURCES, "no SMART snapshots")
    rows = smart.sort("step_index", pl.col("phase") == "after").rows(named=True)
    first, last = rows[0], rows[-1]
    found: dict[str, Wear | str] = {}
    p0, p1 = first["percent_used"], last["percent_used"]
    host = _delta(first, last, "host_bytes_written")
    if p0 is None or p1 is None or host is None:
        found["wear (run)"] = "no percent used or host bytes written in the snapshots"
    elif p1 <= p0:
        found["wear (run)"] = (
            f"percent used stayed at {p1} % over the run: it counts whole percents, so a "
            "projection needs a run that uses up at least 1 %"
        )
    else:
        found["wear (run)"] = Wear(
            host,
            _delta(first, last, "nand_bytes_written"),
            (p1 - p0) / 100,
            f"percent used rose from {p0} % to {p1} % (whole percents: the rise is "
            f"{p1 - p0} ± 1 %)",
        )
    life_host, life_nand = last["host_bytes_written"], last["nand_bytes_written"]
    if p1 is None or not life_host:
        found["wear (lifetime)"] = "no percent used or lifetime host bytes written"
    elif p1 == 0:
        found["wear (lifetime)"] = "percent used is 0 %: the drive reports no wear yet"
    else:
        found["wear (lifetime)"] = Wear(
            life_host, life_nand, p1 / 100, f"percent used {p1} % after the drive's lifetime writes"
        )
    erases = last.get("average_erase_count")
    if not erases or not life_host:
        found["erase count"] = "the drive reports no average erase count"
    elif not pe_cycles:
        found["erase count"] = "no rated P/E cycles (--pe-cycles or pe_cycles in the drive file)"
    else:
        found["erase count"] = Wear(
            life_host,
            life_nand,
            erases / pe_cycles,
            f"average erase count {erases} of {pe_cycles:g} rated P/E cycles",
        )
    return found


_WEAR_SOURCES = ("wear (run)", "wear (lifetime)", "erase count")


def _delta(first: dict[str, Any], last: dict[str, Any], name: str) -> float | None:
    """``last - first`` of a counter (the first snapshot's before, the last one's after)."""
    if first[name] is None or last[name] is None:
        return None
    return float(last[name] - first[name])


@dataclass(frozen=True)
class Projections:
    """Endurance projections side by side: ``inputs`` (``item``, ``value``, ``unit``,
    ``from``), ``rows`` (:data:`PROJECTION_SCHEMA`) and, per source without rows, why."""

    inputs: pl.DataFrame
    rows: pl.DataFrame
    missing: dict[str, str]


def project(rated: Rating, workloads: pl.DataFrame, smart: pl.DataFrame) -> Projections:
    """Projected TBW and DWPD per source and workload (see the module docstring).

    ``workloads``: :func:`waf_by_workload`; ``smart``: the run's ``smart`` frame (the wear
    sources: :func:`smart_wear`)."""
    measured = dict(workloads.select("workload", "last_waf").rows())
    years = rated.warranty_years
    rows: list[dict[str, Any]] = []
    missing: dict[str, str] = {}

    def add(source: str, workload: str, waf: float | None, tbw: float, why: str) -> None:
        capacity = rated.capacity_bytes
        dwpd = tbw / (capacity * DAYS_PER_YEAR * years) if capacity else None
        if capacity is None:
            why += "; DWPD needs the capacity (--capacity)"
        rows.append(
            {
                "source": source,
                "workload": workload,
                "waf": waf,
                "tbw_bytes": tbw,
                "dwpd": dwpd,
                "warranty_years": years,
                "assumptions": f"{why}; {_years_note(rated)}",
            }
        )

    def per_workload(source: str, nand_budget: float, why: str) -> None:
        for workload, waf in measured.items():
            add(source, workload, waf, nand_budget / waf, f"{why}; WAF of its last step")

    if rated.tbw_bytes is None and rated.dwpd is not None:
        missing["rating"] = "a DWPD rating but no capacity to turn it into TBW (--capacity)"
    elif rated.tbw_bytes is None:
        missing["rating"] = "no rated TBW or DWPD (--rated-tbw, --dwpd or a drive file)"
    else:
        add("rating", f"{JESD219} (the rating's)", None, rated.tbw_bytes, "the data sheet's")
        if JESD219 in measured:
            per_workload(
                "rating",
                rated.tbw_bytes * measured[JESD219],
                f"the rating is for JESD219, measured here at WAF {measured[JESD219]:.2f}",
            )
        else:
            missing["rating per workload"] = (
                "scaling the rating to a workload needs JESD219's WAF on this drive "
                "(run the jesd219-enterprise suite with --smart)"
            )
    if rated.pe_cycles and rated.raw_capacity_bytes:
        per_workload(
            "P/E cycles",
            rated.pe_cycles * rated.raw_capacity_bytes,
            f"{rated.pe_cycles:g} P/E cycles x {rated.raw_capacity_bytes / TB:g} TB raw NAND, "
            "wear levelling even (WLF 1), the rated retention",
        )
        if not measured:
            missing["P/E cycles"] = "no workload with a measured WAF"
    else:
        missing["P/E cycles"] = (
            "needs rated P/E cycles and the raw NAND capacity (--pe-cycles, --raw-capacity, "
            "or pe_cycles and over_provisioning_percent in the drive file)"
        )
    whole = {"wear (run)": "the run's writes"}
    for source, wear in smart_wear(smart, rated.pe_cycles).items():
        if isinstance(wear, str):
            missing[source] = wear
            continue
        own_waf = wear.nand_bytes / wear.host_bytes if wear.nand_bytes else None
        why = f"{wear.what}; wear grows with NAND bytes written"
        add(
            source,
            whole.get(source, "the drive's lifetime writes"),
            own_waf,
            wear.host_bytes / wear.consumed,
            why,
        )
        if own_waf:
            per_workload(source, wear.host_bytes * own_waf / wear.consumed, why)
    return Projections(_inputs(rated), pl.DataFrame(rows, schema=PROJECTION_SCHEMA), missing)


def _years_note(rated: Rating) -> str:
    where = rated.sources.get("warranty_years", "assumed")
    return f"{rated.warranty_years:g}-year warranty ({where}), 365-day years, TB = 10^12 bytes"


def _inputs(rated: Rating) -> pl.DataFrame:
    """The rating's figures, their units and where each came from."""
    items = (
        ("capacity", "capacity_bytes", "bytes"),
        ("warranty", "warranty_years", "years"),
        ("rated endurance", "tbw_bytes", "bytes"),
        ("rated DWPD", "dwpd", "drive writes/day"),
        ("rated P/E cycles", "pe_cycles", "cycles"),
        ("raw NAND capacity", "raw_capacity_bytes", "bytes"),
    )
    rows = [
        (item, float(value), unit, rated.sources.get(name, ""))
        for item, name, unit in items
        if (value := getattr(rated, name)) is not None
    ]
    return pl.DataFrame(rows, schema=INPUT_SCHEMA, orient="row")


@dataclass(frozen=True)
class Endurance:
    """A run's endurance figures: WAF per step with its workload (:func:`waf_steps`), per
    workload (:func:`waf_by_workload`), JESD219's convergence and the projections."""

    by_step: pl.DataFrame
    workloads: pl.DataFrame
    convergence: SteadyState | None
    projections: Projections


def drive_endurance(
    drive: DriveAnalysis, spec_path: str | Path | None = None, **given: float | None
) -> Endurance:
    """:class:`Endurance` of a run: the rating from ``given`` options (see :func:`rating`),
    the drive file ``spec_path`` (default: the one in the results directory, if any) and
    SMART."""
    results = drive.results
    spec_path = store.find_drive_spec(results.path) if spec_path is None else Path(spec_path)
    spec = load_drive_spec(spec_path) if spec_path is not None else None
    smart = results.smart
    capacity = smart["capacity_bytes"].drop_nulls()
    rated = rating(
        spec,
        spec_path.name if spec_path is not None else "drive file",
        int(capacity[-1]) if capacity.len() else None,
        **given,
    )
    by_step = waf_steps(results.waf, drive.steps, results.manifest)
    workloads = waf_by_workload(by_step)
    return Endurance(
        by_step,
        workloads,
        waf_convergence(by_step),
        project(rated, workloads, smart),
    )


def project_results(
    results_dir: str | Path,
    drive_file: str | Path | None = None,
    *,
    capacity: str | None = None,
    rated_tbw: str | None = None,
    raw_capacity: str | None = None,
    dwpd: float | None = None,
    warranty_years: float | None = None,
    pe_cycles: float | None = None,
) -> Endurance:
    """:func:`drive_endurance` of a results directory, sizes in decimal TB as text
    (``7000TB``, ``3.84``; see :func:`parse_tb`) as ``ssdlab endurance project`` takes them."""
    from ..results import load

    numbers = {"dwpd": dwpd, "warranty_years": warranty_years, "pe_cycles": pe_cycles}
    for name, value in numbers.items():
        if value is not None and not 0 < value < math.inf:
            raise InputError(f"{OPTIONS[name]}: {value} is not a positive number")
    sizes = {"capacity_tb": capacity, "rated_tbw": rated_tbw, "raw_capacity_tb": raw_capacity}
    for name, text in sizes.items():
        numbers[name] = None if text is None else parse_tb(text, OPTIONS[name])
    return drive_endurance(DriveAnalysis(load(results_dir)), drive_file, **numbers)


@dataclass(frozen=True)
class EnduranceComparison:
    """Drives side by side (:func:`compare_endurance`): per run its directory, label (with
    the directory's name when two are the same) and ``endurance`` and ``waf`` frames
    (:mod:`ssdlab.telemetry.frames`); ``items``: ``item`` (an endurance item with its unit,
    ``rated endurance (TBW)``) and its value for each run, a column per label, for the items
    any run has; ``workloads``: ``step`` and each run's WAF of it, likewise."""

    paths: list[Path]
    labels: list[str]
    endurance: list[pl.DataFrame]
    waf: list[pl.DataFrame]
    items: pl.DataFrame
    workloads: pl.DataFrame

    @property
    def empty(self) -> list[Path]:
        """The runs with neither a drive file nor SMART snapshots (no endurance figure)."""
        return [p for p, e in zip(self.paths, self.endurance, strict=True) if e.is_empty()]


def _side_by_side(
    key: str, keys: Iterable[str], labels: list[str], values: list[dict[str, float | None]]
) -> pl.DataFrame:
    """``key`` (``keys``) and a Float64 column per label of each run's ``values`` by key."""
    keys = list(keys)
    columns = {key: pl.Series(keys, dtype=pl.String)}
    for label, by_key in zip(labels, values, strict=True):
        columns[label] = pl.Series([by_key.get(k) for k in keys], dtype=pl.Float64)
    return pl.DataFrame(columns)


def _column_labels(dirs: list[Path], names: list[str]) -> list[str]:
    """Run labels as distinct column names: the directory's name added where two are the
    same (or one is ``item`` or ``step``), then the run's position where that is not enough."""
    labels: list[str] = []
    for n, (d, name) in enumerate(zip(dirs, names, strict=True), 1):
        label = f"{name} ({d.name})" if names.count(name) > 1 or name in ("item", "step") else name
        labels.append(f"{label} [{n}]" if label in labels else label)
    return labels


def compare_endurance(results_dirs: list[Path]) -> EnduranceComparison:
    """:class:`EnduranceComparison` of the runs in ``results_dirs``, as ``ssdlab endurance
    compare`` shows them (each directory may hold its drive's rating as drive.toml)."""
    from ..results import load_frames
    from ..telemetry.frames import ENDURANCE_ITEMS

    runs = [load_frames(d, ["endurance", "waf"]) for d in results_dirs]
    labels = _column_labels(results_dirs, [Manifest.load(d).label for d in results_dirs])
    endurance = [r["endurance"] for r in runs]
    wafs = [r["waf"] for r in runs]
    values = [dict(zip(e["item"], e["value"], strict=True)) for e in endurance]
    items = {
        f"{i} ({unit})": i for i, unit in ENDURANCE_ITEMS.items() if any(i in v for v in values)
    }
    steps = list(dict.fromkeys(s for w in wafs for s in w["step"]))
    return EnduranceComparison(
        list(results_dirs),
        labels,
        endurance,
        wafs,
        _side_by_side(
            "item", items, labels, [{k: v.get(i) for k, i in items.items()} for v in values]
        ),
        _side_by_side(
            "step", steps, labels, [dict(zip(w["step"], w["waf"], strict=True)) for w in wafs]
        ),
    )
