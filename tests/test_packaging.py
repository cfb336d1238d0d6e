"""What ssdlab ships: environment.yml and pyproject.toml declare the same dependencies; the
LICENSE, CITATION.cff and CHANGELOG agree with pyproject; the wheel ``pip install .`` builds
holds the package, suites, notebooks, templates and LICENSE, and works without the source
tree; the fleet endurance notebook runs with its defaults."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import ROOT

from ssdlab.resources import notebook_path


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


#: the Apache License 2.0 as the ASF publishes it (https://www.apache.org/licenses/LICENSE-2.0.txt)
APACHE_2_MD5 = "3b83ef96387f14655fc854ddc3c6bd57"
#: the keys CFF 1.2.0 allows at the top level of CITATION.cff
CFF_KEYS = {
    "abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
    "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
    "references", "repository", "repository-artifact", "repository-code", "title", "type",
    "url", "version",
}  # fmt: skip


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_license_citation_and_changelog_agree_with_pyproject() -> None:
    project = _project()
    license_text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.md5(license_text).hexdigest() == APACHE_2_MD5
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert set(cff) <= CFF_KEYS
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["message"] and cff["title"] == project["name"]
    assert cff["authors"] == [{"name": "ssdlab developers"}]
    assert (cff["version"], cff["license"]) == (project["version"], project["license"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cff["date-released"])  # a string, as CFF wants
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "[Keep a Changelog](https://keepachangelog.com/" in changelog
    releases = re.findall(r"^## \[([^]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog, re.M)
    assert releases[0] == ("Unreleased", "")
    assert (project["version"], cff["date-released"]) in releases


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip install .`` installs, built from this tree."""
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", out, ROOT]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("ssdlab-*.whl")
    return built


def _shipped(directory: Path) -> set[str]:
    """The files of a source directory a build takes (not the ones .gitignore names)."""
    return {
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.mark.slow
def test_wheel_ships_the_package_suites_notebooks_templates_and_license(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"ssdlab-{_project()['version']}.dist-info"
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "ssdlab = ssdlab.cli:run" in entry_points
    package = {f"ssdlab/{name}" for name in _shipped(ROOT / "ssdlab")}
    assert {"ssdlab/suites/quick.toml", "ssdlab/cli/sql.py"} <= package
    assert package <= names, sorted(package - names)
    share = {f"ssdlab/_share/notebooks/{n}" for n in _shipped(ROOT / "notebooks")}
    share |= {f"ssdlab/_share/templates/{n}" for n in _shipped(ROOT / "templates")}
    assert "ssdlab/_share/notebooks/fleet_endurance.ipynb" in share
    assert share <= names, sorted(share - names)


@pytest.mark.slow
def test_installed_wheel_finds_its_notebooks_templates_and_version(
    wheel: Path, tmp_path: Path
) -> None:
    """Installed (without the source tree), ssdlab finds what its reports need."""
    site = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", site, wheel]
    subprocess.run(install, capture_output=True, check=True, timeout=300)
    code = (
        "import ssdlab, ssdlab.resources as r, ssdlab.suite as s\n"
        "from ssdlab.review import compare, drive, fleet_endurance, index\n"
        "print(ssdlab.__file__, ssdlab.__version__, r.templates_dir() / 'ssdlab')\n"
        "print(*(r.notebook_path(m.SECTIONS.notebook) for m in (compare, drive, "
        "fleet_endurance, index)), r.notebook_path('explore'), s.resolve_suite_path('quick'))\n"
    )
    env = os.environ | {"PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    module, version, templates = first.split()
    assert Path(module).is_relative_to(site) and version == _project()["version"]
    for path in (templates, *second.split()):
        assert Path(path).is_relative_to(site / "ssdlab") and Path(path).exists(), path


@pytest.mark.slow
def test_fleet_endurance_notebook_runs_with_its_defaults(tmp_path: Path) -> None:
    """``papermill fleet_endurance.ipynb out.ipynb`` with no parameters, from any directory:
    the made-up demo fleet, every section drawn."""
    out = tmp_path / "out.ipynb"
    command = [sys.executable, "-m", "papermill", notebook_path("fleet_endurance"), out]
    proc = subprocess.run(
        [*map(str, command), "--no-progress-bar"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    nb = nbformat.read(out, as_version=4)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = json.dumps([o.get("data", {}) for o in outputs])
    assert "7 drives of 2 models" in text and "DEMO A (generated)" in text
