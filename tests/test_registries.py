"""The plug-in registries: one format registry that recognises fio, ACT, SMART and power files
by content, and frame builders and formats that installed packages add through entry points
(a package made here on disk, loaded by a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import plugin_package, python_with
from golden import CORPORA, ROOT

from ssdlab.errors import InputError
from ssdlab.formats import FORMATS, Format, detect

FIXTURES = ROOT / "tests" / "fixtures"
TREE = CORPORA / "fio-tree"


@pytest.mark.parametrize(
    ("path", "kind", "name"),
    [
        (FIXTURES / "fio" / "fio-2.2.10.json", "fio", "fio_json"),
        (TREE / "variants" / "stream.json", "fio", "fio_json"),
        (TREE / "drive-a" / "randread-iodepth-1-numjobs-1_clat.1.log", "fio", "fio_log"),
        (TREE / "variants" / "h_clat_hist.1.log", "fio", "fio_hist_log"),
        (FIXTURES / "act" / "act_storage_1x_30s.log", "ACT", "act_log"),
        (FIXTURES / "telemetry" / "smart" / "smartctl_nvme.json", "SMART", "smartctl"),
        (FIXTURES / "telemetry" / "smart" / "nvme_ocp_v2.json", "SMART", "nvme_ocp_smart_add_log"),
        (FIXTURES / "telemetry" / "power" / "ipmitool_new.txt", "power", "ipmitool_dcmi"),
    ],
)
def test_one_registry_recognises_every_kind_by_content(path: Path, kind: str, name: str) -> None:
    fmt = detect(path)
    assert (fmt.kind, fmt.name) == (kind, name)
    assert detect(path, kind) == fmt
    assert fmt.read(path) is not None


def test_unknown_content_names_the_file_and_a_later_format_wins(tmp_path: Path) -> None:
    path = tmp_path / "fan.txt"
    path.write_text("FAN rpm=1200\n")
    with pytest.raises(InputError, match=r"fan.txt: not a recognised file of a known format"):
        detect(path)
    fmt = Format("fan", "fan", lambda p: Path(p).read_text(), lambda p: p.head.startswith("FAN"))
    FORMATS.register(fmt)
    try:
        assert detect(path) == fmt and FORMATS.read(path) == "FAN rpm=1200\n"
        with pytest.raises(ValueError, match="already registered"):
            FORMATS.register(fmt)
    finally:
        FORMATS.unregister("fan", "fan")


PLUGIN = """
import polars as pl
from ssdlab.formats import Format

def fan_frame(context):
    return pl.DataFrame({"step_index": [s.record.index for s in context.steps]})

def old_builder(results_dir, manifest):  # written for ssdlab before RunContext
    return pl.DataFrame()

def read_fan(path):
    return open(path).read()

FAN = Format("fan", "fan", read_fan, lambda probe: probe.head.startswith("FAN"))
"""


def _package(tmp_path: Path, entry_points: str) -> Path:
    return plugin_package(tmp_path / "site", "ssdlab_fan", PLUGIN, entry_points, "ssdlab-fan")


def test_a_package_adds_a_frame_builder_and_a_format_through_entry_points(tmp_path: Path) -> None:
    site = _package(
        tmp_path,
        "[ssdlab.frames]\nfan = ssdlab_fan:fan_frame\n\n[ssdlab.formats]\nfan = ssdlab_fan:FAN\n",
    )
    (tmp_path / "fan.txt").write_text("FAN rpm=1200\n")
    code = (
        "import json, ssdlab; from ssdlab.formats import detect\n"
        f"r = ssdlab.load({str(CORPORA / 'telemetry')!r})\n"
        "steps = r.summary['step_index'].unique().to_list()\n"
        f"name = detect({str(tmp_path / 'fan.txt')!r}).name\n"
        "print(json.dumps([r.fan['step_index'].to_list(), steps, name]))"
    )
    proc = python_with(site, code)
    assert proc.returncode == 0, proc.stderr
    fan, steps, name = json.loads(proc.stdout)
    assert fan == steps == [1, 2] and name == "fan"


def test_a_broken_plugin_is_an_error_naming_it(tmp_path: Path) -> None:
    site = _package(tmp_path, "[ssdlab.frames]\nfan = ssdlab_fan:no_such_builder\n")
    proc = python_with(site, f"import ssdlab; ssdlab.load({str(CORPORA / 'telemetry')!r})")
    assert proc.returncode != 0
    assert (
        "frame builder 'fan' (ssdlab_fan:no_such_builder, entry point group 'ssdlab.frames')"
        in (proc.stderr)
    )


def test_a_plugin_for_another_version_is_one_line_naming_it(tmp_path: Path) -> None:
    site = _package(tmp_path, "[ssdlab.frames]\nold = ssdlab_fan:old_builder\n")
    run = str(CORPORA / "telemetry")
    code = f"import sys; from ssdlab.cli import main; sys.exit(main(['summary', {run!r}]))"
    proc = python_with(site, code)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert (
        "frame builder 'old' (ssdlab_fan:old_builder, entry point group 'ssdlab.frames') "
        "failed: TypeError(" in proc.stderr
    )


def test_lazy_public_names_stay_what_they_are() -> None:
    """``ssdlab.catalog`` is a function on every use, though a submodule has its name."""
    code = (
        "import ssdlab\n"
        "kinds = [type(ssdlab.catalog).__name__ for _ in range(2)]\n"
        "print(kinds, callable(ssdlab.load), 'catalog' in dir(ssdlab), ssdlab.__version__ > '')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "['function', 'function'] True True True", proc.stderr
