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
VEGA5_MIME = "application/vnd.vega.v5+json"
#: the Vega-Lite compiler whose Vega output JupyterLab's vega 5 renderer draws
JUPYTERLAB_VEGALITE = "5.21"


@cache
def vegalite_version() -> str | None:
    """The Vega-Lite ``major.minor`` altair targets if vl-convert bundles it, else None (latest)."""
    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return version if version in vlc.get_vegalite_versions() else None


def chart_title(spec: dict[str, Any]) -> str | None:
    """The title of a Vega-Lite spec as plain text, if it has one."""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    return str(title) if title else None


def _plain_text(spec: dict[str, Any]) -> str:
    title = chart_title(spec)
    return f"Vega-Lite chart: {title}" if title else "Vega-Lite chart"


def render(spec: dict[str, Any], **_options: Any) -> dict[str, Any]:
    """Mimebundle for one chart: Vega-Lite spec, static SVG and text."""
    return {
        VEGALITE_MIME: spec,
        "image/svg+xml": vlc.vegalite_to_svg(spec, vl_version=vegalite_version()),
        "text/plain": _plain_text(spec),
    }


def render_jupyterlab(spec: dict[str, Any], **options: Any) -> dict[str, Any]:
    """:func:`render` plus the chart compiled to a Vega 5 spec, which JupyterLab 4 draws
    interactively with its own bundled vega (it knows Vega-Lite only up to v5)."""
    vega = vlc.vegalite_to_vega(spec, vl_version=JUPYTERLAB_VEGALITE)
    return render(spec, **options) | {VEGA5_MIME: vega}


def enable(*, jupyterlab: bool = False) -> None:
    """Register the ``ssdlab`` altair renderer and make it the active one; ``jupyterlab``
    adds the Vega 5 output JupyterLab draws live (offline, no widget extension needed)."""
    alt.renderers.register(NAME, render_jupyterlab if jupyterlab else render)
    alt.renderers.enable(NAME)
