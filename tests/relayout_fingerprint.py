"""What users get, as canonical text per item, to prove the issue-26 re-layout changes nothing.

:func:`capture` takes, in-process and with no kernel, for every run of :func:`_runs` (the
:data:`golden.SOURCES`, the demo run again as a second drive's, ``fixtures/import24/pbench``
imported and the ACT sample log imported with 10 s slices; all under a work directory, so
that no path depends on where the repository is):

- ``frames/<run>/<frame>``: every frame ``ssdlab.load`` offers (:func:`golden._frames`), as
  schema plus rows;
- ``review/<run>/<section>``: every drive-review section (and the QoS section judged against
  each built-in profile): findings, missing, key, and per part a chart's Vega-Lite spec or a
  table's HTML;
- ``compare/<comparison>/<section or figure>``: each comparison of :data:`COMPARISONS`, its
  sections and its scores, measurements, exclusions, parameters and differences.

:func:`rendered` takes ``report/quick-demo``: ``ssdlab report`` of the demo run (QoS profile
``hyperscale``), its text without tags and every embedded chart spec (slow: a kernel runs).

Volatile parts are masked: the work directory and an import's run id (its times are set to
:data:`IMPORTED`); altair's process-global counters (``param_N``, ``view_N``, ``selectorN``)
and its dataset names are renumbered per item in order of appearance.
``tests/test_relayout_identical.py`` compares the sha256 of each item with
``tests/fixtures/relayout/fingerprints.json``; the text depends on polars, altair and
vl-convert-python, whose versions the recording names.

Re-record (on the tree before the move only: the point is that the move changes nothing)::

    .venv/bin/python tests/relayout_fingerprint.py --record

It also writes the full text to ``tests/artifacts/relayout/recorded.json``, which a failing
test's ``current.json`` beside it can be diffed with.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
from conftest import ssdlab_cli
from golden import ROOT, SOURCES, _frames

import ssdlab
from ssdlab.act.imports import import_act_log
from ssdlab.analysis import DriveAnalysis
from ssdlab.importer import import_results
from ssdlab.qos.profile import builtin_profiles
from ssdlab.review.compare import SECTIONS as COMPARISON_SECTIONS
from ssdlab.review.compare import load_comparison
from ssdlab.review.drive import SECTIONS as REVIEW_SECTIONS
from ssdlab.review.drive import qos_targets_section
from ssdlab.review.qos import QosReview

FIXTURES = ROOT / "tests" / "fixtures"
RECORDING = FIXTURES / "relayout" / "fingerprints.json"
ARTIFACTS = ROOT / "tests" / "artifacts" / "relayout"
PBENCH = FIXTURES / "import24" / "pbench"
ACT_LOG = FIXTURES / "act" / "act_storage_1x_30s.log"
#: the packages whose serialisation the canonical text depends on
PINNED = ("polars", "altair", "vl-convert-python")
#: altair's process-global names, renumbered per item in order of appearance
COUNTERS = re.compile(r"\b(param_|view_|selector)\d+(?!\d)|\bdata-[0-9a-f]{32}\b")
#: comparison -> (runs, like for like?): between them, every comparison section the runs
#: have data for (the corpora have no consistency run and no load sweep)
COMPARISONS = {
    "demo-rounds-pbench": (("quick-demo", "rounds", "pbench"), True),
    "demo-twice": (("quick-demo", "quick-demo"), True),  # the notebook's default
    "demo-second": (("quick-demo", "demo-second"), True),  # like for like, two drives
    "act-telemetry": (("act", "act-log", "telemetry"), True),
    "demo-fio-tree-unlike": (("quick-demo", "fio-tree"), False),
}
#: the time every import is given (when it was made, which its review shows)
IMPORTED = "2001-02-03T04:05:06Z"
#: what a copy of a run leaves out: the catalog a local ``ssdlab catalog`` may have left
UNTRACKED = shutil.ignore_patterns(".ssdlab-catalog")
#: the rendered item: one review, judged against a QoS profile
REPORT = "report/quick-demo"
#: what a rendered report's text leaves out: scripts, styles and the static chart images
UNSHOWN = re.compile(r"<script.*?</script>|<style.*?</style>|<img[^>]*>", re.S)
SPEC = re.compile(r'<script class="ssdlab-spec" type="application/json">(.*?)</script>', re.S)


def versions() -> dict[str, str]:
    """The installed versions of :data:`PINNED`."""
    return {name: version(name) for name in PINNED}


def _runs(work: Path) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """Every run captured, by name, each under ``work`` (the golden sources copied or
    imported from a copy, the demo run again as another drive's, the pbench tree imported,
    the ACT sample imported as a trial), and the (text, mask) pairs of what differs between
    captures: ``work`` and the run id of each import (whose times are set to :data:`IMPORTED`)."""
    runs = {}
    for name, (path, imported) in {**SOURCES, "pbench": (PBENCH, True)}.items():
        copy = shutil.copytree(path, work / "sources" / name, ignore=UNTRACKED)
        runs[name] = work / name if imported else copy
        if imported:
            import_results([copy], runs[name], label=f"{name} import")
    runs["demo-second"] = shutil.copytree(runs["quick-demo"], work / "demo-second")
    manifest = json.loads((runs["demo-second"] / "manifest.json").read_text())
    manifest |= {"run_id": f"{manifest['run_id']}-2", "label": "demo VM: a second drive"}
    (runs["demo-second"] / "manifest.json").write_text(json.dumps(manifest))
    log = shutil.copy(ACT_LOG, work / "sources")
    runs["act-log"] = work / "act-log"
    import_act_log(Path(log), runs["act-log"], slice_s=10)
    masks = [(str(work), "<work>")]
    for run in runs.values():
        manifest = json.loads((run / "manifest.json").read_text())
        if manifest["source"] == "import":
            masks.append((manifest["run_id"], "<run-id>"))
            times = {key: IMPORTED for key in ("created", "started", "ended") if manifest.get(key)}
            (run / "manifest.json").write_text(json.dumps(manifest | times))
    return runs, masks


def _frame(frame: pl.DataFrame) -> dict[str, Any]:
    return {
        "schema": {name: str(dtype) for name, dtype in frame.schema.items()},
        "rows": json.loads(frame.write_json()),
    }


def _part(part: Any) -> dict[str, Any]:
    """A section part: a chart's spec or a table's HTML."""
    if isinstance(part, alt.TopLevelMixin):
        return {"chart": part.to_dict()}
    return {"html": part._repr_html_()}


def _section(section: Any) -> dict[str, Any]:
    return {
        "findings": section.findings,
        "missing": section.missing,
        "key": section.key,
        "parts": [_part(p) for p in section.parts],
    }


def _taken(runs: dict[str, Path]) -> dict[str, Any]:
    """Every in-process item, by name, as plain data."""
    taken: dict[str, Any] = {}
    for name, path in runs.items():
        results = ssdlab.load(path)
        for frame, df in _frames(results).items():
            taken[f"frames/{name}/{frame}"] = _frame(df)
        analysis = DriveAnalysis(results)
        for section, build in zip(REVIEW_SECTIONS.names, REVIEW_SECTIONS, strict=True):
            taken[f"review/{name}/{section}"] = _section(build(analysis))
        for profile in builtin_profiles():
            qos = qos_targets_section(QosReview(analysis, profile))
            taken[f"review/{name}/qos_targets_section[{profile}]"] = _section(qos)
    for name, (compared, like_for_like) in COMPARISONS.items():
        cmp = load_comparison([runs[r] for r in compared], like_for_like=like_for_like)
        for section, build in zip(COMPARISON_SECTIONS.names, COMPARISON_SECTIONS, strict=True):
            taken[f"compare/{name}/{section}"] = _section(build(cmp))
        for figure in ("scores", "measurements", "excluded", "parameters"):
            taken[f"compare/{name}/{figure}"] = _frame(getattr(cmp.analysis, figure))
        taken[f"compare/{name}/differences"] = [d.as_dict() for d in cmp.analysis.differences]
    return taken


def _canonical(taken: Any, masks: list[tuple[str, str]]) -> str:
    """``taken`` as JSON: masked, altair's counters renumbered, then keys sorted."""
    text = json.dumps(taken, ensure_ascii=False, default=str)
    for volatile, mask in masks:
        text = text.replace(volatile, mask)
    seen: dict[str, str] = {}

    def renumber(match: re.Match[str]) -> str:
        kind = match.group(1) or "data-"
        if match.group(0) not in seen:
            seen[match.group(0)] = f"{kind}{sum(n.startswith(kind) for n in seen.values())}"
        return seen[match.group(0)]

    text = COUNTERS.sub(renumber, text)
    return json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True, indent=1)


def capture(work: Path) -> dict[str, str]:
    """Canonical text of every in-process item, by item name; runs are made under ``work``."""
    runs, masks = _runs(work)
    return {item: _canonical(taken, masks) for item, taken in _taken(runs).items()}


def rendered(work: Path) -> dict[str, str]:
    """Canonical text of :data:`REPORT`: the demo review rendered by ``ssdlab report``."""
    run = shutil.copytree(SOURCES["quick-demo"][0], work / "quick-demo", ignore=UNTRACKED)
    out = work / "review.html"
    proc = ssdlab_cli("report", run, "--qos", "hyperscale", "--output", out)
    if proc.returncode:
        raise RuntimeError(f"ssdlab report failed: {proc.stderr}")
    page = out.read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", UNSHOWN.sub(" ", page))).split())
    specs = [json.loads(spec) for spec in SPEC.findall(page)]
    return {REPORT: _canonical({"text": text, "charts": specs}, [(str(work), "<work>")])}


def fingerprints(captured: dict[str, str]) -> dict[str, str]:
    """The sha256 of each item."""
    return {item: hashlib.sha256(text.encode()).hexdigest() for item, text in captured.items()}


def write_artifact(name: str, captured: dict[str, str]) -> Path:
    """Write the full text to ``tests/artifacts/relayout/<name>.json``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.json"
    path.write_text(json.dumps(captured, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    return path


def record() -> None:
    """Capture the current tree and write :data:`RECORDING` and the recorded artifact."""
    with tempfile.TemporaryDirectory() as tmp:
        captured = capture(Path(tmp) / "capture") | rendered(Path(tmp) / "render")
    RECORDING.parent.mkdir(parents=True, exist_ok=True)
    recording = {"versions": versions(), "items": fingerprints(captured)}
    RECORDING.write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n")
    text = write_artifact("recorded", captured)
    print(f"recorded {len(captured)} items in {RECORDING}, their text in {text}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help=f"write {RECORDING.name}")
    if not parser.parse_args().record:
        parser.print_help()
        sys.exit(2)
    record()
