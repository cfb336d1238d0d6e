"""Power readers, the power registry, per-step alignment, efficiency and live samplers."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from ssdlab.errors import InputError
from ssdlab.telemetry.power import (
    POWER_FORMATS,
    POWER_SOURCES,
    CommandSampler,
    IpmitoolSampler,
    PowerTrace,
    RaplSampler,
    detect_power,
    efficiency,
    parse_instantaneous,
    power_sampler,
    read_ipmitool_dcmi,
    read_power,
    read_power_csv,
    read_quarch_csv,
    read_yokotool_csv,
    step_power,
)
from ssdlab.telemetry.power import sampler as sampler_module

POWER = Path(__file__).parent / "fixtures" / "telemetry" / "power"
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def test_quarch_channels_from_header_and_total_power() -> None:
    trace = read_quarch_csv(POWER / "quarch_stream.csv")
    frame = trace.frame
    assert trace.meta["channels"] == ["12V", "3.3V"]
    assert trace.meta["start_epoch_s"] == T0  # from the "Start time:" line
    assert frame["time_s"].to_list() == [T0, T0 + 0.25, T0 + 0.5, T0 + 0.75, T0 + 1.0]
    # Tot uW 6330000 -> 6.33 W, 7530000 -> 7.53 W, ...
    assert frame["power_w"].to_list() == pytest.approx([6.33, 7.53, 8.73, 6.33, 6.33])
    # 12000 mV, 600000 uA, 7200000 uW on the 12 V rail at 0.25 s
    assert frame.row(1, named=True)["12v_voltage_v"] == pytest.approx(12.0)
    assert frame.row(1, named=True)["12v_current_a"] == pytest.approx(0.6)
    assert frame.row(1, named=True)["12v_power_w"] == pytest.approx(7.2)
    assert frame["3_3v_power_w"].to_list() == pytest.approx([0.33] * 5)
    assert frame.columns[:2] == ["time_s", "power_w"]


def test_quarch_single_channel_needs_a_start_and_computes_v_times_i() -> None:
    path = POWER / "quarch_single_channel.csv"
    with pytest.raises(InputError, match="pass start_epoch_s"):
        read_quarch_csv(path)
    frame = read_quarch_csv(path, start_epoch_s=T0 + 100).frame
    assert frame.columns == ["time_s", "power_w", "voltage_v", "current_a"]
    assert frame["time_s"].to_list() == [T0 + 100, T0 + 100.5, T0 + 101]
    # 5000 mV x 1000000 uA = 5 W; x 1.2 A = 6 W; x 0.8 A = 4 W
    assert frame["power_w"].to_list() == pytest.approx([5.0, 6.0, 4.0])
    assert frame["voltage_v"].to_list() == pytest.approx([5.0] * 3)


def test_quarch_start_argument_overrides_file_and_iso_start_is_read() -> None:
    assert read_quarch_csv(POWER / "quarch_stream.csv", start_epoch_s=10.0).frame["time_s"][
        0
    ] == pytest.approx(10.0)
    iso = read_quarch_csv(POWER / "quarch_iso_start.csv")
    assert iso.frame["time_s"].to_list() == [T0, T0 + 1]  # "Time ms" column, ISO start
    assert iso.frame["power_w"].to_list() == pytest.approx([6.0, 7.0])


def test_quarch_without_total_sums_channel_power(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("Time us,12V uW,5V mV,5V uA\n0,6000000,5000,200000\n")
    # 6 W + 5 V x 0.2 A = 7 W
    assert read_quarch_csv(path, start_epoch_s=T0).frame["power_w"].to_list() == pytest.approx(
        [7.0]
    )


def test_quarch_quantity_words_in_column_names(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(
        "Time us,12V Voltage mV,12V Current uA,12V Power uW,5V Voltage mV,5V Current uA,"
        "5V Power uW,Tot Power uW\n0,12000,500000,6000000,5000,200000,1000000,7000000\n"
    )
    trace = read_quarch_csv(path, start_epoch_s=T0)
    assert trace.meta["channels"] == ["12V", "5V"]
    row = trace.frame.row(0, named=True)
    assert row["power_w"] == pytest.approx(7.0)  # Tot Power uW
    assert (row["5v_voltage_v"], row["5v_current_a"]) == pytest.approx((5.0, 0.2))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Time us,12V degC\n0,30\n", r"column '12V degC' is not '<channel> <unit>'"),
        ("Time us,12V mV\n0,12000\n", r"channel\(s\) 12V have neither power"),
        ("Start time: yesterday\nTime us,Tot uW\n0,1\n", r"neither epoch seconds nor ISO"),
        ("Start time: 2023-11-14T22:13:20\nTime us,Tot uW\n0,1\n", r"has no UTC offset"),
        ("Time us,Tot uW\n0,1\n1,xyz\n", r"non-numeric value"),
        ("no header here\n", r"no Quarch header"),
    ],
)
def test_quarch_malformed(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "q.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_quarch_csv(path, start_epoch_s=0)


def test_yokotool_csv() -> None:
    trace = read_yokotool_csv(POWER / "yokotool.csv")
    assert trace.frame.columns == ["time_s", "power_w", "voltage_v", "current_a"]
    assert trace.frame.height == 21
    assert trace.frame["time_s"][0] == T0
    assert trace.frame["power_w"][:4].to_list() == [9.0, 11.0, 9.0, 11.0]
    assert trace.meta["samples"] == 21


@pytest.mark.parametrize(
    ("reader", "name", "message"),
    [
        (read_yokotool_csv, "yokotool_missing_power.csv", r"missing column\(s\) 'P' \(found 'T'"),
        (read_yokotool_csv, "empty.csv", r"empty file"),
        (read_quarch_csv, "empty.csv", r"no Quarch header"),
    ],
)
def test_csv_with_missing_columns_or_empty(reader, name: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        reader(POWER / name)
    assert str(POWER / name) in str(info.value)


def test_generic_csv_with_mapping_and_units() -> None:
    trace = read_power_csv(
        POWER / "generic.csv",
        {"time": "timestamp_ms", "power": "milliwatts"},
        units={"time": "ms", "power": "mW"},
        start_epoch_s=T0,
    )
    assert trace.frame.columns == ["time_s", "power_w"]
    assert trace.frame["time_s"].to_list() == [T0, T0 + 0.5, T0 + 1.0]
    assert trace.frame["power_w"].to_list() == pytest.approx([6.0, 6.6, 5.4])
    by_vi = read_power(
        POWER / "generic.csv",
        "csv",
        columns={"time": "timestamp_ms", "voltage": "volts", "current": "amps"},
        units={"time": "ms"},
    )
    # 12 V x 0.5 A, 12 V x 0.55 A, 12 V x 0.45 A
    assert by_vi.frame["power_w"].to_list() == pytest.approx([6.0, 6.6, 5.4])
    assert by_vi.frame["time_s"].to_list() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize(
    ("columns", "units", "name", "message"),
    [
        ({"time": "timestamp_ms", "power": "watts"}, None, "generic.csv", r"missing column"),
        ({"power": "milliwatts"}, None, "generic.csv", r"columns needs 'time'"),
        ({"time": "timestamp_ms", "power": "milliwatts", "temp": "t"}, None, "generic.csv", "temp"),
        ({"time": "timestamp_ms", "voltage": "volts"}, None, "generic.csv", r"'power', or"),
        ({"time": "timestamp_ms", "power": "milliwatts"}, {"power": "mA"}, "generic.csv", "mA"),
        ({"time": "timestamp_ms", "power": "milliwatts"}, None, "generic_bad_value.csv", "non-num"),
    ],
)
def test_generic_csv_errors(columns, units, name: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_power_csv(POWER / name, columns, units=units)


def test_ipmitool_old_layout_with_capture_epochs() -> None:
    trace = read_ipmitool_dcmi(POWER / "ipmitool_old.txt", tz="UTC")
    # readings: 220 @T0, 0 W and 65535 W dropped, 230 @T0+3, 240 stamped
    # "Wed Nov 15 00:00:00 2023" UTC = T0 + 6400 s, 250 with an unset 1970 BMC clock dropped
    assert trace.frame["power_w"].to_list() == [220.0, 230.0, 240.0]
    assert trace.frame["time_s"].to_list() == [T0, T0 + 3, T0 + 6400]
    assert trace.meta["readings"] == 6
    assert trace.meta["dropped_invalid"] == 2
    assert trace.meta["dropped_no_time"] == 1
    assert trace.meta["sampling_period_s"] == [1.0]


def test_ipmitool_new_layout_with_fields_sharing_a_line() -> None:
    trace = read_ipmitool_dcmi(POWER / "ipmitool_new.txt", tz="Europe/Berlin")
    # 22:13:20 UTC, 22:13:21 UTC, and 23:13:22 CET (Berlin, UTC+1 in November) = 22:13:22 UTC
    assert trace.frame["time_s"].to_list() == [T0, T0 + 1, T0 + 2]
    assert trace.frame["power_w"].to_list() == [109.0, 111.0, 113.0]
    assert trace.meta["sampling_period_s"] == [5.0]  # read from the shared line


def test_ipmitool_errors(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("Power reading state is: deactivated\n")
    with pytest.raises(InputError, match="no 'Instantaneous power reading'"):
        read_ipmitool_dcmi(path)
    with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'"):
        read_ipmitool_dcmi(POWER / "ipmitool_new.txt", tz="Mars/Olympus")


def test_parse_instantaneous() -> None:
    assert parse_instantaneous("  Instantaneous power reading:   215 Watts\n") == 215.0
    assert parse_instantaneous("Instantaneous power reading: 0 Watts") is None
    assert parse_instantaneous("Instantaneous power reading: 65535 Watts") is None
    with pytest.raises(ValueError, match="no 'Instantaneous"):
        parse_instantaneous("Error: DCMI not supported")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("quarch_stream.csv", "quarch"),
        ("yokotool.csv", "yokotool"),
        ("ipmitool_old.txt", "ipmitool_dcmi"),
        ("ipmitool_new.txt", "ipmitool_dcmi"),
    ],
)
def test_power_formats_detected_by_content(tmp_path: Path, name: str, fmt: str) -> None:
    renamed = tmp_path / "meter.log"
    renamed.write_bytes((POWER / name).read_bytes())
    assert detect_power(renamed) == fmt
    assert read_power(renamed).meta["source"] == fmt


def test_generic_csv_is_never_guessed() -> None:
    assert "csv" in POWER_FORMATS
    with pytest.raises(InputError, match="not a recognised power file"):
        read_power(POWER / "generic.csv")
    with pytest.raises(InputError, match="empty file"):
        read_power(POWER / "empty.csv")


WINDOWS = pl.DataFrame(
    {
        "step": [1, 2, 3],
        "start_s": [T0 + 1.0, T0 + 5.0, T0 + 8.0],
        "end_s": [T0 + 4.0, T0 + 8.0, T0 + 12.0],
    }
)


def test_step_power_averages_covered_windows_and_flags_a_partial_one() -> None:
    trace = read_yokotool_csv(POWER / "yokotool.csv")  # T0 .. T0+10 every 0.5 s
    result = step_power(trace, WINDOWS)
    one, two, three = result.iter_rows(named=True)
    # step 1: samples at +1.0 .. +4.0 = 9, 11, 9, 11, 9, 11, 9 W -> 69 / 7
    assert (one["samples"], one["covered"], one["reason"]) == (7, True, None)
    assert one["avg_w"] == pytest.approx(69 / 7)
    assert (one["min_w"], one["max_w"]) == (9.0, 11.0)
    # step 2: +5.0 .. +8.0 = 19, 21, 19, 21, 19, 21, 19 W -> 139 / 7
    assert two["avg_w"] == pytest.approx(139 / 7)
    # step 3 runs to +12 s but the trace stops at +10 s: never averaged
    assert three["covered"] is False
    assert three["samples"] == 5
    assert three["avg_w"] is None and three["min_w"] is None and three["max_w"] is None
    assert three["reason"] == "trace ends 2.000 s before the window end"
    assert result.columns == [
        "step", "start_s", "end_s", "samples", "avg_w", "min_w", "max_w", "covered", "reason"
    ]  # fmt: skip


def test_step_power_flags_gaps_late_starts_and_empty_windows() -> None:
    times = [T0 + t for t in (0.0, 1.0, 2.0, 3.0, 7.0, 8.0, 9.0, 10.0)]  # nothing 3 s .. 7 s
    trace = pl.DataFrame({"time_s": times, "power_w": [10.0] * len(times)})
    windows = pl.DataFrame(
        {
            "step": ["gap", "late", "ok", "void"],
            "start_s": [T0 + 1, T0 - 5, T0 + 7, T0 + 4],
            "end_s": [T0 + 9, T0 + 2, T0 + 10, T0 + 6],
        }
    )
    rows = {r["step"]: r for r in step_power(trace, windows).iter_rows(named=True)}
    # median interval 1 s -> a gap of more than 2 s is a hole
    assert (
        rows["gap"]["reason"] == f"no samples for 4.000 s from {T0 + 3:.3f} (allowed gap 2.000 s)"
    )
    assert rows["late"]["reason"] == "trace starts 5.000 s after the window start"
    assert rows["ok"]["covered"] is True and rows["ok"]["avg_w"] == 10.0
    assert rows["void"]["reason"] == "no samples in window"
    assert not rows["void"]["covered"] and rows["void"]["samples"] == 0
    relaxed = step_power(trace, windows.filter(pl.col("step") == "gap"), max_gap_s=5.0)
    assert relaxed["covered"].to_list() == [True]


def test_step_power_input_checks() -> None:
    one = pl.DataFrame({"time_s": [T0], "power_w": [5.0]})
    window = pl.DataFrame({"step": [1], "start_s": [T0 - 0.5], "end_s": [T0 + 0.5]})
    assert step_power(one, window)["reason"].to_list() == [
        "trace has fewer than 2 distinct sample times: pass max_gap_s"
    ]
    assert step_power(one, window, max_gap_s=1.0)["avg_w"].to_list() == [5.0]
    with pytest.raises(InputError, match=r"windows frame: missing column\(s\) 'end_s'"):
        step_power(one, window.drop("end_s"))
    with pytest.raises(InputError, match=r"power trace frame: missing column\(s\) 'power_w'"):
        step_power(one.drop("power_w"), window)
    with pytest.raises(InputError, match=r"windows frame: column.* start_s must be numeric"):
        step_power(one, window.with_columns(pl.col("start_s").cast(pl.String)))
    backwards = window.with_columns(end_s=pl.lit(T0 - 1.0))
    with pytest.raises(InputError, match=r"end_s .* is not after start_s"):
        step_power(one, backwards)


def test_efficiency_sums_directions_per_step() -> None:
    power = step_power(read_yokotool_csv(POWER / "yokotool.csv"), WINDOWS)
    summary = pl.DataFrame(
        {
            "step": [1, 2, 2, 3],
            "direction": ["read", "read", "write", "write"],
            "iops": [1000.0, 700.0, 300.0, 50.0],
            "bw_bytes_s": [4_096_000.0, 2_867_200.0, 1_228_800.0, 204_800.0],
        }
    )
    eff = efficiency(power, summary)
    one, two, three = eff.iter_rows(named=True)
    # step 1: 4.096 MB/s / (69/7 W) = 4.096 x 7 / 69; 1000 IOPS / (69/7 W) = 7000 / 69
    assert one["mb_s_per_w"] == pytest.approx(4.096 * 7 / 69)
    assert one["iops_per_w"] == pytest.approx(7000 / 69)
    # step 2: read + write = 1000 IOPS and 4,096,000 B/s over 139/7 W
    assert (two["iops"], two["bw_bytes_s"]) == (1000.0, 4_096_000.0)
    assert two["mb_s_per_w"] == pytest.approx(4.096 * 7 / 139)
    assert two["iops_per_w"] == pytest.approx(7000 / 139)
    # step 3's power is not covered: no efficiency
    assert three["mb_s_per_w"] is None and three["iops_per_w"] is None
    with pytest.raises(InputError, match="step columns differ in type"):
        efficiency(power, summary.with_columns(pl.col("step").cast(pl.String)))
    with pytest.raises(InputError, match=r"summary frame: missing column\(s\) 'iops'"):
        efficiency(power, summary.drop("iops"))


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    """Wait for ``condition`` (a count of samples or errors), however loaded the machine."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_command_sampler_runs_a_real_command_and_stops_cleanly() -> None:
    started = time.time()
    with CommandSampler(["sh", "-c", "echo 12.5"], interval_s=0.1) as sampler:
        _until(lambda: sampler.trace().frame.height >= 3, "3 samples")
    stopped = time.time()
    trace = sampler.trace()
    assert isinstance(trace, PowerTrace)
    assert not sampler._thread.is_alive()
    times = trace.frame["time_s"].to_list()
    assert 3 <= len(times) <= (stopped - started) / 0.1 + 2  # never faster than the interval
    assert trace.frame["power_w"].to_list() == [12.5] * len(times)
    assert started <= times[0] and times[-1] <= stopped
    assert times == sorted(times)
    assert trace.meta["errors"] == 0 and trace.meta["invalid"] == 0
    time.sleep(0.25)
    assert sampler.trace().frame.height == len(times)  # nothing after stop


def test_command_sampler_counts_failures_and_keeps_going() -> None:
    sampler = CommandSampler("sh -c 'echo no reading'", interval_s=0.05).start()
    _until(lambda: sampler.trace().meta["errors"] >= 2, "2 failed samples")
    trace = sampler.stop()
    assert trace.frame.height == 0
    assert trace.meta["errors"] >= 2
    assert "no number" in trace.meta["last_error"]
    failing = CommandSampler(["sh", "-c", "exit 3"], interval_s=0.05).start()
    _until(lambda: failing.trace().meta["errors"] >= 1, "a failed sample")
    assert "exit status 3" in failing.stop().meta["last_error"]
    with pytest.raises(RuntimeError, match="already started"):
        failing.start()


def test_power_sources_by_name_and_a_user_source(tmp_path: Path) -> None:
    command = power_sampler("command:sh -c 'echo 4.5'", 0.5)
    assert isinstance(command, CommandSampler) and command.interval_s == 0.5
    assert command.command == ["sh", "-c", "echo 4.5"]
    ipmi = power_sampler("ipmitool:-I lanplus -H bmc1")
    assert isinstance(ipmi, IpmitoolSampler)
    assert ipmi.command == ["ipmitool", "-I", "lanplus", "-H", "bmc1", "dcmi", "power", "reading"]
    assert power_sampler("ipmitool").command == ["ipmitool", "dcmi", "power", "reading"]
    rapl = power_sampler(f"rapl:{tmp_path}", 2.0)
    assert isinstance(rapl, RaplSampler) and rapl.domain == tmp_path
    assert isinstance(power_sampler("rapl"), RaplSampler)
    with pytest.raises(InputError, match=r"unknown power source 'meter' in 'meter:1' \(known: "):
        power_sampler("meter:1")
    with pytest.raises(InputError, match="interval must be positive"):
        power_sampler("ipmitool", 0)
    POWER_SOURCES.register(
        "fixed", lambda arg, interval_s: CommandSampler(f"echo {arg}", interval_s)
    )
    try:
        fixed = power_sampler("fixed:3.25", 0.05)
        seen: list[tuple[float, float]] = []
        fixed.on_sample = lambda t, w: seen.append((t, w))
        fixed._sample_once()  # one measurement, as the sampling thread makes them
        assert seen == fixed.trace().frame.rows() and seen[0][1] == 3.25
    finally:
        POWER_SOURCES.unregister("fixed")


def test_on_sample_errors_count_as_sampler_errors() -> None:
    sampler = CommandSampler(["sh", "-c", "echo 2"], 0.05)

    def disk_full(t: float, w: float) -> None:
        raise OSError(28, "No space left on device")

    sampler.on_sample = disk_full
    sampler._sample_once()
    trace = sampler.trace()
    assert trace.frame["power_w"].to_list() == [2.0]  # kept in memory all the same
    assert trace.meta["errors"] == 1 and "No space left" in trace.meta["last_error"]


def test_ipmitool_sampler_on_a_stand_in_ipmitool(tmp_path: Path) -> None:
    fake = tmp_path / "ipmitool"
    fake.write_text(
        "#!/bin/sh\n"
        '[ "$*" = "-I lanplus dcmi power reading" ] || exit 9\n'
        'n=$(cat "$0.count" 2>/dev/null || echo 0); echo $((n + 1)) > "$0.count"\n'
        'if [ "$n" = 1 ]; then w=0; else w=215; fi\n'
        'echo "    Instantaneous power reading:                   $w Watts"\n'
        'echo "    IPMI timestamp:                           11/14/23 22:13:20 UTC'
        '    Sampling period:                          00000001 Seconds."\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    sampler = IpmitoolSampler(0.05, args=["-I", "lanplus"], ipmitool=os.fspath(fake))
    with sampler:  # runs 1 and 3 print 215 W, run 2 prints 0 W
        _until(lambda: sampler.trace().meta["samples"] >= 2, "two valid samples")
    trace = sampler.trace()
    assert trace.meta["errors"] == 0
    assert trace.meta["invalid"] == 1  # the second run printed 0 W
    assert trace.frame.height >= 2
    assert set(trace.frame["power_w"].to_list()) == {215.0}


def test_rapl_sampler_power_from_energy_counter_with_wrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "max_energy_range_uj").write_text("26000000\n")
    energy = tmp_path / "energy_uj"
    clock = iter([100.0, 102.0, 103.0])
    monkeypatch.setattr(sampler_module.time, "time", lambda: next(clock))
    sampler = RaplSampler(tmp_path, interval_s=1.0)
    for uj in (1_000_000, 21_000_000, 500_000):
        energy.write_text(f"{uj}\n")
        sampler._sample_once()
    trace = sampler.trace()
    # first read is the baseline; then 20 J over 2 s = 10 W at 101 s;
    # then the counter wrapped: (500,000 - 21,000,000 + 26,000,000) uJ = 5.5 J over 1 s at 102.5 s
    assert trace.frame.rows() == [(101.0, 10.0), (102.5, 5.5)]
    assert trace.meta["scope"] == "CPU (RAPL), not drive power"
    assert trace.meta["errors"] == 0


def test_rapl_sampler_counts_unreadable_counter_as_error(tmp_path: Path) -> None:
    sampler = RaplSampler(tmp_path / "missing", interval_s=1.0)
    sampler._sample_once()
    assert sampler.trace().meta["errors"] == 1
    assert "energy_uj" in sampler.trace().meta["last_error"]


def test_yokotool_sniff_wants_t_and_p_columns(tmp_path: Path) -> None:
    path = tmp_path / "pressure.csv"
    path.write_text("T,Pressure\n1,2\n")
    with pytest.raises(InputError, match="not a recognised power file"):
        detect_power(path)


def test_impossible_samples_are_dropped_and_counted(tmp_path: Path) -> None:
    """NaN and infinite times or values and negative power are dropped, the rest kept."""
    lines = (POWER / "yokotool.csv").read_text().splitlines()
    lines[1] = lines[1].replace("9.0", "-9.0", 1)  # negative power
    lines[2] = lines[2].replace("11.0", "nan", 1)
    lines[3] = "inf" + lines[3][lines[3].index(",") :]  # infinite time
    path = tmp_path / "yoko.csv"
    path.write_text("\n".join(lines) + "\n")
    good = read_yokotool_csv(POWER / "yokotool.csv")
    trace = read_yokotool_csv(path)
    assert trace.meta["dropped_invalid"] == 3 and good.meta["dropped_invalid"] == 0
    assert trace.frame.equals(good.frame.slice(3))
    assert trace.meta["path"] == str(path)


def test_quarch_negative_total_is_dropped_and_a_nan_start_refused(tmp_path: Path) -> None:
    text = (POWER / "quarch_stream.csv").read_text()
    header, first, *rest = text.split("\n", 3)[2:]
    negative = first.rsplit(",", 1)[0] + ",-5"
    path = tmp_path / "q.csv"
    path.write_text("\n".join([*text.split("\n")[:2], header, negative, *rest]))
    trace = read_quarch_csv(path)
    assert trace.meta["dropped_invalid"] == 1
    assert trace.frame.height == read_quarch_csv(POWER / "quarch_stream.csv").frame.height - 1
    path.write_text(text.replace("Start time: 1700000000.0", "Start time: nan"))
    with pytest.raises(InputError, match=r"q\.csv: line 2: start time 'nan' is not a time"):
        read_quarch_csv(path)


def test_ipmitool_reading_too_large_to_be_one_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "dcmi.txt"
    text = (POWER / "ipmitool_new.txt").read_text()
    path.write_text(text.replace("109 Watts", "9" * 400 + " Watts", 1))
    trace = read_ipmitool_dcmi(path)
    assert trace.meta["dropped_invalid"] == 1
    assert trace.frame.height == read_ipmitool_dcmi(POWER / "ipmitool_new.txt").frame.height - 1


def test_csv_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "yoko.csv"
    path.write_text("T,P\n1700000000,9\n1700000001," + "9" * 400 + "\n")
    with pytest.raises(InputError) as info:
        read_yokotool_csv(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "power.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        read_yokotool_csv(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        read_quarch_csv(fifo)


def test_long_runs_of_spaces_are_read_in_linear_time(tmp_path: Path) -> None:
    """Three patterns used to backtrack over a run of spaces in quadratic time (20,000
    spaces took seconds, 200,000 hours); each file below is now read at once."""
    spaces = " " * 200_000
    dcmi = tmp_path / "dcmi.txt"
    dcmi.write_text(f"Instantaneous power reading: 100 Watts\nIPMI timestamp: x{spaces}y\n")
    assert read_ipmitool_dcmi(dcmi).meta["dropped_no_time"] == 1
    quarch = tmp_path / "q.csv"
    quarch.write_text(f"Start time: x{spaces[:60_000]}y\nTime us,12V uW\n0,1\n")  # < 64 KiB
    with pytest.raises(InputError, match=r"start time 'x .*y' is neither"):
        read_quarch_csv(quarch)
    quarch.write_text(f"Start time: 1700000000\nTime us,12V{spaces}x uW\n0,1\n")
    assert read_quarch_csv(quarch).frame["power_w"].to_list() == [1e-6]
