"""Headless Chromium (Debian's, through Playwright) loads the book and prints it.

The book is served from memory at a made-up origin, with the print's own files (its
fonts, see fonts.py) beside it, and every other URL under it from ``_build/html``, so
stylesheets, fonts, images and the site's scripts load as they do on the site; nothing
leaves the machine. Before printing, the page must be settled, whatever draws its math
and figures: every image decoded, every web font loaded, and no math element still
showing TeX source (a script such as MathJax has typeset it, or the build wrote MathML
and there was nothing to do).
"""

import mimetypes
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

ORIGIN = "http://attention-book.invalid"
DOCUMENT = "attention-book.print.html"
SETTLE_TIMEOUT_MS = 120_000
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# True once every image is decoded and no math element still holds TeX delimiters.
_SETTLED = r"""() => {
  const tex = /^\s*(\\\(|\\\[|\$\$|\\begin\{)/;
  const math = [...document.querySelectorAll(".math")].filter((e) => tex.test(e.textContent));
  const images = [...document.images].filter((i) => !(i.complete && i.naturalWidth > 0));
  return math.length === 0 && images.length === 0;
}"""


def chromium():
    """Debian's chromium: Playwright's own browser download is not available here."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("make pdf needs chromium: apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji")


class Printer:
    """A browser page showing ``document`` (HTML text) with ``site`` (a folder) behind it;
    ``files`` ({path: bytes}) are served at their paths before the site's."""

    def __init__(self, site: Path, document: str, files=None):
        from playwright.sync_api import sync_playwright

        self.site, self.document, self.files = site, document.encode("utf-8"), dict(files or {})
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        context = self._browser.new_context(color_scheme="light", reduced_motion="reduce")
        context.route("**/*", self._serve)
        self.page = context.new_page()

    def _serve(self, route):
        split = urlsplit(route.request.url)
        if f"{split.scheme}://{split.netloc}" != ORIGIN:
            return route.abort()  # the book loads nothing from outside
        path = unquote(split.path).lstrip("/")
        if path == DOCUMENT:
            return route.fulfill(body=self.document, content_type="text/html; charset=utf-8")
        if path in self.files:
            kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
            return route.fulfill(body=self.files[path], content_type=kind)
        file = (self.site / path).resolve()
        if not file.is_relative_to(self.site.resolve()) or not file.is_file():
            return route.fulfill(status=404, body=b"")
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        return route.fulfill(body=file.read_bytes(), content_type=kind)

    def open(self):
        self.page.goto(f"{ORIGIN}/{DOCUMENT}", wait_until="load")
        self.page.wait_for_function(_SETTLED, timeout=SETTLE_TIMEOUT_MS, polling=250)
        self.page.evaluate("document.fonts.ready.then(() => true)")

    def load_fonts(self, families):
        """Load every face of ``families`` (the print's web fonts), whether the page shows
        it yet or not: some text is only laid out when printing, the page numbers for one.
        Stop if a face does not load (Chromium's font sanitizer rejected it, say)."""
        found, failed = self.page.evaluate("""async (families) => {
            const faces = [...document.fonts].filter((f) => families.includes(f.family.replace(/^"|"$/g, "")));
            await Promise.all(faces.map((f) => f.load().catch(() => null)));
            return [faces.length, faces.filter((f) => f.status !== "loaded").map((f) => `${f.family} ${f.weight}`)];
        }""", list(families))
        if not found or failed:
            raise SystemExit(f"the print's fonts did not load: {failed or 'no @font-face rule for ' + str(families)}")

    def fill(self, numbers):
        """Write page numbers into the contents page: {anchor id: page}."""
        self.page.evaluate("""(numbers) => {
            for (const [id, n] of Object.entries(numbers))
              document.querySelector(`[data-for="${CSS.escape(id)}"]`).textContent = n;
        }""", {k: str(v) for k, v in numbers.items()})

    def print(self) -> bytes:
        return self.page.pdf(prefer_css_page_size=True, print_background=True, outline=True, tagged=True)

    def close(self):
        self._browser.close()
        self._pw.stop()
