"""Load reports in the system's headless Chromium with the network cut off.

Chromium is found through ``SSDLAB_CHROMIUM``, then ``chromium``, ``chromium-browser`` and
``google-chrome`` on PATH. Each call starts a fresh browser with a temporary profile, a host
resolver that resolves nothing and a proxy that accepts no connection, so a page can only see
what it carries itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ReportError
from ._files import replacing

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
BASE_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",  # the discard port: nothing listens, every request fails
    "--proxy-bypass-list=<-loopback>",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)
RENDER_BUDGET_MS = 10_000  # virtual time the page gets to run its scripts (charts) before output
TIMEOUT_S = 60.0
MAX_HEIGHT = 16_384
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "chrome-extension:", "devtools:")


def find_chromium() -> str:
    """Path of the Chromium executable to use."""
    if override := os.environ.get("SSDLAB_CHROMIUM"):
        found = shutil.which(override)
        if not found:
            raise ReportError(f"SSDLAB_CHROMIUM={override!r} is not an executable")
        return found
    for name in CANDIDATES:
        if found := shutil.which(name):
            return found
    raise ReportError(
        "Chromium not found: install it (Debian/Ubuntu: apt-get install chromium) "
        "or set SSDLAB_CHROMIUM to the browser's executable"
    )


@contextlib.contextmanager
def _profile() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="ssdlab-chromium-") as tmp:
        yield Path(tmp)


def _run(args: list[str], profile: Path, *, timeout_s: float, what: str) -> str:
    """Run Chromium in its own process group; kill the whole group on timeout."""
    cmd = [find_chromium(), *BASE_FLAGS, f"--user-data-dir={profile / 'profile'}", *args]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ReportError(f"Chromium did not finish {what} within {timeout_s:g} s") from None
    if proc.returncode != 0:
        tail = "\n".join(err.strip().splitlines()[-5:])
        raise ReportError(f"Chromium failed {what} (exit {proc.returncode}): {tail}")
    return out


def _url(html_path: Path | str) -> str:
    path = Path(html_path)
    if not path.is_file():
        raise ReportError(f"no such HTML file: {path}")
    return path.resolve().as_uri()


def dump_dom(html_path: Path | str, *, timeout_s: float = TIMEOUT_S) -> str:
    """The page's DOM after its scripts (chart drawing included) have run."""
    url = _url(html_path)
    with _profile() as profile:
        args = [f"--virtual-time-budget={RENDER_BUDGET_MS}", "--dump-dom", url]
        dom = _run(args, profile, timeout_s=timeout_s, what=f"loading {url}")
    if not dom.strip():
        raise ReportError(f"Chromium returned an empty DOM for {url}")
    return dom


def _page_height(url: str, width: int, profile: Path, timeout_s: float) -> int:
    """Height of the rendered page at ``width``: a one-line wrapper page measures it."""
    probe = profile / "measure.html"
    probe.write_text(
        "<!DOCTYPE html><body style='margin:0'>"
        f"<iframe id='f' src='{url}' style='border:0;width:{width}px;height:100px'></iframe>"
        "<script>onload = () => { const d = document.getElementById('f').contentDocument;"
        " setTimeout(() => { document.body.dataset.height ="
        " d.documentElement.scrollHeight; }, 2000); };</script></body>"
    )
    args = [f"--virtual-time-budget={RENDER_BUDGET_MS}", "--allow-file-access-from-files"]
    dom = _run(
        [*args, "--dump-dom", probe.as_uri()], profile, timeout_s=timeout_s, what="measuring"
    )
    marker = 'data-height="'
    start = dom.find(marker)
    if start < 0:
        raise ReportError(f"could not measure the height of {url}")
    end = dom.index('"', start + len(marker))
    return min(MAX_HEIGHT, int(dom[start + len(marker) : end]))


def screenshot(
    html_path: Path | str,
    png_path: Path | str,
    width: int = 1280,
    height: int | None = None,
    *,
    timeout_s: float = TIMEOUT_S,
) -> Path:
    """Write a PNG of the rendered page; ``height=None`` captures the whole page."""
    url, png_path = _url(html_path), Path(png_path)
    with _profile() as profile, replacing(png_path) as tmp:
        if height is None:
            height = _page_height(url, width, profile, timeout_s)
        args = [
            f"--window-size={width},{height}",
            f"--virtual-time-budget={RENDER_BUDGET_MS}",
            f"--screenshot={tmp}",
            url,
        ]
        _run(args, profile, timeout_s=timeout_s, what=f"taking a screenshot of {url}")
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise ReportError(f"Chromium wrote no screenshot of {url}")
    return png_path


def print_pdf(html_path: Path | str, pdf_path: Path | str, *, timeout_s: float = TIMEOUT_S) -> Path:
    """Print the rendered page to PDF (the page's print CSS, no browser header or footer)."""
    url, pdf_path = _url(html_path), Path(pdf_path)
    with _profile() as profile, replacing(pdf_path) as tmp:
        args = [
            f"--virtual-time-budget={RENDER_BUDGET_MS}",
            "--run-all-compositor-stages-before-draw",
            "--no-pdf-header-footer",
            f"--print-to-pdf={tmp}",
            url,
        ]
        _run(args, profile, timeout_s=timeout_s, what=f"printing {url} to PDF")
        if not tmp.is_file() or not tmp.read_bytes().startswith(b"%PDF"):
            raise ReportError(f"Chromium wrote no PDF of {url}")
    return pdf_path


def _load_net_log(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # a log cut short lacks its closing brackets
        return json.loads(text.rstrip().rstrip(",") + "]}")


def _from_page(params: dict[str, Any]) -> bool:
    """Whether a request came from the loaded file page, not from the browser itself."""
    initiator = str(params.get("initiator", ""))
    isolation_key = str(params.get("network_isolation_key", ""))
    return initiator == "null" or initiator.startswith("file:") or isolation_key.startswith("file:")


def network_requests(html_path: Path | str, *, timeout_s: float = TIMEOUT_S) -> list[str]:
    """URLs the page tried to fetch from the network while loading and drawing (in order).

    Requests of the browser itself (updates, time sync) and local schemes (file, data, blob,
    about, chrome) are left out. Every request fails, so this lists attempts.
    """
    url = _url(html_path)
    with _profile() as profile:
        log_path = profile / "netlog.json"
        args = [
            f"--log-net-log={log_path}",
            f"--virtual-time-budget={RENDER_BUDGET_MS}",
            "--dump-dom",
            url,
        ]
        _run(args, profile, timeout_s=timeout_s, what=f"loading {url}")
        if not log_path.is_file():
            raise ReportError("Chromium wrote no network log")
        log = _load_net_log(log_path)
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls: list[str] = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        requested = params.get("url")
        if event.get("type") != start_job or not requested or not _from_page(params):
            continue
        if not requested.startswith(LOCAL_SCHEMES) and requested not in urls:
            urls.append(requested)
    return urls


#: what :func:`layout_problems` runs in each page: text that overflows its box, tables wider
#: than the page outside a scroll container, charts drawn without a data mark, and sections
#: (h2) that show nothing
LAYOUT_CHECK = r"""
function ssdlabLayout(doc) {
  const win = doc.defaultView,
    out = {overflows: [], wide: [], scrolled: [], empty: [], sections: []};
  const page = doc.documentElement.clientWidth;
  const scrolls = (el) => ["auto", "scroll"].includes(win.getComputedStyle(el).overflowX);
  const inScroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) if (scrolls(p)) return p;
    return null;
  };
  const name = (el) => el.tagName.toLowerCase() +
    (el.className && el.className.baseVal === undefined
    ? "." + String(el.className).trim().split(/\s+/).join(".") : "");
  const full = (el) => (el.textContent || "").trim().replace(/\s+/g, " ");
  const text = (el) => full(el).slice(0, 80);
  if (doc.documentElement.scrollWidth > page + 1)
    out.overflows.push({element: "html", text: "page wider than the window",
                        scroll: doc.documentElement.scrollWidth, client: page});
  for (const el of doc.querySelectorAll(".ssdlab-page *")) {
    if (el.closest("svg, script, style")) continue;
    const style = win.getComputedStyle(el);
    if (["inline", "none", "contents"].includes(style.display) || scrolls(el)) continue;
    if (el.tagName === "TABLE" || el.closest("table")) continue;  // tables: checked below
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
      out.overflows.push({element: name(el), text: text(el), scroll: el.scrollWidth,
                          client: el.clientWidth});
  }
  for (const table of doc.querySelectorAll(".ssdlab-main table")) {
    const box = table.getBoundingClientRect(), scroller = inScroller(table);
    if (scroller && table.scrollWidth > scroller.clientWidth + 1)
      out.scrolled.push({text: text(table), width: Math.round(box.width),
                         box: scroller.clientWidth});
    else if (!scroller && (box.right > page + 1 || box.left < -1))
      out.wide.push({text: text(table), width: Math.round(box.width), page: page});
  }
  for (const svg of doc.querySelectorAll(".ssdlab-main .ssdlab-chart svg.marks"))
    if (!svg.querySelector("g.role-mark > *"))  // Vega draws data marks in role-mark groups
      out.empty.push({text: text(svg.querySelector(".role-title") || svg)});
  let current = null;
  const shown = ".ssdlab-main :is(h2, .ssdlab-missing, .ssdlab-findings li, " +
    ".ssdlab-chart svg.marks, .ssdlab-chart img, table tbody tr)";
  for (const el of doc.querySelectorAll(shown)) {
    if (el.tagName === "H2") {
      current = {heading: text(el).replace(/¶$/, ""), content: [], missing: []};
      out.sections.push(current);
    } else if (current && el.classList.contains("ssdlab-missing")) {
      current.missing.push(full(el));
    } else if (current) {
      current.content.push(el.tagName.toLowerCase());
    }
  }
  return out;
}
"""


def layout_problems(
    html_paths: list[Path], *, width: int = 1280, timeout_s: float = 240
) -> list[dict[str, Any]]:
    """Load every page in one headless Chromium at ``width`` px (each in a frame of the same
    probe page) after its charts are drawn, and report per page what :data:`LAYOUT_CHECK`
    finds: ``overflows``, ``wide`` tables, ``scrolled`` tables, ``empty`` charts and
    ``sections``."""
    urls = [_url(p) for p in html_paths]
    with _profile() as profile:
        probe = profile / "layout.html"
        frames = "".join(
            f"<iframe src='{url}' style='border:0;width:{width}px;height:900px'></iframe>"
            for url in urls
        )
        probe.write_text(
            "<!DOCTYPE html><meta charset='utf-8'><body style='margin:0'>"
            f"{frames}<pre id='out'></pre><script>{LAYOUT_CHECK}\n"
            "onload = () => setTimeout(() => { const found = [];"
            " for (const f of document.querySelectorAll('iframe'))"
            "   found.push(ssdlabLayout(f.contentDocument));"
            " document.getElementById('out').textContent = JSON.stringify(found); }, 3000);"
            "</script></body>",
            encoding="utf-8",
        )
        args = [
            f"--virtual-time-budget={RENDER_BUDGET_MS * 3}",
            "--allow-file-access-from-files",
            f"--window-size={width + 40},1000",
            "--dump-dom",
            probe.as_uri(),
        ]
        dom = _run(args, profile, timeout_s=timeout_s, what="checking the layout of the pages")
    start = dom.find('<pre id="out">')
    if start < 0:
        raise ReportError("the layout check wrote no result")
    import html as html_lib

    text = dom[start + len('<pre id="out">') : dom.index("</pre>", start)]
    if not text.strip():
        raise ReportError("the layout check did not finish (pages still loading?)")
    return json.loads(html_lib.unescape(text))
