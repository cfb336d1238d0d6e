"""environment.yml and pyproject.toml declare the same Python dependencies."""

from __future__ import annotations

import re
import tomllib

import yaml
from conftest import ROOT


def _normalise(req: str) -> tuple[str, str]:
    name, spec = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req).groups()
    return re.sub(r"[-_.]+", "-", name).lower(), spec.replace(" ", "")


def test_environment_yml_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normalise(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_normalise(r) for r in extra}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_normalise(d) for d in env["dependencies"] if isinstance(d, str)}
    pip = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    from_pip = {_normalise(r) for reqs in pip for r in reqs if not r.startswith("-e")}
    non_python = {("python", ">=3.11"), ("fio", ""), ("pip", "")}
    assert non_python <= conda, "environment.yml must provide python, conda-forge fio and pip"
    assert (conda - non_python) | from_pip == wanted
    assert project["requires-python"] == ">=3.11"
    assert "conda-forge" in env["channels"]
