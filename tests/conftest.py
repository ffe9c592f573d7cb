"""Fixtures shared by the test files.

Markers (pytest.ini) say what a test needs: ``book`` tests read the build in _build/,
``browser`` tests drive Chromium against it, ``pdf`` tests read the printed book. Unmarked tests are the package's unit
tests, which `make check` runs without a build. The helpers that read the build are in
buildfiles.py, the browser plumbing in browsing.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from browsing import CHROMIUM_ARGS, METRICS_FILE, SUB_PATH, Server, Watched, chromium_path, unavailable
from buildfiles import HTML, ROOT

_SESSION_START = time.time()


def pytest_collection_modifyitems(items):
    """The longest tests first, the notebooks (20 s each) before the other slow ones (a
    stable sort): under xdist a long test dealt out last leaves the other worker idle."""
    items.sort(key=lambda item: (item.get_closest_marker("notebooks") is None,
                                 item.get_closest_marker("slow") is None))


@pytest.fixture(autouse=True)
def _needs_build(request):
    """A ``book`` test fails, saying why, when there is no build to read."""
    if request.node.get_closest_marker("book") and not (HTML / "index.html").exists():
        pytest.fail("No build in _build/html: run `make book` (or `make test`, which builds first).")


# --- the browser ------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        unavailable("chromium not installed: apt-get install chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("playwright (Python) not installed: pip install -r requirements.txt")
    return path


@pytest.fixture(scope="session")
def site(chromium) -> Path:
    if not (HTML / "index.html").exists():
        unavailable("no build in _build/html: run `make book` first")
    return HTML


@pytest.fixture(scope="session")
def server(site):
    srv = Server(site, SUB_PATH)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    except Exception as exc:  # noqa: BLE001 - report why, then skip/fail
        pw.stop()
        unavailable(f"chromium at {chromium} did not start under Playwright: {exc}")
    yield b
    b.close()
    pw.stop()


@pytest.fixture
def watch(browser):
    """``watch(**context_options)`` opens a fresh, watched context; all close afterwards."""
    opened = []

    def make(**context_options) -> Watched:
        w = Watched(browser, **context_options)
        opened.append(w)
        return w

    yield make
    for w in opened:
        w.close()


# --- the per-page metrics, printed once at the end (by the controller under xdist) ----


def pytest_terminal_summary(terminalreporter):
    if not METRICS_FILE.exists() or METRICS_FILE.stat().st_mtime < _SESSION_START:
        return
    metrics = json.loads(METRICS_FILE.read_text(encoding="utf-8"))
    tr = terminalreporter
    tr.section("browser metrics (cold cache, served from 127.0.0.1)")
    width = max(len(p) for p in metrics)
    tr.write_line(f"{'page'.ljust(width)}  {'KiB':>8}  {'requests':>8}  {'load ms':>8}")
    for page, m in sorted(metrics.items()):
        tr.write_line(f"{page.ljust(width)}  {m['transfer_bytes'] / 1024:8.1f}  "
                      f"{m['requests']:8d}  {m['load_ms']:8.0f}")
    tr.write_line(f"written to {METRICS_FILE.relative_to(ROOT)}")


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        METRICS_FILE.unlink(missing_ok=True)


@pytest.fixture
def mixed_bfloat16():
    """The reader's global Keras policy: bfloat16 compute, float32 variables; restored after."""
    import keras

    saved = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    yield
    keras.config.set_dtype_policy(saved)
