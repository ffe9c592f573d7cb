"""A manuscript's blocks as MyST: the author's layer of a section page.

Each block of :mod:`book._ext.shared.manuscript` becomes the Markdown the section pages use:
the title once (with the page's label), the boxes as admonitions, headings, lists,
paragraphs whole, each listing an executed cell verbatim with its printed output comments
under it (``listing-printed-output``), each figure line a slot that waits for its drawing.
The only other change to the author's text: ASCII double quotes become “”, and the few
characters Markdown would read as markup are escaped.
"""

import re

from book._ext.shared.manuscript import BOXES, FIGURE_SLOT, PRINTED_OUTPUT

FRONT_MATTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
# The hidden first cell: the package loads TensorFlow without its start-up log, and the
# seeds are fixed, so two builds print the same numbers.
SETUP = """\
```{code-cell} ipython3
:tags: [remove-cell]

import attnbook   # 加载 TensorFlow 时不输出启动日志
attnbook.set_seed(0)
```"""
# The editor's closing note: where to read on (book/_ext/reading/next_section.py).
CLOSING = "::::{editorial}\n:::{next-section}\n:::\n::::"
# Markdown's inline markup, and dollarmath's $: escaped wherever the manuscript has them.
_MARKUP = re.compile(r"([\\`*$<\[\]])")


def curly(text):
    """ASCII double quotes as “…” pairs, in order."""
    parts = text.split('"')
    return "".join(part + ("“" if i % 2 == 0 else "”") for i, part in enumerate(parts[:-1])) + parts[-1]


def inline(text):
    """Author's text as Markdown that shows it unchanged (quotes made curly)."""
    text = _MARKUP.sub(r"\\\1", curly(text))
    return re.sub(r"(?<!\w)_|_(?!\w)", r"\\_", text)


def fence(body, head, tick="```"):
    return f"{tick}{head}\n{body}\n{tick}"


def listing_cell(code):
    return fence(code, "{code-cell} ipython3")


def printed_output(text):
    return fence(f":class: {PRINTED_OUTPUT}\n\n{text}", "{code-block} python")


def block(b, label=""):
    """The Markdown of one manuscript block (a listing: its cell and its printed outputs)."""
    if b.kind == "title":
        return (f"({label})=\n" if label else "") + f"# {b.label} {curly(b.text)}"
    if b.kind == "heading":
        return f"## {inline(b.text)}"
    if b.kind == "paragraph":
        return inline(b.text)
    if b.kind == "box":
        css = next(css for style, css in BOXES.values() if style == b.style)
        return f":::{{admonition}} {b.label}\n:class: {css}\n\n{inline(b.text)}\n:::"
    if b.kind == "list":
        marks = [f"{i}." for i in range(1, len(b.items) + 1)] if b.style == "numbered" else ["-"] * len(b.items)
        return "\n".join(f"{mark} {inline(item)}" for mark, item in zip(marks, b.items))
    if b.kind == "listing":
        return "\n\n".join([listing_cell(b.runnable), *map(printed_output, b.outputs)])
    if b.kind == "figure":
        return f":::{{{FIGURE_SLOT}}} 图 {b.label} {b.text}\n:::"
    raise ValueError(f"unknown block kind {b.kind!r}")


def page(manuscript, label):
    """A new section page: front matter, the title, the hidden set-up cell, every block, and
    the editor's closing pointer to the next section the site has."""
    title, *body = manuscript.blocks
    parts = [FRONT_MATTER.rstrip("\n"), block(title, label), SETUP, *(block(b) for b in body), CLOSING]
    return "\n\n".join(parts) + "\n"
