"""The checks every report page must pass in Chromium at 1280 px, on what
:func:`ssdlab.report.chromium.layout_problems` found in it: no text overflows its box, no
table is wider than the page outside a scroll container, no chart is drawn without data, and
every section shows something or says in one sentence why it cannot."""

from __future__ import annotations

import re
from typing import Any

Page = dict[str, Any]
#: where one sentence ends and another begins: a full stop (not an ellipsis), a capital
_NEXT_SENTENCE = re.compile(r"(?<!\.)\.\s+[A-Z]")


def assert_fits(page: Page) -> None:
    """No text overflows its box and no table sticks out of the page."""
    assert page["overflows"] == [], page["overflows"]
    assert page["wide"] == [], page["wide"]


def assert_sections_explained(page: Page) -> None:
    """Every section has content or one sentence (ending with a full stop) saying why not,
    and every chart draws data."""
    assert page["empty"] == [], page["empty"]
    sections = page["sections"]
    assert sections, "no section"
    for section in sections:
        name, content, missing = section["heading"], section["content"], section["missing"]
        assert content or missing, f"{name}: empty"
        for sentence in missing:
            assert sentence.endswith(".") and not _NEXT_SENTENCE.search(sentence), (name, sentence)


def shown(page: Page) -> dict[str, Page]:
    """The page's sections by heading."""
    return {s["heading"]: s for s in page["sections"]}


def assert_shows(page: Page, headings: list[str]) -> None:
    """These sections show content (a chart or a table row) and no missing-data note."""
    sections = shown(page)
    for heading in headings:
        section = sections[heading]
        drawn = {"svg", "tr"} & set(section["content"])
        assert drawn and not section["missing"], (heading, section)
