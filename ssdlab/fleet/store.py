"""A fleet's root: ``fleet.json`` (its members, the default files' token and the fleet-level
row of every step, see :mod:`ssdlab.fleet.aggregate`) written and read.

The root of a run of several targets of this machine (``ssdlab run --target A --target B``)
has one too: its ``mode`` says how they ran (``lockstep`` or ``sequence``; ``hosts`` for
fio servers), its members are the targets (``port`` null, ``host`` this machine's name), and
a sequence, whose targets did not run at the same time, has no fleet-level rows."""

from __future__ import annotations

import json
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..atomic import write_text_atomic
from ..errors import InputError, SsdlabError
from ..io.text import read_bytes
from ..layout import FLEET_FILE
from ..manifest import Manifest, now
from ..results import load
from ..session import check_out
from ..suite import Suite
from .aggregate import all_clients
from .gate import SuiteOrder
from .hosts import Host, LocalTarget
from .probe import ServerInfo

STEP_KEYS = ["step", "block", "round"]
#: How a root's members ran: on fio servers (``--hosts``), or several targets of this
#: machine with their steps started together (lockstep) or one target after the other
MODES = {
    "hosts": "on fio servers (--hosts)",
    "lockstep": "of several targets in lockstep",
    "sequence": "of several targets in sequence",
}


@dataclass
class Fleet:
    """A loaded fleet root: its members and the fleet-level row of every step."""

    path: Path
    suite: str
    members: pl.DataFrame
    aggregate: pl.DataFrame
    mode: str = "hosts"

    @property
    def results_dirs(self) -> list[Path]:
        """Each host and target's results directory (for reports and comparisons)."""
        return [self.path / d for d in self.members["dir"]]

    def states(self) -> list[tuple[str, Path, str]]:
        """Each member's name (``host:port /target``, or a target of this machine's path),
        results directory and state: ``complete``, or what kept it from completing
        (``failed: ERROR``, ``unreachable: ERROR``, ``interrupted``, ...)."""
        return [
            (_member_name(m), self.path / m["dir"], _state(m))
            for m in self.members.iter_rows(named=True)
        ]


def _state(member: dict[str, Any]) -> str:
    """A stored member's state (see :meth:`Fleet.states`)."""
    status, error = member.get("status") or "unknown", member.get("error")
    if not error:
        return str(status)
    return f"{'unreachable' if status == 'unreachable' else 'failed'}: {error}"


def load_fleet(root: str | Path) -> Fleet:
    """Read ``ROOT/fleet.json``: ``members`` (host, port, target, dir, label, status,
    error, the server's own hostname and fio version) and ``aggregate`` (per step x direction:
    ``clients`` that completed it, fio's All-clients sums, merged latencies, percentiles)."""
    path = Path(root) / FLEET_FILE
    if not path.exists():
        raise InputError(f"{root}: not an ssdlab fleet directory (no {FLEET_FILE})")
    try:
        data = json.loads(read_bytes(path))
        members = pl.DataFrame(data["members"], infer_schema_length=None)
        aggregate = pl.DataFrame(data["aggregate"], infer_schema_length=None)
        suite, mode = data["suite"], data.get("mode", "hosts")
    except (InputError, OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"{path}: unreadable fleet file: {exc}") from None
    return Fleet(Path(root), suite, members, aggregate, mode)


def _fleet_rows(root: Path, dirs: list[str], order: SuiteOrder) -> pl.DataFrame:
    """The fleet-level row of every step x direction over the members' ``ok`` steps, in
    suite order."""
    summaries, hists = [], []
    for name in dirs:
        try:
            results = load(root / name)
        except InputError:
            continue  # nothing completed on that host yet
        summaries.append(results.summary.filter(pl.col("status") == "ok"))
        hists.append(results.latency_hist.filter(pl.col("status") == "ok"))
    if not summaries:
        return pl.DataFrame()
    summary = pl.concat(summaries, how="diagonal_relaxed")
    rows = all_clients(summary, pl.concat(hists, how="diagonal_relaxed"), STEP_KEYS)
    keys = [(order(*r[:3]), r[3]) for r in rows.select(*STEP_KEYS, "direction").iter_rows()]
    return rows[sorted(range(rows.height), key=keys.__getitem__)]


def write_fleet(
    root: Path,
    suite: Suite,
    order: SuiteOrder,
    token: str,
    members: list[dict[str, Any]],
    mode: str = "hosts",
) -> None:
    """``fleet.json``: the members, the default files' token and the fleet-level rows (none
    for a ``sequence``: its members did not run at the same time)."""
    together = mode != "sequence"
    rows = _fleet_rows(root, [m["dir"] for m in members], order) if together else pl.DataFrame()
    data = {
        "format_version": 1,
        "suite": suite.name,
        "mode": mode,
        "updated": now().isoformat(),
        "default_token": token,
        "members": members,
        "aggregate": rows.fill_nan(None).to_dicts() if rows.width else [],
    }
    write_text_atomic(root / FLEET_FILE, json.dumps(data, indent=2) + "\n")


def _member_name(member: dict[str, Any]) -> str:
    """A stored member as :attr:`Host.name` names it (a target of this machine: its path)."""
    if member["port"] is None:
        return str(member["target"])
    return Host(member["host"], member["port"], member["target"]).name


def fleet_token(root: Path, suite: Suite, hosts: Sequence[Host], mode: str = "hosts") -> str:
    """The default files' token of the fleet in ``root``, new for a new fleet; SsdlabError
    when ``root`` holds a single run (:func:`~ssdlab.session.check_out`), or a fleet of
    another suite, hosts or targets, or run in another ``mode``."""
    check_out(root, fleet=True)
    path = root / FLEET_FILE
    if not path.exists():
        return secrets.token_hex(8)
    try:
        data = json.loads(read_bytes(path))
        old_suite, token = data["suite"], data.get("default_token") or secrets.token_hex(8)
        stored = {_member_name(m) for m in data["members"]}
        old_mode = data.get("mode", "hosts")
    except (InputError, OSError, ValueError, KeyError, TypeError) as exc:
        raise SsdlabError(f"{path}: unreadable fleet file: {exc}") from None
    if old_suite != suite.name:
        raise SsdlabError(
            f"{root} holds a fleet run of suite {old_suite!r}: use another --out for {suite.name!r}"
        )
    if old_mode != mode:
        raise SsdlabError(
            f"{root} holds a run {MODES.get(old_mode, old_mode)}, not {MODES[mode]}: run it "
            "the same way to resume it, or use another --out"
        )
    listed = {
        h.name if isinstance(h, LocalTarget) else Host(h.host, h.port, h.target_path(token)).name
        for h in hosts
    }
    differences = [
        f"{what}: {', '.join(sorted(names))}"
        for what, names in (("not listed now", stored - listed), ("new", listed - stored))
        if names
    ]
    if differences:
        raise SsdlabError(
            f"{root} holds a fleet run of other hosts or targets ({'; '.join(differences)}): "
            "list the same hosts and targets to resume it, or use another --out"
        )
    return token


def member_entry(
    host: Host, target: str, manifest: Manifest, info: ServerInfo | None, error: str | None
) -> dict[str, Any]:
    local = isinstance(host, LocalTarget)
    return {
        "host": socket.gethostname() if local else host.host,
        "port": None if local else host.port,
        "target": target,
        "dir": host.dirname,
        "label": manifest.label,
        "status": "unreachable" if info is not None and info.error else manifest.status,
        "error": error,
        "server_hostname": info.hostname if info else None,
        "fio_version": info.fio_version if info else manifest.fio_version or None,
        "steps_ok": sum(s.status == "ok" for s in manifest.steps),
    }
