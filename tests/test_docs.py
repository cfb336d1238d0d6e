"""The README stays a short first hour and the reference in docs/ stays whole: links resolve,
the quick start is the two make commands, every benchmark and every CLI command is documented."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from ssdlab.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: the README is a first hour, not the reference (it was 46 KB on one page)
README_MAX_BYTES = 8 * 1024
#: a Markdown link or image: [text](target) / ![alt](target)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    prose = FENCE.sub("", page.read_text())
    return {_anchor(m) for m in re.findall(r"^#+ (.+)$", prose, re.MULTILINE)}


def _links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text()))


def _section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no '## {heading}' section"
    return match.group(1)


def test_readme_is_short() -> None:
    size = README.stat().st_size
    assert size < README_MAX_BYTES, f"README.md is {size:,} bytes; move reference into docs/"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link names an existing file, and its #anchor a heading there."""
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.name}")
    assert not broken, broken


def test_every_docs_page_is_linked_from_the_index_and_the_readme() -> None:
    index = {(DOCS / link.partition("#")[0]).resolve() for link in _links(DOCS / "README.md")}
    readme = {(ROOT / link.partition("#")[0]).resolve() for link in _links(README)}
    pages = {p.resolve() for p in DOCS.glob("*.md")} - {(DOCS / "README.md").resolve()}
    assert pages - index == set(), "not in docs/README.md"
    assert (pages | {(DOCS / "README.md").resolve()}) - readme == set(), "not linked from README"


def test_quick_start_is_make_demo_and_make_test() -> None:
    quick = _section(README.read_text(), "Quick start")
    block = re.search(r"```sh\n(.*?)```", quick, re.S)
    assert block, "the quick start has no sh block"
    assert block.group(1).split("\n")[:-1] == ["make demo", "make test"]


def test_readme_lists_the_test_command_and_every_benchmark() -> None:
    development = _section(README.read_text(), "Development")
    assert re.search(r"^make test\b", development, re.M), "the test command CI runs"
    missing = [
        p.name
        for p in sorted((ROOT / "benchmarks").glob("bench_*.py"))
        if p.name not in development
    ]
    assert not missing, f"benchmarks not listed in the README's Development section: {missing}"


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Every command path of the CLI as ``ssdlab --help`` shows it: ``run``, ``act score``..."""
    found = [" ".join(path)] if path else []
    for name, sub in getattr(command, "commands", {}).items():  # a group's commands
        if not sub.hidden:
            found += _commands(sub, (*path, name))
    return found


def test_every_cli_command_is_documented() -> None:
    commands = _commands(typer.main.get_command(app))
    assert {"run", "report", "lab", "sql", "act score", "smart report"} <= set(commands)
    docs = "\n".join(p.read_text() for p in DOCS.glob("*.md"))
    missing = [c for c in commands if not re.search(rf"\bssdlab {re.escape(c)}\b", docs)]
    assert not missing, f"commands of 'ssdlab --help' documented nowhere in docs/: {missing}"
