"""The manuscripts of the book's sections, read as the tests compare them with the pages.

The sections come from the section list (``book._ext.shared.sections``: a manuscript whose
page the toc lists), each manuscript parsed by ``book._ext.shared.manuscript``, the same
reader `make page` and the build use. Tests that hold every section to its manuscript
parametrize over :data:`SECTIONS`.
"""

import re

from book._ext.shared.sections import Book
from buildfiles import ROOT

BOOK = Book(ROOT)
SECTIONS = BOOK.sections


def ids(sections=SECTIONS):
    """Test ids for a parametrization over sections: their numbers."""
    return [section.number for section in sections]


def normalize(value):
    """Text compared across a manuscript and a page: no whitespace, no quote marks, no list
    bullets (the manuscript's ASCII quotes became “” on the page)."""
    return re.sub(r"[\s\"“”•]", "", value)


def prose_sentences(section, min_chars=8):
    """Every sentence of a section's prose, normalized: the text up to each 。！？ (headings
    and other lines without one are not sentences; a box's title is the page's)."""
    sentences = []
    for block in section.text.prose:
        for part in re.split(r"(?<=[。！？])|\n", block):
            part = normalize(part)
            if len(part) >= min_chars and part[-1] in "。！？":
                sentences.append(part)
    return sentences


def all_texts():
    """Every section's manuscript as the author wrote it."""
    return [section.text.source for section in SECTIONS]


def layer_class():
    """The class of 4.5's second listing (``class MiniMultiHeadAttention`` … ``return
    self.wo(out)``), without the three lines that use it: what its page shows from the
    manuscript (and runs from ``attnbook.minimal``)."""
    listing = next(b.runnable for b in BOOK.section("4.5").text.listings
                   if b.text.startswith("class MiniMultiHeadAttention"))
    return listing.split("\n\nattn = ")[0].strip()
