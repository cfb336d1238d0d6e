"""A broken or clashing plug-in is one clear error naming it, its ``module:attribute`` and its
entry-point group: never a traceback, a silent replacement of ssdlab's own, a silently dead
sampling thread or a failure far from the cause. Plug-in packages are made on disk and loaded
by fresh interpreters, as in ``tests/test_registries.py``."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from conftest import plugin_package, python_with
from golden import CORPORA, ROOT

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.hooks import PowerHook
from ssdlab.telemetry.power import PeriodicSampler

FIXTURES = ROOT / "tests" / "fixtures"

PLUGIN = """
import polars as pl
from ssdlab.telemetry.power import CommandSampler

NUMBER = 42

def fan_frame(context):
    return pl.DataFrame({"step_index": [s.record.index for s in context.steps]})

def meter(argument, interval_s):
    return CommandSampler("echo 5", interval_s)

def int_factory(argument, interval_s):
    return 42

def old_factory(argument):  # written for an older factory signature
    return CommandSampler("echo 5")
"""


def _site(tmp_path: Path, packages: dict[str, str]) -> Path:
    """A directory of installed packages: ``module name -> entry_points.txt``, each module
    the code of :data:`PLUGIN`."""
    site = tmp_path / "site"
    for module, entry_points in packages.items():
        plugin_package(site, module, PLUGIN, entry_points)
    return site


#: ``python -c``: print as JSON what each call in CALLS (source text) gave: ``error: MESSAGE``
#: for an SsdlabError, else the repr of its value
OUTCOMES = """
import json, ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.formats import FORMATS
from ssdlab.results import FRAME_BUILDERS
from ssdlab.telemetry.power import POWER_SOURCES, power_sampler
outcomes = []
for call in {calls!r}:
    try:
        outcomes.append(repr(eval(call)))
    except SsdlabError as exc:
        outcomes.append(f"error: {{exc}}")
print(json.dumps(outcomes))
"""


def _outcomes(site: Path, *calls: str) -> list[str]:
    proc = python_with(site, OUTCOMES.format(calls=calls))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_name_of_ssdlab_or_of_another_package_is_refused_naming_both(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {
            "fan_a": "[ssdlab.power_sources]\ncommand = fan_a:meter\n\n"
            "[ssdlab.frames]\nfan = fan_a:fan_frame\n",
            "fan_b": "[ssdlab.frames]\nfan = fan_b:fan_frame\n",
        },
    )
    source, frame = _outcomes(site, "power_sampler('command:echo 1')", "list(FRAME_BUILDERS)")
    assert source == (
        "error: power source 'command' of package fan_a 1.0 (fan_a:meter), entry point group "
        "'ssdlab.power_sources', clashes with ssdlab itself "
        "(ssdlab.telemetry.power:command_source): rename or uninstall the plug-in"
    )
    assert frame.startswith("error: frame builder 'fan' of package fan_")
    assert "package fan_a 1.0 (fan_a:fan_frame)" in frame
    assert "package fan_b 1.0 (fan_b:fan_frame)" in frame
    assert "entry point group 'ssdlab.frames', clashes with" in frame


def test_a_power_source_of_the_wrong_type_or_signature_names_it(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {
            "meters": "[ssdlab.power_sources]\nnumber = meters:NUMBER\n"
            "old = meters:old_factory\nmeter = meters:meter\n"
        },
    )
    number, old, meter = _outcomes(
        site, "POWER_SOURCES['number']", "power_sampler('old')", "power_sampler('meter')"
    )
    assert number == (
        "error: power source 'number' (meters:NUMBER, entry point group 'ssdlab.power_sources') "
        "is int, not callable"
    )
    assert old.startswith(
        "error: power source 'old' (meters:old_factory, entry point group 'ssdlab.power_sources') "
        "failed: TypeError("
    )
    assert meter.startswith("<ssdlab.telemetry.power.sampler.CommandSampler")  # works


def test_a_factory_returning_the_wrong_object_fails_before_the_run(
    tmp_path: Path, tiny_suite: Path
) -> None:
    site = _site(tmp_path, {"meters": "[ssdlab.power_sources]\nbad = meters:int_factory\n"})
    out = tmp_path / "run"
    argv = ["run", str(tiny_suite), "--out", str(out), "--power", "bad:1", "--smart", "none"]
    proc = python_with(site, f"import sys; from ssdlab.cli import main; sys.exit(main({argv!r}))")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == (
        "error: power source 'bad' (meters:int_factory, entry point group "
        "'ssdlab.power_sources') returned int, not a ssdlab.telemetry.power.PeriodicSampler\n"
    )
    assert not out.exists()


class Unplugged(PeriodicSampler):
    """A plug-in's sampler whose meter is gone: every ``measure`` raises RuntimeError."""

    def __init__(self) -> None:
        super().__init__(interval_s=0.01)
        self.calls = 0
        self.third = threading.Event()

    def measure(self) -> tuple[float, float | None]:
        self.calls += 1
        if self.calls == 3:
            self.third.set()
        raise RuntimeError("usb meter unplugged")

    def describe(self) -> dict[str, object]:
        return {"source": "unplugged", **super().describe()}


def test_a_sampler_raising_any_exception_counts_errors_and_the_run_says_so(
    tmp_path: Path,
) -> None:
    sampler = Unplugged()
    hook = PowerHook(sampler)
    hook.open(tmp_path)  # waits for the first measurement: it failed, and sampling goes on
    assert sampler.third.wait(60), "the sampling thread died"
    with pytest.raises(SsdlabError) as raised:
        hook.close()
    trace = sampler.trace()
    assert trace.meta["errors"] == sampler.calls >= 3
    assert trace.meta["last_error"] == "RuntimeError('usb meter unplugged')"
    assert trace.frame.is_empty() and sampler._thread is not None
    assert not sampler._thread.is_alive()  # stopped, not dead: stop() joined it
    assert str(raised.value) == (
        f"power: {sampler.calls} failed readings from unplugged (0 samples kept), "
        "last: RuntimeError('usb meter unplugged')"
    )
    source = json.loads((tmp_path / "power" / "source.json").read_text())
    assert source["errors"] == sampler.calls and source["samples"] == 0


FORMAT_PLUGIN = """
from ssdlab.formats import Format

def read_fan(path):
    raise ValueError("fan firmware 9 not supported")

def sniff_badly(probe):
    return probe.no_such_attribute

def dict_frame(context):
    return {"step_index": [1]}

FAN = Format("fan", "power", read_fan, lambda probe: probe.head.startswith("FAN"))
BAD_SNIFF = Format("bad_sniff", "power", read_fan, sniff_badly)
QUARCH = Format("quarch", "power", read_fan)
"""


def _format_site(tmp_path: Path, entry_points: str) -> Path:
    site = _site(tmp_path, {"fans": entry_points})
    (site / "fans.py").write_text(FORMAT_PLUGIN)
    return site


def test_a_format_or_frame_of_the_wrong_type_or_name_names_it(tmp_path: Path) -> None:
    formats = _format_site(tmp_path / "f", "[ssdlab.formats]\nfan = fans:read_fan\n")
    renamed = _format_site(tmp_path / "r", "[ssdlab.formats]\nmy_quarch = fans:QUARCH\n")
    frames = _format_site(tmp_path / "b", "[ssdlab.frames]\nfan = fans:dict_frame\n")
    run = str(CORPORA / "telemetry")
    assert _outcomes(formats, "FORMATS.all()") == [
        "error: format 'fan' (fans:read_fan, entry point group 'ssdlab.formats') is function, "
        "not a Format"
    ]
    assert _outcomes(renamed, "FORMATS.all()") == [
        "error: format 'my_quarch' (fans:QUARCH, entry point group 'ssdlab.formats') is a format "
        "named 'quarch': name its entry point after it"
    ]
    assert _outcomes(frames, f"ssdlab.load({run!r})") == [
        f"error: {run}: frame builder 'fan' (fans:dict_frame, entry point group 'ssdlab.frames') "
        "returned dict, not a polars DataFrame"
    ]


def test_a_raising_reader_names_its_format_and_a_raising_sniff_breaks_no_other(
    tmp_path: Path,
) -> None:
    site = _format_site(tmp_path, "[ssdlab.formats]\nfan = fans:FAN\nbad_sniff = fans:BAD_SNIFF\n")
    fan = tmp_path / "fan.txt"
    fan.write_text("FAN rpm=1200\n")
    ipmitool = FIXTURES / "telemetry" / "power" / "ipmitool_new.txt"
    calls = f"FORMATS.read({str(fan)!r})", f"FORMATS.detect({str(ipmitool)!r}).name"
    proc = python_with(site, OUTCOMES.format(calls=calls))
    assert proc.returncode == 0, proc.stderr
    read, detected = json.loads(proc.stdout)
    assert read == (
        f"error: {fan}: power format 'fan' (fans:FAN, entry point group 'ssdlab.formats') failed: "
        "ValueError('fan firmware 9 not supported')"
    )
    assert detected == "'ipmitool_dcmi'"  # recognised all the same
    assert (
        "RuntimeWarning: power format 'bad_sniff' (fans:BAD_SNIFF, entry point group "
        "'ssdlab.formats'): sniff failed: AttributeError(" in proc.stderr
    )
