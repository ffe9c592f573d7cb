"""Print the built book as one PDF: _build/html -> _build/pdf/attention-book.pdf.

    python -m tools.pdf          # from the checkout's root, after `make book`; `make pdf` does both

Reads the pages of _toc.yml from _build/html as the last build wrote them (their code
is not run again), prints them in headless Chromium (see tools/pdfbook/) with the Noto
CJK fonts as TrueType subsets of the book's characters (kept in _build/pdf/fonts), and
copies the PDF into _build/html too, so the site can offer it for download.
"""

import shutil
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit


# Run as a module from the checkout's root (python -m puts the working folder on the path),
# so that the colophon imports book._ext.reading.execution, by the name the build gives it,
# and finds the build's execution cache by its key (book/ and tools/ are namespace packages).
from book._ext.shared.sections import Book as Sections
from tools.pdfbook import assemble, colophon, contents, document, fonts, toc
from tools.pdfbook.printing import Printer

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
OUT = BUILD / "pdf" / "attention-book.pdf"
FONT_CACHE = BUILD / "pdf" / "fonts"
PUBLISHED = HTML / OUT.name
MAX_PRINTS = 4


def build_document():
    """The printable HTML, the contents lines (id, title, level) and the print's fonts
    ({face: TrueType bytes})."""
    site = Sections(ROOT)  # the cover's title and byline, as the site's (book/_ext/config/section_list.py)
    book = assemble.Book(HTML, toc.entries(ROOT / "_toc.yml"))
    sections = book.sections()
    items = [(section["id"], title, entry.level) for entry, section, title in sections]
    parts = [document.cover(site.title, site.byline),
             colophon.section(colophon.facts(ROOT, BUILD)),
             contents.section(items), *(str(section) for _, section, _ in sections)]
    subsets = print_fonts(parts, book.assets)
    return document.render(site.title, book.assets, parts, fonts.css(subsets)), items, subsets


def print_fonts(parts, assets):
    """The Noto CJK faces of print.css, cut to the characters the document can show."""
    css = [*assets.styles, document.PRINT_CSS.read_text(encoding="utf-8")]
    for url in assets.stylesheets:
        file = HTML / urlsplit(url).path.lstrip("/")
        if not urlsplit(url).netloc and file.is_file():
            css.append(file.read_text(encoding="utf-8", errors="replace"))
    start, chars = time.monotonic(), fonts.characters(parts, css)
    subsets = fonts.subsets(fonts.faces(), chars, FONT_CACHE)
    print(f"fonts: {len(subsets)} Noto CJK faces as TrueType subsets of {len(chars)} characters "
          f"in {time.monotonic() - start:.0f} s (kept in {FONT_CACHE.relative_to(ROOT)})")
    return subsets


def print_book(html, items, subsets):
    """Print until the contents page's numbers are those of the print; return the PDF."""
    printer = Printer(HTML, html, {face.url: data for face, data in subsets.items()})
    try:
        printer.open()
        printer.load_fonts({face.family for face in subsets})
        pdf, numbers = None, {}
        for _ in range(MAX_PRINTS):
            printer.fill(numbers)
            pdf = printer.print()
            found = contents.page_numbers(pdf, items)
            if found == numbers:
                return pdf
            numbers = found
        raise SystemExit(f"the contents page did not settle after {MAX_PRINTS} prints")
    finally:
        printer.close()


def main():
    if not (HTML / "index.html").is_file():
        sys.exit("no build in _build/html: run `make book` first")
    start = time.monotonic()
    html, items, subsets = build_document()
    pdf = print_book(html, items, subsets)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(pdf)
    shutil.copy2(OUT, PUBLISHED)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(pdf) / 1e6:.1f} MB) in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
