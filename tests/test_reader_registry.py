"""The one format registry on the import path: a plug-in's fio format reaches ``ssdlab import``
(ssdlab's own are recognised from the bytes read, without a probe per file), a result read
whole gives back its frames as rows, asking for one kind of format imports no other, and a
plug-in's power format is given the reader options it names."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from golden import CORPORA, ROOT
from polars.testing import assert_frame_equal

import ssdlab
from ssdlab.errors import InputError
from ssdlab.formats import FORMATS, Format
from ssdlab.importer import import_results
from ssdlab.io.fio_formats import fio_rows
from ssdlab.io.fio_json import FioJson, fio_frames, parse_fio_json, read_fio_json
from ssdlab.manifest import Manifest
from ssdlab.telemetry.attach import ReaderOptions, attach_power
from ssdlab.telemetry.power import POWER_FORMATS, PowerTrace
from ssdlab.telemetry.power.generic import read_power_csv

DRIVE = CORPORA / "fio-tree" / "drive-a"
VARIANTS = CORPORA / "fio-tree" / "variants"
FRAMES = ("jobs", "percentiles", "bins", "aggregate", "snapshots", "steadystate")


def read_gzipped(path: str | Path) -> FioJson:
    """A plug-in's reader: fio JSON kept gzipped."""
    return fio_frames([parse_fio_json(gzip.decompress(Path(path).read_bytes()), Path(path))])


GZIPPED = Format("fio_json_gz", "fio", read_gzipped, lambda probe: probe.raw[:2] == b"\x1f\x8b")
NOT_A_RESULT = Format("fan", "fio", lambda path: "FAN", lambda probe: probe.head.startswith("FAN"))


@pytest.fixture
def gzipped(tmp_path: Path) -> Path:
    """The corpus's drive with every JSON result gzipped beside its logs, and a fan log."""
    tree = tmp_path / "drive-a"
    shutil.copytree(DRIVE, tree)
    for result in tree.glob("*.json"):
        result.with_name(f"{result.name}.gz").write_bytes(gzip.compress(result.read_bytes()))
        result.unlink()
    (tree / "fan.txt").write_text("FAN rpm=1200\n")
    return tree


def test_a_plugin_fio_format_reaches_import(gzipped: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no fio JSON result found"):
        import_results([gzipped], tmp_path / "without")
    FORMATS.register(GZIPPED)
    FORMATS.register(NOT_A_RESULT)
    try:
        report = import_results([gzipped], tmp_path / "with")
    finally:
        FORMATS.unregister("fio", GZIPPED.name)
        FORMATS.unregister("fio", NOT_A_RESULT.name)
    plain = import_results([DRIVE], tmp_path / "plain")
    assert (report.results, report.logs) == (plain.results, plain.logs) == (3, 30)
    assert [str(s) for s in report.skipped] == [
        f"{gzipped / 'fan.txt'}: fio format 'fan' reads a str, not a fio result (FioJson): "
        "ssdlab import takes results of plug-in fio formats"
    ]
    broken = [  # a plug-in's bug is a skipped file naming the format, never a traceback
        GZIPPED,
        Format("bad_read", "fio", lambda path: {}["boom"], lambda probe: b"FAN" in probe.raw),
        Format("bad_sniff", "fio", read_gzipped, lambda probe: {}["boom"]),
    ]
    for fmt in broken:
        FORMATS.register(fmt)
    try:
        with pytest.warns(RuntimeWarning, match="'bad_sniff'.*sniff failed: KeyError"):
            failed = import_results([gzipped], tmp_path / "broken")
    finally:
        for fmt in broken:
            FORMATS.unregister("fio", fmt.name)
    assert failed.results == 3 and [s.path.name for s in failed.skipped] == ["fan.txt"]
    assert "fio format 'bad_read'" in str(failed.skipped[0])
    assert "failed: KeyError('boom')" in str(failed.skipped[0])
    got, want = ssdlab.load(tmp_path / "with"), ssdlab.load(tmp_path / "plain")
    assert got.summary["step"].to_list() == [f"{s}.json" for s in want.summary["step"]]
    for name in ("summary", "percentiles", "latency_hist", "timeseries", "latency_intervals"):
        named = ["step", "fio_json", "run_id", "label"]  # the import's, and the result's file
        assert_frame_equal(
            getattr(got, name).drop(named, strict=False),
            getattr(want, name).drop(named, strict=False),
        )


@pytest.mark.parametrize(
    "path",
    [
        ROOT / "tests" / "fixtures" / "fio" / "fio-2.19-jsonplus.json",
        VARIANTS / "stream.json",
        VARIANTS / "clones.json",
    ],
)
def test_a_result_read_whole_gives_back_its_frames_as_rows(path: Path) -> None:
    fio = read_fio_json(path)
    again = fio_frames([fio_rows(fio)])
    for name in FRAMES:
        assert_frame_equal(getattr(again, name), getattr(fio, name))
    assert again.meta == fio.meta
    assert not fio.bins.is_empty() or not fio.snapshots.is_empty()


def test_asking_for_one_kind_imports_no_other() -> None:
    code = (
        "import sys; from ssdlab.formats import FORMATS\n"
        "names = [f.name for f in FORMATS.all('fio')]\n"
        "print(names, sorted(m for m in sys.modules if m.startswith(('ssdlab.telemetry', "
        "'ssdlab.act'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "['fio_json', 'fio_log', 'fio_hist_log'] []", proc.stderr


def read_watts(path: str | Path, *, start_epoch_s: float = 0.0) -> PowerTrace:
    """A plug-in's power meter: ``t,w`` seconds from its start and watts."""
    return read_power_csv(path, {"time": "t", "power": "w"}, start_epoch_s=start_epoch_s)


WATTS = Format(
    "watts",
    "power",
    read_watts,
    lambda probe: probe.head.startswith("t,w\n"),
    options=("start_epoch_s",),
    needs=("start_epoch_s",),
)


def test_a_plugin_power_format_takes_the_options_it_names(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(CORPORA / "telemetry", run)
    trace = tmp_path / "meter.csv"  # 10 s at 2 Hz from 1 s before the first step
    trace.write_text("t,w\n" + "".join(f"{n / 2},{5 + n % 2}\n" for n in range(21)))
    start = Manifest.load(run).steps[0].started
    assert start is not None
    epoch = start.timestamp() - 1
    names = {"start_epoch_s": "--start-epoch", "tz": "--tz"}

    def attach(**options: Any) -> PowerTrace:
        given = ReaderOptions(**options)
        return attach_power(run, trace, options=given, replace=True, option_names=names)

    POWER_FORMATS.register(WATTS.name, WATTS.read, WATTS.sniff)  # a Format without options
    try:
        with pytest.raises(InputError, match="power format 'watts' takes no --start-epoch"):
            attach(start_epoch_s=1e9)
    finally:
        POWER_FORMATS.unregister(WATTS.name)
    FORMATS.register(WATTS)
    try:
        with pytest.raises(InputError, match="power format 'watts' needs --start-epoch"):
            attach()
        with pytest.raises(InputError, match="power format 'watts' takes no --tz"):
            attach(start_epoch_s=epoch, tz="UTC")
        attached = attach(start_epoch_s=epoch)
    finally:
        FORMATS.unregister("power", WATTS.name)
    assert attached.frame["time_s"].to_list() == [epoch + n / 2 for n in range(21)]
    assert attached.frame["power_w"].to_list() == [5.0 + n % 2 for n in range(21)]
    as_tuple = Format(
        "watts", "power", lambda path: (read_watts(path, start_epoch_s=1e9).frame, {}), WATTS.sniff
    )
    FORMATS.register(as_tuple)
    try:
        with pytest.raises(InputError, match=r"'watts'.*returned tuple, not a PowerTrace"):
            attach()
    finally:
        FORMATS.unregister("power", as_tuple.name)
