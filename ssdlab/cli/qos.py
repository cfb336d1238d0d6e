"""QoS commands: judge a run's steps against a profile of per-workload targets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app, stderr

qos_app = typer.Typer(
    help="Judge results against QoS profiles: per-workload latency, throughput and "
    "exceedance targets.",
    no_args_is_help=True,
)
app.add_typer(qos_app, name="qos")


@qos_app.command("check")
def check(
    results_dir: Annotated[Path, typer.Argument(help="Results directory.")],
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="Built-in profile name or a profile file.")
    ],
) -> None:
    """Judge every step matching a target of the profile and print the verdicts; exit 0
    only when every limit passes (1 when one fails or cannot be judged)."""
    from rich.markup import escape

    from ..console import plural, stdout_console
    from ..qos import check as judge_run
    from ..qos import passed
    from ..review.qos import verdict_view
    from ..tables import BEYOND_MARK, BEYOND_NOTE, rich_table

    checked, verdicts = judge_run(results_dir, profile)
    view = verdict_view(verdicts)
    stdout_console().print(rich_table(view, numeric=("Measured",)))
    if view["Measured"].str.contains(BEYOND_MARK, literal=True).any():
        print(BEYOND_NOTE)
    ok = passed(verdicts)
    failed = verdicts.filter(verdicts["verdict"].is_in(["fail", "unknown"])).height
    verdict = "passes" if ok else f"fails ({plural(failed, 'limit')} failed or not judged)"
    stderr().print(escape(f"{results_dir}: {verdict}: QoS profile {checked.name}"), highlight=False)
    raise typer.Exit(0 if ok else 1)


@qos_app.command("profiles")
def profiles() -> None:
    """List the built-in QoS profiles."""
    from ..qos import builtin_profiles, load_profile

    for name in builtin_profiles():
        print(f"{name:12s} {load_profile(name).description}")
