"""The browser tests' plumbing: the site's server, and a watched Chromium page.

``Server`` runs tools/serve.py in a subprocess under a URL prefix. ``Watched`` is a fresh
browser context and page that records console errors, page errors, failed requests and
every request that would leave 127.0.0.1. Chromium sends those to a proxy that does not
exist (``CHROMIUM_ARGS``), so they fail without leaving the machine; nothing intercepts
the page's own requests, which keeps each page load fast. The pytest fixtures that hand
these out are in conftest.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from buildfiles import HTML, ROOT

SERVE = ROOT / "tools" / "serve.py"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
METRICS_FILE = ARTIFACTS / "metrics.json"
SUB_PATH = "/some/sub-path/"  # deliberately not the published prefix
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Every request for another host goes to a closed local port and fails there (loopback is
# never proxied), so no test can reach the network, whatever the page asks for.
NO_NETWORK = ["--proxy-server=http://127.0.0.1:9"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 *NO_NETWORK]
FONTS_TIMEOUT_MS = 10_000
IDLE_TIMEOUT_MS = 2_000


def unavailable(reason: str):
    """Skip locally; fail on CI, where the browser tests must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser tests must run, not skip)", pytrace=False)
    pytest.skip(f"{reason}; browser tests run on CI")


def chromium_path() -> str | None:
    for candidate in (shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Server:
    """tools/serve.py in a subprocess; .url is the served prefix, ending in '/'."""

    def __init__(self, root: Path, prefix: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVE), str(root), "--port", "0", "--prefix", prefix],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("serving http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"tools/serve.py did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split(" ", 1)[1]
        self.prefix = urlsplit(self.url).path
        self.origin = self.url[: -len(self.prefix)]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


class Watched:
    """A fresh context and page; records console errors, page errors, off-host requests,
    failed requests and HTTP errors."""

    def __init__(self, browser, **context_options):
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.off_host: list[str] = []
        self.failed: list[str] = []
        self.http_errors: list[str] = []
        self.context = browser.new_context(**context_options)
        self.context.on("request", self._request)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        self.page.on("requestfailed", self._request_failed)
        self.page.on("response", self._response)

    def _request(self, request):
        split = urlsplit(request.url)
        if split.scheme in ("http", "https", "ws", "wss") and split.hostname not in LOCAL_HOSTS:
            self.off_host.append(request.url)

    def _console(self, msg):
        if msg.type == "error":
            loc = msg.location or {}
            where = f" ({loc.get('url')}:{loc.get('lineNumber')})" if loc.get("url") else ""
            self.console_errors.append(f"{msg.text}{where}")

    def _request_failed(self, request):
        if request.url not in self.off_host:
            self.failed.append(f"{request.url}: {request.failure}")

    def _response(self, response):
        if response.status >= 400:
            self.http_errors.append(f"{response.status} {response.url}")

    def open(self, url: str, settle: bool = False):
        """Load ``url`` and its fonts. ``settle``: also wait until the network has been
        quiet for half a second, so that late requests are seen too; the tests that
        check every request of a page in its first state do, the others need not."""
        response = self.page.goto(url, wait_until="load")
        if redirects(url):
            # index.html is a meta-refresh page: follow it, then check the page it leads to.
            self.page.wait_for_url(lambda u: u != url, wait_until="load")
        self.wait_for_fonts()
        if settle:
            self.settle()
        return response

    def settle(self, timeout_ms: int = IDLE_TIMEOUT_MS):
        """Wait (at most ``timeout_ms``) until the network has been quiet for half a second."""
        try:
            self.page.wait_for_load_state("networkidle", timeout=timeout_ms)
        except Exception:  # noqa: BLE001 - idle is a courtesy, not a requirement
            pass

    def wait_for_fonts(self) -> bool:
        """Wait until the web fonts the page uses (icons, math) are loaded and laid out."""
        return self.page.evaluate(
            """async (ms) => {
                const timeout = new Promise((resolve) => setTimeout(() => resolve(false), ms));
                return await Promise.race([document.fonts.ready.then(() => true), timeout]);
            }""",
            FONTS_TIMEOUT_MS,
        )

    def problems(self) -> list[str]:
        out = [f"console error: {m}" for m in self.console_errors]
        out += [f"page error: {m}" for m in self.page_errors]
        return out

    def close(self):
        self.context.close()


# Transfer size, requests and load time of what the page has fetched so far.
MEASURE_JS = """() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource');
    const bytes = (nav ? nav.transferSize : 0) + res.reduce((s, r) => s + (r.transferSize || 0), 0);
    return {transfer_bytes: bytes, requests: res.length + (nav ? 1 : 0),
            load_ms: nav ? Math.round(nav.loadEventEnd - nav.startTime) : null,
            urls: res.map((r) => r.name)};
}"""

# Load every image now (lazy ones included), wait for them, and say what came of each.
IMAGES_JS = """async () => {
    const imgs = [...document.images];
    imgs.forEach((img) => { img.loading = 'eager'; });
    window.scrollTo(0, document.documentElement.scrollHeight);
    await Promise.all(imgs.map((img) => img.complete ? null : new Promise((resolve) => {
        img.addEventListener('load', resolve, {once: true});
        img.addEventListener('error', resolve, {once: true});
        setTimeout(resolve, 10000);
    })));
    window.scrollTo(0, 0);
    return imgs.map((img) => ({src: img.currentSrc || img.src, alt: img.alt,
                               complete: img.complete, width: img.naturalWidth}));
}"""


# Text on the page that looks like TeX: a control word, $…$, \( \) or \[ \]. Code is left
# out: an API signature shows a default value as written, a matplotlib label included.
RAW_TEX_JS = r"""() => {
    const skip = 'pre, code, kbd, .highlight, .sig, script, style, textarea';
    const pattern = /\\[A-Za-z]{2,}|\\[()[\]]|\$[^$\s][^$]{0,80}\$/;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const hits = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!el || el.closest(skip)) continue;
        const m = n.textContent.match(pattern);
        if (m) hits.push(`${m[0]} in "${n.textContent.trim().slice(0, 80)}"`);
    }
    return hits;
}"""

def redirects(url: str) -> bool:
    """Whether the built file behind a URL served at SUB_PATH is a meta-refresh page."""
    path = urlsplit(url).path
    if not path.startswith(SUB_PATH):
        return False
    file = HTML / (path[len(SUB_PATH):] or "index.html")
    if not file.is_file():
        return False
    head = file.read_text(encoding="utf-8", errors="replace")[:2000]
    return bool(re.search(r"<meta[^>]+http-equiv=[\"']?refresh", head, re.I))


def prefix_of_404(site: Path) -> str:
    page = site / "404.html"
    if not page.exists():
        pytest.fail("_build/html/404.html does not exist: the site needs a 404 page "
                    "(GitHub Pages serves it for every missing URL)", pytrace=False)
    m = re.search(r'(?:href|src)="(/[^"]*?)_static/', page.read_text(encoding="utf-8"))
    if not m:
        pytest.fail("404.html links its assets relatively (no absolute href=\"/…/_static/\"); "
                    "on a deep missing URL they cannot load", pytrace=False)
    return m.group(1)


def fmt(items) -> str:
    return "\n  " + "\n  ".join(str(i) for i in items) if items else " (none)"



def record_metrics(page: str, metrics: dict, into: Path = METRICS_FILE):
    """Add one page's metrics to ``into`` (METRICS_FILE); safe when several test workers write."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(into.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            old = json.loads(into.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        old[page] = metrics
        into.write_text(json.dumps(dict(sorted(old.items())), ensure_ascii=False, indent=2)
                        + "\n", encoding="utf-8")


def screenshot_problems(png: bytes, width: int, theme: str, images=()) -> list[str]:
    """What a full-page screenshot shows wrong: a width other than the viewport's ``width``
    (the page scrolls sideways), a background (its median grey) of the other ``theme``
    ("light" or "dark"), or an image of ``images`` (what IMAGES_JS returns) not drawn."""
    import io

    import numpy as np
    from PIL import Image

    shot = Image.open(io.BytesIO(png))
    problems = []
    if shot.width != width:
        problems.append(f"{shot.width} px wide, not the viewport's {width}: the page scrolls sideways")
    grey = float(np.median(np.asarray(shot.convert("L"))))
    if (grey < 128) != (theme == "dark"):
        problems.append(f"the background's median grey is {grey:.0f}/255: not the {theme} theme")
    problems += [f"image not drawn: {image['src']}" for image in images
                 if not image["complete"] or image["width"] == 0]
    return problems

