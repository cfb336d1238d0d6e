"""Native ACT log parsing: a real ACT 6.6 log, ACT-format fixtures, and damaged copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.act import read_act_log
from ssdlab.act.log import Device, Histogram
from ssdlab.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "act"
SAMPLE = FIXTURES / "act_storage_1x_30s.log"  # real act_storage 6.6 output, 1x, 30 s
US_LOG = FIXTURES / "act_storage_us_2x_20s.log"  # microsecond histograms, 2 s reports
ERROR_LOG = FIXTURES / "act_storage_3x_2d_error.log"  # stops at 12 s with an ERROR


def write(tmp_path: Path, text: str, name: str = "act.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_sample_header_blocks_typed() -> None:
    log = read_act_log(SAMPLE)
    assert (log.version, log.tool) == ("6.6", "ACT-STORAGE")
    assert log.config["device-names"] == ["/dev/loop0"]
    assert log.config["service-threads"] == 10
    assert log.config["microsecond-histograms"] is False
    assert log.config["large-block-op-kbytes"] == 128
    assert len(log.config) == 21
    assert log.derived == {
        "record-stored-bytes": (1536, 1536),
        "internal-read-reqs-per-sec": 2000,
        "internal-write-reqs-per-sec": 0,
        "large-block-reads-per-sec": 23.53,
        "large-block-writes-per-sec": 23.53,
    }
    assert log.devices == [Device("/dev/loop0", 2147483648, 16384, 512)]
    assert log.histogram_names == [
        "reads",
        "/dev/loop0-reads",
        "large-block-reads",
        "large-block-writes",
    ]
    assert log.meta == {"cpus": 2}
    assert (log.report_interval_s, log.microsecond_histograms) == (1, False)


def test_sample_reports_cumulative() -> None:
    log = read_act_log(SAMPLE)
    assert [r.seconds for r in log.reports] == list(range(1, 31))
    first, last = log.reports[0].histograms, log.reports[-1].histograms
    assert first["large-block-writes"] == Histogram(24, {0: 22, 1: 1, 2: 1})
    assert last["reads"] == Histogram(60000, {0: 59357, 1: 298, 2: 132, 3: 98, 4: 80, 5: 25, 6: 10})
    assert last["reads"].count_below(3) == 59357 + 298 + 132 + 98
    assert (log.errors, log.messages, log.status) == ([], [], "complete")


def test_microsecond_log() -> None:
    log = read_act_log(US_LOG)
    assert log.microsecond_histograms and log.report_interval_s == 2
    assert [r.seconds for r in log.reports] == list(range(2, 21, 2))
    assert max(log.reports[-1].histograms["reads"].buckets) == 17  # beyond 2^16 µs
    assert log.status == "complete"


def test_error_inside_a_report_is_collected_and_status_failed() -> None:
    log = read_act_log(ERROR_LOG)
    assert log.errors == ["ERROR: large block writes can't keep up"]
    assert log.messages == ["drive(s) can't keep up - test stopped"]
    assert log.status == "failed"
    assert log.reports[-1].seconds == 12  # ACT prints one more report, then exits 0
    assert log.reports[-1].histograms["reads"].total == 144000
    assert log.config["device-names"] == ["/dev/sdb", "/dev/sdc"]


def test_stopped_early_without_error_is_incomplete(tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    path = write(tmp_path, text[: text.index("after 21 sec:")])
    log = read_act_log(path)
    assert (log.reports[-1].seconds, log.status) == (20, "incomplete")
    assert "dropped_partial_report_s" not in log.meta


@pytest.mark.parametrize(
    "cut_after",
    [
        "after 30 sec:\n",  # nothing of the last report
        "after 30 sec:\nreads (60000 total)\n",  # header, no buckets
        " (00: 0000059357) (01: 00000",  # mid-line
        "/dev/loop0-reads (60000 total)\n (00: 0000059357) (01: 0000000298) (02: 0000000132)"
        " (03: 0000000098)\n",  # bucket lines missing
    ],
)
def test_partial_last_report_dropped_and_noted(tmp_path: Path, cut_after: str) -> None:
    text = SAMPLE.read_text()
    end = text.index(cut_after, text.index("after 30 sec:")) + len(cut_after)
    log = read_act_log(write(tmp_path, text[:end]))
    assert log.reports[-1].seconds == 29
    assert log.meta["dropped_partial_report_s"] == 30


def test_complete_last_report_without_final_newline_is_kept(tmp_path: Path) -> None:
    log = read_act_log(write(tmp_path, SAMPLE.read_text().rstrip("\n")))
    assert log.reports[-1].seconds == 30 and "dropped_partial_report_s" not in log.meta


def test_incomplete_report_in_the_middle_is_an_error(tmp_path: Path) -> None:
    text = SAMPLE.read_text().replace(" (04: 0000000046) (05: 0000000005)\n", "", 1)
    with pytest.raises(InputError, match=r"line \d+: report 'after 9 sec' is incomplete"):
        read_act_log(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file"),
        ("\n\n", "empty file"),
        ("fio-3.33\nread: IOPS=10\n", r"not an ACT log \(no 'ACT version' line\)"),
        ("\nACT version 5.3\n", r"ACT version 5.3 is not supported \(ACT 6.x only\)"),
        (
            "\nACT version 6.6\nStorage device IO test\n\nERROR: ignoring unknown config item "
            "'read-reqs'\n",
            "ACT stopped before the test: ERROR: ignoring unknown config item 'read-reqs'",
        ),
    ],
)
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        read_act_log(path)
    assert str(info.value).startswith(str(path))


def test_truncated_header(tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    with pytest.raises(InputError, match="truncated ACT log: no HISTOGRAM NAMES block"):
        read_act_log(write(tmp_path, text[: text.index("HISTOGRAM NAMES")]))


def test_two_runs_in_one_file(tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    reports = text[text.index("after 1 sec:") :]
    with pytest.raises(InputError, match="'after 1 sec' follows 'after 30 sec'"):
        read_act_log(write(tmp_path, text + reports))


def test_binary_and_missing(tmp_path: Path) -> None:
    binary = tmp_path / "act.bin"
    binary.write_bytes(b"\0\1\2ACT version 6.6\n")
    with pytest.raises(InputError, match="binary file"):
        read_act_log(binary)
    with pytest.raises(InputError, match="cannot read"):
        read_act_log(tmp_path / "missing.log")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("report-interval-sec: 1\n", "report-interval-sec: 0\n", r"report-interval-sec: expe"),
        ("report-interval-sec: 1\n", "report-interval-sec: x\n", r"whole number > 0, found 'x'"),
        ("test-duration-sec: 30\n", "test-duration-sec: -30\n", r"test-duration-sec: expected"),
        ("num-devices: 1\n", "num-devices: 1.5\n", r"num-devices: expected a whole number"),
        ("read-reqs-per-sec: 2000\n", "read-reqs-per-sec: -1\n", r"read-reqs-per-sec: exp"),
        ("microsecond-histograms: no\n", "microsecond-histograms: 2\n", r"yes or no, found 2"),
        (
            "internal-read-reqs-per-sec: 2000\n",
            "internal-read-reqs-per-sec: 1 ... 2\n",
            r"DERIVED CONFIGURATION: internal-read-reqs-per-sec: expected a number >= 0",
        ),
        ("(05: 0000000005)", "(99: 0000000005)", r"line \d+: bucket 99 does not exist"),
        ("(05: 0000000005)", "(05: " + "9" * 30 + ")", r"line \d+: 9+\.\.\. is too large"),
        ("after 5 sec:", "after " + "9" * 5000 + " sec:", r"line \d+: 9+\.\.\. is too large"),
    ],
)
def test_impossible_values_name_the_file(tmp_path: Path, old: str, new: str, message: str) -> None:
    """Numbers ssdlab computes with are checked; ones too long for 64 bits are not read."""
    text = SAMPLE.read_text()
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(InputError, match=message) as info:
        read_act_log(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_bytes_that_are_not_utf8_become_messages(tmp_path: Path) -> None:
    path = tmp_path / "act.log"
    text = SAMPLE.read_bytes()
    at = text.index(b"after 30 sec:")
    path.write_bytes(text[:at] + b"\xff\xfe noise\n" + text[at:])
    log = read_act_log(path)
    assert log.messages == ["\ufffd\ufffd noise"] and log.reports[-1].seconds == 30
