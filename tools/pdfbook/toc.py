"""The pages of ``_toc.yml`` in reading order, each with its level in the outline.

The root page is at level 1. A part's caption is a level-1 heading of its own, its
chapters are at level 2 and their sections at level 3; chapters outside any part are
at level 1. Only the Jupyter Book 1 ``jb-book`` layout is read.
"""

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Entry:
    """One line of the table of contents: a page ("book/ch04/attention") or a part caption."""

    level: int
    docname: str = ""
    caption: str = ""

    @property
    def is_part(self):
        return not self.docname


def entries(toc_file):
    """Every part caption and page of the table of contents, in reading order."""
    toc = yaml.safe_load(Path(toc_file).read_text(encoding="utf-8"))
    out = [Entry(1, docname=_docname(toc["root"]))]
    for part in toc.get("parts", []):
        if part.get("caption"):
            out.append(Entry(1, caption=part["caption"]))
        out += _pages(part.get("chapters", []), level=2 if part.get("caption") else 1)
    out += _pages(toc.get("chapters", []), level=1)
    return out


def _pages(items, level):
    out = []
    for item in items:
        if "file" in item:
            out.append(Entry(level, docname=_docname(item["file"])))
        out += _pages(item.get("sections", []), level + 1)
    return out


def _docname(file):
    """'book/ch04/attention.md' or 'book/ch04/attention' -> 'book/ch04/attention'."""
    return str(Path(file).with_suffix("")) if Path(file).suffix in (".md", ".ipynb") else file
