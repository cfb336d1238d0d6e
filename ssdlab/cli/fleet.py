"""Fleet commands: check the fio servers a multi-host run will drive."""

from __future__ import annotations

from typing import Annotated

import typer

from ..console import plural, stdout_console
from ..errors import SsdlabError
from . import app

fleet_app = typer.Typer(
    help="Many hosts at once through fio's client/server mode (fio --server on each host).",
    no_args_is_help=True,
)
app.add_typer(fleet_app, name="fleet")


@fleet_app.command("check")
def check(
    hosts: Annotated[
        str,
        typer.Argument(help="HOST[:PORT][=TARGET],... or a hosts file (one host per line)."),
    ],
    timeout: Annotated[float, typer.Option(help="Seconds to wait for every server.")] = 10.0,
) -> None:
    """Check that every fio server answers and report its fio version; refuse a fleet whose
    fio major versions differ."""
    from rich.table import Table

    from ..fleet import check_fleet, parse_hosts
    from ..fleet.probe import version_mismatch

    infos, client = check_fleet(parse_hosts(hosts), timeout_s=timeout)
    table = Table(header_style="bold", title=f"fio servers (this host: {client})")
    for column in ("Server", "Hostname", "OS", "Arch", "fio", "Status"):
        table.add_column(column)
    for info in infos:
        table.add_row(
            info.server,
            info.hostname or "-",
            info.os or "-",
            info.arch or "-",
            info.fio_version or "-",
            info.error or "ok",
        )
    stdout_console().print(table)
    down = [i for i in infos if i.error]
    if down:
        listing = "; ".join(f"{i.server}: {i.error}" for i in down)
        raise SsdlabError(
            f"{len(down)} of {plural(len(infos), 'fio server')} did not answer ({listing})"
        )
    mismatch = version_mismatch(infos, client)
    if mismatch:
        raise SsdlabError(mismatch)
