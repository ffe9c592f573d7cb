"""The contents page, with the page number of every part and page of the book.

Chromium cannot number a contents page as it prints (CSS ``target-counter`` is not
supported), so the book is printed twice: the first print's outline (bookmarks)
gives the page on which each heading landed, those numbers are written into the
contents page, and the book is printed again. The numbers take the same room every
time, so the second print puts every heading on the same page as the first; the
caller prints until the numbers agree.
"""

import html
import io
import re

from pypdf import PdfReader

PLACEHOLDER = "000"


def section(items):
    """The contents page as HTML; ``items`` are (id, title, level), level 1 or deeper."""
    lines = "".join(
        f'<li class="pdf-toc-level-{level}"><a href="#{html.escape(anchor)}">'
        f'<span class="pdf-toc-title">{html.escape(title)}</span>'
        f'<span class="pdf-toc-page" data-for="{html.escape(anchor)}">{PLACEHOLDER}</span></a></li>'
        for anchor, title, level in items)
    return f'<section class="pdf-contents" id="pdf-contents"><h1>目录</h1><ul class="pdf-toc">{lines}</ul></section>'


def outline(pdf_bytes):
    """Every outline entry of a PDF as (title, 1-based page), depth first, in order."""
    reader = PdfReader(io.BytesIO(pdf_bytes))
    out = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                out.append((_plain(item.title), reader.get_destination_page_number(item) + 1))

    walk(reader.outline)
    return out


def page_numbers(pdf_bytes, items):
    """{id: page} for the contents ``items``, matched in order against the PDF's outline."""
    entries = outline(pdf_bytes)
    numbers, start = {}, 0
    for anchor, title, _ in items:
        for i in range(start, len(entries)):
            if entries[i][0] == _plain(title):
                numbers[anchor], start = entries[i][1], i + 1
                break
        else:
            raise ValueError(f"no outline entry for the contents line {title!r} (outline: {entries})")
    return numbers


def _plain(text):
    return re.sub(r"\s+", " ", text).strip()
