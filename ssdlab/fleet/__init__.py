"""Many hosts at once: fio's client/server mode driven by ssdlab (see :mod:`.run`); several
targets of this machine in one run (:mod:`.targets`)."""

from .aggregate import all_clients
from .hosts import DEFAULT_PORT, Host, parse_host, parse_hosts
from .probe import ServerInfo, check_fleet, probe_servers
from .run import FleetFailed, run_fleet
from .store import Fleet, load_fleet
from .targets import run_targets

__all__ = [
    "DEFAULT_PORT",
    "Fleet",
    "FleetFailed",
    "Host",
    "ServerInfo",
    "all_clients",
    "check_fleet",
    "load_fleet",
    "parse_host",
    "parse_hosts",
    "probe_servers",
    "run_fleet",
    "run_targets",
]
