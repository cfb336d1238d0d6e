"""Reproducers of a hostile review: a step's options may not take fio past its target."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError, SuiteError
from ssdlab.fio import job_file
from ssdlab.fio_options import furthest_byte
from ssdlab.suite import Step
from ssdlab.target import MIN_FILE_BYTES, check_file_size

M = 2**20


def step(**fields: object) -> Step:
    return Step.model_validate(
        {"name": "s", "rw": "write", "ioengine": "psync", "loops": 1, "direct": False, **fields}
    )


@pytest.mark.parametrize(
    ("fields", "target", "end"),
    [
        (
            {"size": "1m", "numjobs": 2, "options": {"offset_increment": "10g"}},
            16 * M,
            10 * 2**30 + M,
        ),
        ({"size": "1m", "numjobs": 3, "options": {"offset_increment": "50%"}}, 16 * M, 17 * M),
        ({"size": "1m", "numjobs": 3, "options": {"offset_increment": "50%"}}, None, None),
        ({"size": "1m", "numjobs": 1, "options": {"offset_increment": "10g"}}, 16 * M, M),
        ({"size": "1m", "offset": "2m"}, None, 3 * M),
        ({"size": "1m", "offset": "25%", "bs": "64k"}, 16 * M + 4096, 5 * M + 64 * 1024),
        ({"size": "1m", "offset": "25%", "options": {"offset_align": "3m"}}, 16 * M, 7 * M),
        ({"size": "50%", "numjobs": 2, "options": {"offset_increment": "10g"}}, 16 * M, None),
        ({"numjobs": 2, "options": {"offset_increment": "10g"}}, 16 * M, None),
    ],
)
def test_furthest_byte_counts_every_job(fields: dict, target: int | None, end: int | None) -> None:
    """A 1m step with offset_increment=10g on 2 jobs made fio write a 10.7 GB file."""
    assert furthest_byte(step(**fields), target) == end


def test_a_bad_increment_names_the_option() -> None:
    with pytest.raises(SuiteError, match="'offset_increment': 'lots'"):
        furthest_byte(step(size="1m", numjobs=2, options={"offset_increment": "lots"}), M)


@pytest.mark.parametrize(
    ("fields", "grown"),
    [
        ({"size": "256k", "numjobs": 3, "options": {"offset_increment": "384k"}}, False),
        ({"size": "256k", "numjobs": 3, "options": {"offset_increment": "512k"}}, True),
        ({"size": "512k", "offset": "25%", "options": {"offset_align": "768k"}}, True),
    ],
)
def test_fio_grows_a_file_exactly_to_the_furthest_byte(
    tmp_path: Path, fields: dict, grown: bool
) -> None:
    """The formula is fio 3.33's: a 1 MiB file stays as it is when the jobs end inside it,
    and is grown to the furthest byte when they do not."""
    target = tmp_path / "t.bin"
    target.write_bytes(bytes(M))
    job = step(**fields)
    end = furthest_byte(job, M)
    assert end is not None and (end > M) == grown
    (tmp_path / "job.fio").write_text(job_file(job, str(target), direct=False, header="h"))
    done = subprocess.run(["fio", "job.fio"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert target.stat().st_size == max(end, M)


def test_a_target_size_below_the_smallest_file_target_is_refused() -> None:
    """``--target-size 1k`` was planned as 1,024 bytes while the run used 16 MiB."""
    with pytest.raises(
        SsdlabError, match=r"--target-size 1,024 bytes \(1 KiB\): .* 16,777,216 bytes \(16 MiB\)"
    ):
        check_file_size(1024)
    check_file_size(MIN_FILE_BYTES)
