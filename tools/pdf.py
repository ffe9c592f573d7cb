#!/usr/bin/env python3
"""Print the built book as one PDF: _build/html -> _build/pdf/attention-book.pdf.

    python tools/pdf.py          # after `make book`; `make pdf` does both

Reads the pages of _toc.yml from _build/html as the last build wrote them (their code
is not run again), prints them in headless Chromium (see tools/pdfbook/), and copies
the PDF into _build/html too, so the site can offer it for download.
"""

import shutil
import sys
import time
from pathlib import Path

import yaml

from pdfbook import assemble, colophon, contents, document, toc
from pdfbook.printing import Printer

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
OUT = BUILD / "pdf" / "attention-book.pdf"
PUBLISHED = HTML / OUT.name
MAX_PRINTS = 4


def build_document():
    """The printable HTML and the contents lines (id, title, level)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    book = assemble.Book(HTML, toc.entries(ROOT / "_toc.yml"))
    sections = book.sections()
    items = [(section["id"], title, entry.level) for entry, section, title in sections]
    parts = [document.cover(config["title"], config["author"]),
             colophon.section(colophon.facts(ROOT, BUILD)),
             contents.section(items), *(str(section) for _, section, _ in sections)]
    return document.render(config["title"], book.assets, parts), items


def print_book(html, items):
    """Print until the contents page's numbers are those of the print; return the PDF."""
    printer = Printer(HTML, html)
    try:
        printer.open()
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
    html, items = build_document()
    pdf = print_book(html, items)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(pdf)
    shutil.copy2(OUT, PUBLISHED)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(pdf) / 1e6:.1f} MB) in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
