"""A fio result whose job reported an error is a failed step, imported or run; a fio job file
given to import is named as one.

``fixtures/import24/errors`` holds fio 3.33's real output: ``enospc.json`` a sequential write
to a file on a 1 MiB tmpfs (error 28, ENOSPC, after 1 MiB; fio exited 1), ``verify-eilseq.json``
a crc32c verify of a file of zeros with ``continue_on_error=verify`` (error 84, EILSEQ, fio
exited 0; the JSON part of its output), ``good.json`` a null-engine read.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import ROOT, ssdlab_cli

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.execute import LocalFio, StepExecutor
from ssdlab.manifest import Manifest, new_run_id
from ssdlab.review.drive import setup_section

FIXTURES = ROOT / "tests" / "fixtures" / "import24"
ENOSPC = "fio job 'fill' reported error 28 ENOSPC (No space left on device)"
EILSEQ = "fio job 'v' reported error 84 EILSEQ (Invalid or incomplete multibyte or wide character)"


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "errors"
    shutil.copytree(FIXTURES / "errors", tree)
    return tree


def test_a_job_error_is_a_failed_step_in_import_summary_and_report(tmp_path: Path) -> None:
    tree, out = _tree(tmp_path), tmp_path / "imported"
    proc = ssdlab_cli("import", tree, "--out", out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert f"failed {tree / 'enospc.json'}: {ENOSPC}; step enospc left out" in lines
    assert f"failed {tree / 'verify-eilseq.json'}: {EILSEQ}; step verify-eilseq left out" in lines
    assert lines[-1] == (
        "imported 3 fio results (2 failed: a job reported an error) with 2 logs; skipped 0 files"
    )

    results = ssdlab.load(out)
    records = {s.name: (s.status, s.error) for s in results.manifest.steps}
    assert records == {"enospc": ("failed", ENOSPC), "good": ("ok", None),
                       "verify-eilseq": ("failed", EILSEQ)}  # fmt: skip
    assert results.summary["step"].unique().to_list() == ["good"]  # no figures of a failed step
    assert results.timeseries.is_empty()

    summary = ssdlab_cli("summary", out, "-f", "csv")
    assert summary.returncode == 0
    assert f"warning: step enospc failed and is left out: {ENOSPC}" in summary.stderr.splitlines()
    assert "enospc" not in summary.stdout and ",good," in summary.stdout

    said = setup_section(DriveAnalysis(results)).findings
    assert f"Step enospc failed and is left out: {ENOSPC}." in said
    assert f"Step verify-eilseq failed and is left out: {EILSEQ}." in said


def test_strict_import_stops_at_a_job_error(tmp_path: Path) -> None:
    tree, out = _tree(tmp_path), tmp_path / "imported"
    (tree / "verify-eilseq.json").unlink()
    proc = ssdlab_cli("import", "--strict", tree, "--out", out)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"error: {tree / 'enospc.json'}: {ENOSPC}"]
    assert not out.exists()


def test_a_job_file_given_to_import_is_named(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "pbench", tree)
    proc = ssdlab_cli("import", tree, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert (
        f"skipped {tree / 'fio.job'}: fio job file (INI), not a result: run it with "
        "fio --output-format=json" in proc.stderr.splitlines()
    )


class _Quiet:
    """What a run shows, kept rather than shown."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def print(self, message: str) -> None:
        self.said.append(message)

    def start_step(self, label: str, planned_s: float) -> None: ...

    def end_step(self, message: str) -> None:
        self.said.append(message)

    def add_planned(self, seconds: float) -> None: ...

    def skip(self, seconds: float) -> None: ...


def test_a_native_step_fio_ends_with_exit_0_but_a_job_error_fails(tmp_path: Path) -> None:
    """fio exits 0 after a verify error it went on past (``continue_on_error``): the step
    still fails, whatever the runner's own check of the result does."""
    zeros = tmp_path / "zeros.dat"
    zeros.write_bytes(bytes(4096))  # no verify header: the block fails
    job = (
        f"[v]\nioengine=psync\nbs=4k\nrw=read\nfilename={zeros}\nsize=4k\n"
        "verify=crc32c\ncontinue_on_error=verify\n"
    )
    check = subprocess.run(["fio", "--output-format=json", "-"], input=job, text=True,
                           capture_output=True, check=False)  # fmt: skip
    assert check.returncode == 0  # as fio does: an exit status of 0
    out = tmp_path / "run"
    out.mkdir()
    manifest = Manifest(run_id=new_run_id(), label="t", suite="t")
    executor = StepExecutor(manifest, out, _Quiet(), LocalFio())
    record = executor.new_record("verify")
    _, error, inspected = executor.execute(record, job, "verify", 1.0, lambda d, fio: "looked")
    assert record.status == "failed" and inspected is None
    assert error == record.error == EILSEQ
    assert manifest.failures() == [f"step verify failed and is left out: {EILSEQ}"]


def test_a_result_after_fios_verify_messages_is_read(tmp_path: Path) -> None:
    """fio writes verify errors into its --output file before the JSON, the last one running
    into the result's opening brace; kilobytes of them must not hide the result."""
    tree = tmp_path / "verify"
    tree.mkdir()
    messages = "".join(
        f"verify: bad magic header 0, wanted acca at file /tmp/x offset {n * 4096}, length 4096\n"
        for n in range(300)
    )
    result = (FIXTURES / "errors" / "verify-eilseq.json").read_text()
    (tree / "out.json").write_text(messages + "fio: verify type mismatch, wanted acca" + result)
    proc = ssdlab_cli("import", tree, "--out", tmp_path / "imported")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith(
        f"every fio result under {tree} reported a job error (first: {tree / 'out.json'}: "
        f"{EILSEQ}); nothing to import"
    ), proc.stderr
    assert not (tmp_path / "imported").exists()
    shutil.copy(FIXTURES / "errors" / "good.json", tree)  # with a good result beside it
    proc = ssdlab_cli("import", tree, "--out", tmp_path / "imported")
    assert proc.returncode == 0, proc.stderr
    assert f"failed {tree / 'out.json'}: {EILSEQ}; step out left out" in proc.stderr.splitlines()
