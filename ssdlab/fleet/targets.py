"""Several targets of this machine in one run: ``ssdlab run SUITE --target A --target B``.

Each target gets its own results directory under the run's root, named after its path
(:func:`~ssdlab.fleet.hosts.local_targets`), and the root a ``fleet.json`` listing them, so
reports, comparisons and ``ssdlab.fleet.load_fleet`` read the root as a fleet's. Two ways to
run them:

- ``lockstep`` (default): each step starts on every target together and the next once all
  have finished it, through a fio server per target (:mod:`.local`,
  :func:`~ssdlab.fleet.run.run_fleet`); ``fleet.json`` keeps the fleet-level row of every
  step (the targets' I/Os summed, as fio's ``All clients``).
- ``sequence``: the whole suite on each target in turn, each a local run
  (:func:`ssdlab.runner.run_suite`) with everything a local run has (``--max-spread``
  too); no fleet-level rows, as the targets did not run at the same time.

Either way every target is judged before any is written (a block device must pass the device
safety checks and be named by ``--destroy-data``, comma-separated for several) and locked for
the whole run (:func:`~ssdlab.lock.target_lock`), a target that fails does not stop the
others, and running the same command again resumes each target at its first step that is
not ``ok``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from rich.console import Console

from ..errors import RunInterrupted, SsdlabError
from ..execute import RunHook
from ..lock import target_lock
from ..manifest import Manifest
from ..runner import OnError, check_fits, default_file_size, run_suite
from ..session import guard_run, open_manifest
from ..suite import Suite
from .gate import SuiteOrder
from .hosts import (
    THIS_MACHINE,
    LocalTarget,
    confirmed_name,
    confirmed_names,
    judge_targets,
    local_targets,
)
from .local import local_servers, planned_local
from .run import FleetFailed, failures, run_fleet
from .store import Fleet, fleet_token, load_fleet, member_entry, write_fleet

Mode = Literal["lockstep", "sequence"]


def run_targets(
    suite: Suite,
    paths: Sequence[Path],
    out_root: Path,
    *,
    mode: Mode = "lockstep",
    label: str | None = None,
    target_size: int | None = None,
    destroy_data: str | None = None,
    purge_first: bool = False,
    on_error: OnError = "stop",
    scale: float = 1.0,
    params: Mapping[str, str] | None = None,
    hooks: Callable[[], list[RunHook]] = list,
    console: Console | None = None,
    max_spread_pct: float | None = None,
    max_repeats: int = 10,
) -> Fleet:
    """Run ``suite`` on each of ``paths`` (see the module documentation); ``hooks`` makes the
    hooks of one run (a sequence's each target gets its own). The other arguments are
    :func:`~ssdlab.runner.run_suite`'s; ``label`` is put before each target's path.
    :class:`~ssdlab.fleet.run.FleetFailed` when some targets failed."""
    targets = local_targets(paths)
    if mode == "sequence":
        return _sequence(
            suite,
            targets,
            out_root,
            label=label,
            target_size=target_size,
            destroy_data=destroy_data,
            purge_first=purge_first,
            on_error=on_error,
            scale=scale,
            params=params or {},
            hooks=hooks,
            console=console or Console(stderr=True),
            max_spread_pct=max_spread_pct,
            max_repeats=max_repeats,
        )
    check_mode(mode, max_spread_pct)
    with guard_run(out_root, "lockstep run"), local_servers(targets, out_root) as served:
        return run_fleet(
            suite,
            served,
            out_root,
            label=label,
            target_size=target_size,
            destroy_data=destroy_data,
            on_error=on_error,
            scale=scale,
            params=params,
            hooks=hooks(),
            console=console,
            purge_first=purge_first,
            guarded=True,
        )


def check_mode(mode: Mode, max_spread_pct: float | None) -> None:
    """SsdlabError when ``mode`` cannot run with these options."""
    if mode == "lockstep" and max_spread_pct is not None:
        raise SsdlabError(
            "--max-spread does not apply to targets run in lockstep (use --repeat alone, or "
            "--targets-mode sequence)"
        )


def _label(label: str | None, target: LocalTarget) -> str:
    return f"{label} {target.name}" if label else target.name


def _sequence(
    suite: Suite,
    targets: list[LocalTarget],
    out_root: Path,
    *,
    label: str | None,
    target_size: int | None,
    destroy_data: str | None,
    purge_first: bool,
    on_error: OnError,
    scale: float,
    params: Mapping[str, str],
    hooks: Callable[[], list[RunHook]],
    console: Console,
    max_spread_pct: float | None,
    max_repeats: int,
) -> Fleet:
    """Each target in turn, a local run into its own directory (see the module
    documentation)."""
    with guard_run(out_root, "sequence run"), contextlib.ExitStack() as held:
        token = fleet_token(out_root, suite, targets, "sequence")
        opened = {  # every target's results must belong to this run before anything runs
            t.dir: open_manifest(
                out_root / t.dir, suite, _label(label, t), None, params=params, scale=scale
            )
            for t in targets
        }
        pending = [t for t in targets if opened[t.dir].status != "complete"]
        writes = suite.writes or purge_first
        judged = judge_targets(
            pending,
            token,
            writes=writes,
            destroy_data=destroy_data,
            local={THIS_MACHINE},
            root=out_root,
        )
        for t in pending:  # every target is this run's until the last one is done
            held.enter_context(target_lock(judged[t], writes=writes))
        size = target_size or default_file_size(suite, scale)
        for t in pending:
            check_fits(
                suite, planned_local(judged[t], out_root / t.dir, size_bytes=size, writes=writes)
            )
        confirmed = confirmed_names(destroy_data)
        errors: dict[str, str] = {}

        def manifest(target: LocalTarget) -> Manifest:
            try:
                return Manifest.load(out_root / target.dir)
            except SsdlabError:
                return opened[target.dir]

        def save() -> None:
            entries = [
                member_entry(t, t.name, manifest(t), None, errors.get(t.dir)) for t in targets
            ]
            write_fleet(out_root, suite, SuiteOrder(suite), token, entries, "sequence")

        save()
        try:
            for number, target in enumerate(pending, 1):
                out = out_root / target.dir
                console.print(
                    f"target {number} of {len(pending)}: {target.name} -> {out}",
                    soft_wrap=True,
                    highlight=False,
                    markup=False,
                )
                device = judged[target].device or {}
                try:
                    run_suite(
                        suite,
                        out,
                        target=Path(target.name),
                        target_size=target_size,
                        label=_label(label, target),
                        destroy_data=confirmed_name(
                            device.get("name", ""), device.get("serial"), confirmed
                        )
                        if device
                        else None,
                        purge_first=purge_first,
                        on_error=on_error,
                        scale=scale,
                        params=params,
                        hooks=hooks(),
                        console=console,
                        max_spread_pct=max_spread_pct,
                        max_repeats=max_repeats,
                    )
                except RunInterrupted:
                    raise RunInterrupted(
                        f"interrupted on {target.name}; results so far are in {out_root} (run "
                        "the same command again to continue where it stopped)"
                    ) from None
                except SsdlabError as exc:  # the next target runs all the same
                    errors[target.dir] = str(exc)
                    console.print(f"{target.name}: {exc}", soft_wrap=True, markup=False)
                save()
        finally:
            save()
        failed = [(t, errors[t.dir]) for t in targets if t.dir in errors]
        if failed:
            raise FleetFailed(failures(failed, len(targets), "target", out_root))
    return load_fleet(out_root)
