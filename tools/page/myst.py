"""A section page read back as blocks, and its author's layer as units a manuscript can be matched with.

:func:`split` cuts a MyST page into top-level blocks (front matter, headings, fenced
directives and cells, lists, paragraphs), each with the blank lines after it, so that
``join(split(text)) == text``. :func:`author_units` picks the author's layer out of them:

* headings, paragraphs, lists, and the ``admonition`` boxes;
* a **listing**: the code cells that are not the editor's (no ``editorial`` or
  ``remove-cell`` tag, no figure) and the ``literalinclude`` of a manuscript, with the
  ``listing-printed-output`` blocks after them. Parts of one listing that the editor split
  (the 4.5 class shown from the manuscript, its last three lines run in a cell) are one
  unit: two manuscript listings always have the author's prose between them;
* a **figure**: a ``manuscript-figure`` slot, or the cell that draws it (a figure cell
  that is not the editor's).

Everything else (``{editorial}`` blocks, the editor's cells, hidden cells) is the editor's
and only ever moves with the text around it.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from book._ext.shared.manuscript import FIGURE_SLOT, PRINTED_OUTPUT
from tools.page import render

_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}\s*(?P<argument>.*)$")
_LABEL = re.compile(r"^\([\w.:-]+\)=$")
_HEADING = re.compile(r"^#{1,6} ")
_LIST = re.compile(r"^(\d+\.|-) ")


@dataclass
class Block:
    """One top-level block: its text (labels above it included) and the blank lines after it."""

    text: str
    gap: str = "\n"

    @property
    def lines(self):
        return self.text.split("\n")

    @property
    def body_lines(self):
        """The lines after any ``(label)=`` lines."""
        lines = self.lines
        while lines and _LABEL.match(lines[0]):
            lines = lines[1:]
        return lines

    @property
    def fence(self):
        """``(name, argument)`` of a fenced directive or cell, else None."""
        m = _FENCE.match(self.body_lines[0])
        return (m["name"], m["argument"].strip()) if m else None

    @property
    def options(self):
        """A fenced block's options (``:key: value`` lines or a ``---`` YAML block)."""
        return _options(self.body_lines[1:-1])[0]

    @property
    def body(self):
        """A fenced block's content, after its options."""
        return "\n".join(_options(self.body_lines[1:-1])[1])

    def with_body(self, body):
        """The same fenced block (labels, fence, options) around another content."""
        lines = self.body_lines
        labels = self.lines[:len(self.lines) - len(lines)]
        head = _options(lines[1:-1])[2]
        return Block("\n".join([*labels, lines[0], *head, *body.split("\n"), lines[-1]]), self.gap)


def _options(inner):
    """``(options, content lines, head lines)`` of a fenced block's inner lines."""
    if inner and inner[0] == "---":
        end = inner.index("---", 1)
        head, rest = inner[:end + 1], inner[end + 1:]
        options = yaml.safe_load("\n".join(inner[1:end])) or {}
    else:
        count = next((i for i, line in enumerate(inner) if not re.match(r"^:[\w-]+:", line)), len(inner))
        head, rest = inner[:count], inner[count:]
        options = {m[1]: yaml.safe_load(m[2]) if m[2].strip() else ""
                   for m in (re.match(r"^:([\w-]+):\s*(.*)$", line) for line in head)}
    if head and rest and rest[0] == "":
        head, rest = [*head, ""], rest[1:]
    return options, rest, head


def split(text):
    """The page's blocks; ``join(split(text)) == text``."""
    lines = text.split("\n")
    blocks, i = [], 0
    lead = len(lines) - len(text.lstrip("\n").split("\n"))
    i = lead
    while i < len(lines):
        end = _block_end(lines, i)
        j = end
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines):
            gap = "\n" + "".join(line + "\n" for line in lines[end:j])
        else:
            gap = "".join("\n" + line for line in lines[end:])
        blocks.append(Block("\n".join(lines[i:end]), gap))
        i = j
    if lead:
        blocks[0].text = "\n" * lead + blocks[0].text
    return blocks


def join(blocks):
    return "".join(b.text + b.gap for b in blocks)


def _block_end(lines, i):
    """The index after the block that starts at ``lines[i]``."""
    if i == 0 and lines[0] == "---":
        return lines.index("---", 1) + 1
    while _LABEL.match(lines[i]):
        i += 1
    m = _FENCE.match(lines[i]) or re.match(r"^(?P<fence>`{3,}|\${2})", lines[i])
    if m:
        fence = m["fence"]
        for j in range(i + 1, len(lines)):
            if lines[j].startswith(fence[0] * len(fence)) and not lines[j].strip(fence[0]).strip():
                return j + 1
        raise ValueError(f"unclosed {fence} at line {i + 1}")
    if _HEADING.match(lines[i]):
        return i + 1
    j = i + 1
    while j < len(lines) and lines[j].strip() and not _FENCE.match(lines[j]) and not _HEADING.match(lines[j]):
        j += 1
    return j


# --- the author's layer -----------------------------------------------------------------


@dataclass
class Unit:
    """One block of the author's text on the page: what it says (``key``, comparable with
    :func:`manuscript_units`) and which page blocks hold it."""

    kind: str
    key: tuple
    blocks: list


def role(block):
    """What a page block is: the author's (title, heading, paragraph, list, box, listing,
    output, figure) or the editor's ("editorial"), or "front" for the front matter."""
    first = block.body_lines[0]
    if first == "---" and block.text.startswith("---"):
        return "front"
    if _HEADING.match(first):
        return "title" if first.startswith("# ") else "heading"
    fence = block.fence
    if fence is None:
        return "list" if _LIST.match(first) else "paragraph"
    name, _ = fence
    if name == "admonition":
        return "box"
    if name == FIGURE_SLOT:
        return "figure"
    if name == "literalinclude" and "manuscript/" in fence[1]:
        return "listing"
    if name == "code-block" and PRINTED_OUTPUT in str(block.options.get("class", "")):
        return "output"
    if name == "code-cell":
        options = block.options
        tags = options.get("tags") or []
        if "editorial" in tags or "remove-cell" in tags:
            return "editorial"
        return "figure" if (options.get("mystnb") or {}).get("figure") else "listing"
    return "editorial"


def author_units(blocks, page_path=None):
    """The author's layer of a page, unit by unit (see the module's docstring)."""
    units = []
    last_author = None
    for index, block in enumerate(blocks):
        kind = role(block)
        if kind in ("front", "editorial"):
            continue
        if kind in ("listing", "output") and last_author is not None and last_author.kind == "listing" \
                and (kind == "output" or not last_author.key[2]):
            last_author.blocks.append(index)
            last_author.key = _listing_key([blocks[i] for i in last_author.blocks], page_path)
            continue
        if kind == "output":
            raise ValueError(f"a printed output without its listing: {block.text[:60]!r}")
        key = _listing_key([block], page_path) if kind == "listing" else _key(kind, block)
        unit = Unit(kind, key, [index])
        units.append(unit)
        last_author = unit
    return units


def _key(kind, block):
    if kind == "figure":
        if block.fence[0] == FIGURE_SLOT:
            return ("figure", block.fence[1].split(" ", 2)[2])
        return ("figure", block.options["mystnb"]["figure"]["caption"])
    lines = block.body_lines
    return (kind, "\n".join(lines))


def _listing_key(parts, page_path):
    """``("listing", code, outputs)`` of a listing's page blocks."""
    code = [_code(b, page_path) for b in parts if role(b) == "listing"]
    outputs = tuple(b.body for b in parts if role(b) == "output")
    return ("listing", "\n\n".join(code), outputs)


def _code(block, page_path):
    if block.fence[0] != "literalinclude":
        return block.body
    path = (Path(page_path).parent / block.fence[1]).resolve()
    lines = path.read_text(encoding="utf-8").split("\n")
    options = block.options
    start = next(i for i, line in enumerate(lines) if options["start-at"] in line)
    end = next(i for i in range(start, len(lines)) if options["end-at"] in lines[i])
    return "\n".join(lines[start:end + 1])


def manuscript_units(manuscript, label=""):
    """The units a manuscript's blocks make on a page (the key of each, as :func:`author_units`)."""
    units = []
    for b in manuscript.blocks:
        if b.kind == "listing":
            key = ("listing", b.runnable, b.outputs)
        elif b.kind == "figure":
            key = ("figure", b.text)
        else:
            key = (b.kind, render.block(b, label).split("\n", 1)[1] if b.kind == "title" and label
                   else render.block(b))
        units.append(Unit(b.kind, key, [b]))
    return units
