"""What the command line used to decide itself, now in the library for Python users: ACT's
trial defaults and settings, and which options each power format's reader takes."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from ssdlab.act import ActConfig, TrialTiming, fio_settings
from ssdlab.errors import InputError, SuiteError
from ssdlab.telemetry.attach import ReaderOptions, reader_options
from ssdlab.telemetry.power import POWER_FORMATS


def test_trial_timing_defaults_are_acts() -> None:
    config = ActConfig()
    assert TrialTiming.of(config) == TrialTiming(86400, 3600, 10_000)
    assert TrialTiming.of(config, duration_s=2) == TrialTiming(2, 2, 500)
    assert TrialTiming.of(config, duration_s=60, slice_s=8, hist_msec=250) == TrialTiming(
        60, 8, 250
    )
    short = ActConfig.from_settings({"test-duration-sec": "1800"})
    assert TrialTiming.of(short) == TrialTiming(1800, 1800, 10_000)


def test_config_from_settings_as_act_writes_them() -> None:
    config = ActConfig.from_settings({"record-bytes": "1500", "device-names": "/dev/a /dev/b"})
    assert (config.record_bytes, config.num_devices) == (1500, 2)
    with pytest.raises(ValidationError):
        ActConfig.from_settings({"record-bytes": "many"})


def test_fio_settings_resolve_the_machine_and_default_the_lag() -> None:
    config = ActConfig.from_settings({"max-lag-sec": "7"})
    settings = fio_settings(config, TrialTiming.of(config, duration_s=10))
    assert settings.config["service-threads"] == 5 * (os.cpu_count() or 1)
    assert (settings.max_lag_s, settings.hist_msec, settings.ioengine) == (7, 2500, "psync")
    assert fio_settings(config, TrialTiming.of(config), max_lag_s=0.5).max_lag_s == 0.5
    with pytest.raises(SuiteError):
        fio_settings(config, TrialTiming.of(config), options={"exec_prerun": "x"})


def test_reader_options_are_explicit_per_format() -> None:
    assert all(POWER_FORMATS.format(n).options or n == "yokotool" for n in POWER_FORMATS)
    assert reader_options("csv", ReaderOptions(columns={"time": "t"}, tz=None)) == {
        "columns": {"time": "t"}
    }
    with pytest.raises(InputError, match="power format 'csv' needs columns"):
        reader_options("csv", ReaderOptions())
    with pytest.raises(InputError, match="power format 'yokotool' takes no --tz"):
        reader_options("yokotool", ReaderOptions(tz="UTC"), {"tz": "--tz"})
    assert reader_options("quarch", ReaderOptions(start_epoch_s=1.5)) == {"start_epoch_s": 1.5}
