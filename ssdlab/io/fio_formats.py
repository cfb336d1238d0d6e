"""fio's output formats in the format registry (:mod:`ssdlab.formats`), and how a file is
recognised as one of them from its first bytes (:func:`sniff`; :class:`Recognise` for the
importer).

- ``fio_json``: a JSON/json+ result, text around it allowed (:mod:`ssdlab.io.fio_json`).
- ``fio_log``: a bw/iops/lat/clat/slat log (:mod:`ssdlab.io.fio_log`).
- ``fio_hist_log``: a completion-latency histogram log (:mod:`ssdlab.io.fio_hist`).

Any other format of kind ``fio`` (a plug-in's) is a result format: its reader returns a
:class:`~ssdlab.io.fio_json.FioJson`, as :func:`~ssdlab.io.fio_json.read_fio_json` does (its
``meta`` names the job options, so the importer finds the result's logs).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, SsdlabError
from ..formats import FORMATS, HEAD_BYTES, Format, Probe, sniffed
from .fio_bins import GROUPS
from .fio_json import FioJson, FioRows, read_fio_json
from .fio_log import LOG_ROW, read_fio_log

if TYPE_CHECKING:
    import polars as pl

SNIFF_BYTES = 8192
HIST_MIN_COLUMNS = 3 + GROUPS[2]  # the coarsest histogram log (fio 2.x, coarseness 6)


def sniff(data: bytes) -> str | None:
    """``json``, ``log``, ``hist`` or None, from the first bytes of a file."""
    end = data.find(b"\n", 0, SNIFF_BYTES)
    first = data[: SNIFF_BYTES if end < 0 else end]
    if LOG_ROW.match(first):  # first: a log's first line settles it without a scan
        return "hist" if first.count(b",") + 1 >= HIST_MIN_COLUMNS else "log"
    if data.find(b'"fio version"') >= 0:  # verify messages may come first, kilobytes of them
        return "json"
    return None


FIO_JSON = Format("fio_json", "fio", read_fio_json, lambda p: sniff(p.raw) == "json")
FIO_LOG = Format("fio_log", "fio", read_fio_log, lambda p: sniff(p.raw) == "log")


def read_fio_hist_log(path: str | Path) -> tuple[pl.DataFrame, dict[str, Any]]:
    """:func:`ssdlab.io.fio_hist.read_fio_hist_log`, imported when first read: it needs
    numpy, which recognising files (:func:`sniff`, the importer) does not."""
    from .fio_hist import read_fio_hist_log as read

    return read(path)


FIO_HIST_LOG = Format("fio_hist_log", "fio", read_fio_hist_log, lambda p: sniff(p.raw) == "hist")
#: ssdlab's own fio formats, in registration order, with what :func:`sniff` calls them
OWN = ((FIO_JSON, "json"), (FIO_LOG, "log"), (FIO_HIST_LOG, "hist"))


class Recognise:
    """What the importer makes of a file, by the fio formats of the registry (``formats``,
    as ``FORMATS.all("fio")`` lists them; the last registered asked first): ``json`` (a
    result), ``log``, ``hist`` or ``""`` (not fio output), and the plug-in format whose
    reader reads a result (None for ssdlab's own, parsed from the bytes read). With ssdlab's
    formats alone, :func:`sniff` judges the bytes: no :class:`Probe` per file."""

    def __init__(self, formats: Sequence[Format[Any]]) -> None:
        self.formats = formats
        own = [fmt for fmt, _ in OWN]
        self.own_only = len(formats) == len(own) and all(map(operator.is_, formats, own))

    def __call__(self, path: str, data: bytes, whole: bool) -> tuple[str, Format[Any] | None]:
        """``data``: the file's bytes (``whole``) or its first bytes. InputError when a
        format's ``sniff`` finds the file unreadable (a ``sniff`` that fails otherwise is a
        warning, :func:`~ssdlab.formats.sniffed`)."""
        if self.own_only:
            return sniff(data) or "", None
        probe = Probe.of_bytes(path, data) if whole else Probe(Path(path), data[:HEAD_BYTES])
        if (fmt := sniffed(probe, self.formats)) is None:
            return "", None
        kind = next((kind for own, kind in OWN if own is fmt), None)
        return (kind, None) if kind else ("json", fmt)


def fio_rows(fio: FioJson) -> FioRows:
    """The rows of a result read whole (:func:`~ssdlab.io.fio_json.fio_frames` of one result
    gives it back), for results of many formats to be made frames together."""
    keys = ["job_index", "direction", "stat"]
    bins = [
        (*key, part["lat_ns"].to_numpy(), part["count"].to_numpy())
        for key, part in fio.bins.group_by(keys, maintain_order=True)
    ]
    snapshots = fio.snapshots.drop("interval_iops", "interval_bw_bytes_s", strict=False)
    return FioRows(
        jobs=fio.jobs.to_dicts(),
        aggregate=fio.aggregate.to_dicts(),
        percentiles=fio.percentiles.to_dicts(),
        bins=bins,
        snapshots=snapshots.to_dicts(),
        steadystate=fio.steadystate.to_dicts(),
        meta=fio.meta,
    )


def read_result(fmt: Format[Any], path: str) -> FioRows:
    """The result in ``path`` read by the plug-in fio format ``fmt``, as rows; InputError
    when its reader fails (named, :meth:`~ssdlab.formats.Formats.reader`) or returns
    anything but a FioJson."""
    try:
        fio = FORMATS.reader(fmt)(path)
    except SsdlabError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(fio, FioJson):
        raise InputError(
            f"{path}: fio format {fmt.name!r} reads a {type(fio).__name__}, not a fio result "
            "(FioJson): ssdlab import takes results of plug-in fio formats"
        )
    return fio_rows(fio)


__all__ = ["FIO_HIST_LOG", "FIO_JSON", "FIO_LOG", "Probe", "Recognise", "sniff"]


def _smart_capture(path: str, raw: bytes) -> str | None:
    """Why a file that is a SMART capture is skipped here, or None for another file."""
    fmt = sniffed(Probe.of_bytes(path, raw), FORMATS.all("SMART"))
    return (
        f"a SMART capture ({fmt.name}), not fio output: import it with ssdlab smart import"
        if fmt
        else None
    )


def _why_not(head: bytes) -> str:
    if not head.strip():
        return "empty file"
    if b"\0" in head:
        return "binary file, not fio output"
    if b"(groupid=" in head or re.search(rb"^fio-\d", head, re.MULTILINE):
        return "fio normal-format text; import reads JSON (--output-format=json or json+) and logs"
    if _is_job_file(head):
        return "fio job file (INI), not a result: run it with fio --output-format=json"
    if head.lstrip()[:1] in (b"{", b"["):
        return 'JSON that is not fio output (no "fio version")'
    return "not fio output (no fio JSON result or log rows)"


_SECTION = re.compile(rb"\[[^\[\]\"'{},:]+\]")
_OPTION = re.compile(rb"[A-Za-z_][\w-]*\s*(=.*)?|include\s.*")


def _is_job_file(head: bytes) -> bool:
    """Whether ``head`` reads as a fio job file: ``[section]`` headers and ``option[=value]``
    lines (``;``/``#`` comments and blank lines aside), a header first and an option line
    among them (JSON such as ``[1]`` has none)."""
    whole = head if head.endswith(b"\n") else head.rpartition(b"\n")[0] or head  # cut: dropped
    lines = [line.strip() for line in whole.splitlines()]
    lines = [line for line in lines if line and line[:1] not in (b";", b"#")]
    if not lines or not _SECTION.fullmatch(lines[0]):
        return False
    options = [line for line in lines if not _SECTION.fullmatch(line)]
    return bool(options) and all(_OPTION.fullmatch(line) for line in options)


def why_not_fio(path: str, raw: bytes) -> str:
    """Why the file ``path`` (``raw``: its bytes or first bytes) is not fio output, for the
    import summary: what it is, and what to do with it."""
    return _smart_capture(path, raw) or _why_not(raw[:SNIFF_BYTES])
