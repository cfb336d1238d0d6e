"""An altair renderer for reports that must work offline.

Each chart becomes a display output holding the Vega-Lite spec (drawn interactively by the
report template), a static SVG made by vl-convert (for viewers without JavaScript) and plain
text. Nothing refers to a CDN.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import altair as alt
import vl_convert as vlc

NAME = "ssdlab"
VEGALITE_MIME = "application/vnd.vegalite.v6+json"


@cache
def vegalite_version() -> str | None:
    """The Vega-Lite ``major.minor`` altair targets if vl-convert bundles it, else None (latest)."""
    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return version if version in vlc.get_vegalite_versions() else None


def _plain_text(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    return f"Vega-Lite chart: {title}" if title else "Vega-Lite chart"


def render(spec: dict[str, Any], **_options: Any) -> dict[str, Any]:
    """Mimebundle for one chart: Vega-Lite spec, static SVG and text."""
    return {
        VEGALITE_MIME: spec,
        "image/svg+xml": vlc.vegalite_to_svg(spec, vl_version=vegalite_version()),
        "text/plain": _plain_text(spec),
    }


def enable() -> None:
    """Register the ``ssdlab`` altair renderer and make it the active one."""
    alt.renderers.register(NAME, render)
    alt.renderers.enable(NAME)
