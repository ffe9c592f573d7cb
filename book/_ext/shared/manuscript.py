"""An author's manuscript (``manuscript/<N>-<name>.txt``), read into the blocks a page is made of.

The format is the one every section arrives in: plain text, blocks separated by blank
lines. In order of precedence, a block is

* the **title**, ``4.5 注意力机制：让张量互相打分`` (its number the file's; printed twice
  at the top of the file, kept once);
* a **listing**: a block whose first line reads as Python (``import``, ``class``, a comment,
  an assignment, a call, an indented line …; CJK text is allowed only in its comments and
  strings) and the code blocks right after it, blank lines kept. Its ``# 输出：`` and
  ``# 输出示例：`` comments are what the print run showed in place of the output
  (:func:`split_outputs` says which lines belong to one);
* a **box**: ``本节摘要：…`` (note), ``⚠️ 常见坑：…`` (warning) or ``💡 关键直觉：…`` (tip),
  its title the text before the first ``：``;
* a **list**: lines ``1. …`` (numbered) or ``• …`` (bullets);
* a **figure** line, ``图 20 注意力打分的信号流``: the printed figure's number and caption;
* a **heading**: one short line (at most :data:`HEADING_MAX` characters) that does not
  end a sentence;
* a **paragraph**: one line that ends a sentence (。！？：；… possibly followed by a
  closing quote or bracket).

Any other line (a table, Markdown, a long line that ends no sentence) is an error that
names its line: the converter (tools/page) writes nothing rather than guess. Nothing here
imports Sphinx or TensorFlow, so `make page` stays fast and the tests read manuscripts
without a build.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

HEADING_MAX = 30
# A manuscript's file name: its section number, a dash, the page's name.
FILE_NAME = re.compile(r"^(?P<number>\d+(?:\.\d+)+)-(?P<slug>[a-z0-9][a-z0-9-]*)\.txt$")
TITLE = re.compile(r"^(?P<number>\d+(?:\.\d+)+) (?P<title>\S.*)$")
FIGURE = re.compile(r"^图\s*(?P<number>\d+)\s+(?P<caption>\S.*)$")
NUMBERED = re.compile(r"^(?P<n>\d+)\.\s+(?P<item>\S.*)$")
BULLET = re.compile(r"^•\s*(?P<item>\S.*)$")
# The boxes: prefix -> (style, the admonition class on the page).
BOXES = {"本节摘要": ("summary", "note"), "⚠️": ("warning", "warning"), "💡": ("tip", "tip")}
OUTPUT = re.compile(r"^#\s*输出(示例)?：")
# How a page marks two of these blocks (tools/page writes them, book/_ext/reading/author_blocks shows them).
PRINTED_OUTPUT = "listing-printed-output"  # the class of a listing's printed output comments
FIGURE_SLOT = "manuscript-figure"  # the directive of a figure that waits for its drawing
# The editor's words on them, on the page and in the downloaded notebook alike.
PRINTED_LABEL = "原稿印的输出"  # beside it, under the live output
WAITING = "原稿在这里有一张图，编者还没有画出来：这里先留着它的位置和图题。"
SENTENCE_END = re.compile(r"[。！？：；…](?:[”’」』）)\"]*)$")
# Lines that are some other format's markup: not this one's, so not guessed at.
FOREIGN = re.compile(r"^(表\s*\d+|\||>|[-*+]\s|!\[|#{1,6}\s|```|:::|<)")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CODE_START = re.compile(
    r"^(\s+\S|#|@|(import|from|class|def|for|while|if|with|try|return|async|print)\b"
    r"|[A-Za-z_][\w\[\], .]*\s*[-+*/]?=(?!=)|[A-Za-z_][\w.]*\s*[(\[.])", re.A)
_STRINGS = re.compile(r"'''.*?'''|\"\"\".*?\"\"\"|'[^'\n]*'|\"[^\"\n]*\"", re.S)
_BRACKETS = {"(": ")", "[": "]", "{": "}"}


class ManuscriptError(ValueError):
    """A manuscript this format cannot read; the message names the file and line."""


@dataclass(frozen=True)
class Block:
    """One block of a manuscript, in the author's words.

    ``kind`` is title, box, heading, paragraph, list, listing or figure. ``text`` is the
    block as the author wrote it, but for a box (its body, without the title), a list (its
    items without their markers, one per line) and a title or figure (without the number).
    ``style`` is a box's summary/warning/tip or a list's numbered/bullets; ``label`` a box's
    title or a title's and a figure's number. ``line`` is where the block starts (1-based).
    """

    kind: str
    text: str
    line: int
    style: str = ""
    label: str = ""

    @property
    def items(self):
        """A list's items."""
        return tuple(self.text.split("\n")) if self.kind == "list" else ()

    @property
    def runnable(self):
        """A listing without the lines that stood for its output."""
        return split_outputs(self.text)[0] if self.kind == "listing" else ""

    @property
    def outputs(self):
        """A listing's printed outputs, each the comment lines of one, as printed."""
        return split_outputs(self.text)[1] if self.kind == "listing" else ()


@dataclass(frozen=True)
class Manuscript:
    """A parsed manuscript: its section number, title and blocks, in order."""

    number: str
    title: str
    blocks: tuple = field(repr=False)
    path: Path | None = None
    source: str = field(default="", repr=False)  # the text as the author wrote it

    def of_kind(self, kind):
        return [block for block in self.blocks if block.kind == kind]

    @property
    def listings(self):
        return self.of_kind("listing")

    @property
    def figures(self):
        """``{number: caption}`` of the figures the manuscript prints."""
        return {int(block.label): block.text for block in self.of_kind("figure")}

    @property
    def headings(self):
        return [block.text for block in self.of_kind("heading")]

    @property
    def boxes(self):
        """``[(style, title)]`` of its boxes, in order."""
        return [(block.style, block.label) for block in self.of_kind("box")]

    @property
    def prose(self):
        """The prose the page carries, block by block: headings, paragraphs, box bodies,
        list items and figure captions (titles and numbers aside)."""
        kinds = ("heading", "paragraph", "box", "list", "figure")
        return [block.text for block in self.blocks if block.kind in kinds]


def read(path):
    """Parse the manuscript file at ``path``; its name gives the section number."""
    path = Path(path)
    match = FILE_NAME.match(path.name)
    if not match:
        raise ManuscriptError(f"{path}: 原稿文件名应当是“节号-英文名.txt”，例如 4.5-attention.txt")
    return parse(path.read_text(encoding="utf-8"), number=match["number"], path=path)


def parse(text, number=None, path=None):
    """The :class:`Manuscript` of ``text``; ``number``, when given, must be its title's."""
    where = path or "原稿"
    blocks = []
    for line, lines in _chunks(text.replace("\r\n", "\n")):
        if blocks and blocks[-1].kind == "listing" and _is_code(lines[0]):
            last = blocks.pop()
            gap = "\n" * (line - last.line - last.text.count("\n"))
            blocks.append(Block("listing", last.text + gap + "\n".join(lines), last.line))
        elif _is_code(lines[0]):
            blocks.append(Block("listing", "\n".join(lines).rstrip(), line))
        else:
            blocks.extend(_prose_blocks(lines, line, where))
    return _titled(blocks, number, where, path, text)


def _chunks(text):
    """``(first line number, lines)`` of each run of non-blank lines."""
    chunk, start = [], 0
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            start = start if chunk else number
            chunk.append(line.rstrip())
        elif chunk:
            yield start, chunk
            chunk = []
    if chunk:
        yield start, chunk


def _is_code(line):
    """Whether a block's first line reads as Python: CJK only in its comments and strings."""
    if not _CODE_START.match(line):
        return False
    if line.lstrip().startswith(("#", "@")) or line[:1].isspace():
        return True
    code = _STRINGS.sub("", line).split("#", 1)[0]
    return not CJK.search(code)


def _prose_blocks(lines, first, where):
    """The blocks of a run of prose lines: list items grouped, every other line its own."""
    blocks = []
    for offset, line in enumerate(lines):
        number = first + offset
        kind, style, label, text = _classify(line, number, where)
        last = blocks[-1] if blocks else None
        if kind == "list" and last and last.kind == "list" and last.style == style \
                and last.line + last.text.count("\n") + 1 == number:
            blocks[-1] = Block("list", f"{last.text}\n{text}", last.line, style)
        else:
            blocks.append(Block(kind, text, number, style, label))
    return blocks


def _classify(line, number, where):
    """``(kind, style, label, text)`` of one prose line, or a :class:`ManuscriptError`."""
    text = line.strip()
    if (m := TITLE.match(text)) and not SENTENCE_END.search(text):
        return "title", "", m["number"], m["title"]
    for prefix, (style, _) in BOXES.items():
        if text.startswith(prefix) and "：" in text:
            title, body = text.split("：", 1)
            return "box", style, title.strip(), body.strip()
    if m := NUMBERED.match(text):
        return "list", "numbered", "", m["item"]
    if m := BULLET.match(text):
        return "list", "bullets", "", m["item"]
    if (m := FIGURE.match(text)) and not SENTENCE_END.search(text):
        return "figure", "", m["number"], m["caption"]
    if FOREIGN.match(text):
        raise ManuscriptError(f"{where} 第 {number} 行无法归类（像表格或标记语言，原稿格式里没有）：{text[:40]}")
    if SENTENCE_END.search(text):
        return "paragraph", "", "", text
    if len(text) <= HEADING_MAX and "。" not in text and re.search(r"\w", text):
        return "heading", "", "", text
    raise ManuscriptError(f"{where} 第 {number} 行无法归类（不是标题，也没有以句末标点结尾）：{text[:40]}")


def _titled(blocks, number, where, path, source):
    titles = [block for block in blocks if block.kind == "title"]
    if not titles or blocks[0].kind != "title":
        raise ManuscriptError(f"{where} 的第一行应当是节号和标题，例如“4.5 注意力机制：让张量互相打分”")
    title = titles[0]
    if number is not None and title.label != number:
        raise ManuscriptError(f"{where} 第 {title.line} 行：标题的节号 {title.label} 与文件名的节号 {number} 不同")
    for other in titles[1:]:
        if (other.label, other.text) != (title.label, title.text) or other is not blocks[1]:
            raise ManuscriptError(f"{where} 第 {other.line} 行：第二个标题只能紧跟第一个、与它相同")
    body = tuple(b for b in blocks if b.kind != "title")
    return Manuscript(title.label, title.text, (title, *body), path, source)


def split_outputs(listing):
    """``(runnable, outputs)``: a listing without its output comments, and those comments.

    An output comment is a line ``# 输出：…`` or ``# 输出示例：…`` and the comment lines that
    continue it: while a bracket it opened is still open, while a line is indented past
    the ``#`` (``#   …``), while a line holds no CJK character (plain printed values), and
    the first line after a marker with nothing after its colon. The first comment line
    with CJK text after all that is the author's remark again, and stays in the code.
    """
    lines, kept, outputs = listing.split("\n"), [], []
    i = 0
    while i < len(lines):
        if not OUTPUT.match(lines[i].strip()):
            kept.append(lines[i])
            i += 1
            continue
        block = [lines[i]]
        depth = _depth(lines[i].split("：", 1)[1])
        empty = not lines[i].split("：", 1)[1].strip()
        i += 1
        while i < len(lines) and lines[i].lstrip().startswith("#") and not OUTPUT.match(lines[i].strip()):
            rest = lines[i].lstrip()[1:]
            if not rest.strip() or not (depth > 0 or empty or rest[:2].isspace() or not CJK.search(rest)):
                break
            block.append(lines[i])
            depth += _depth(rest)
            empty = False
            i += 1
        outputs.append("\n".join(block))
    return "\n".join(kept).strip(), tuple(outputs)


def _depth(text):
    """How many brackets ``text`` leaves open (closing ones count back)."""
    opened = sum(text.count(o) for o in _BRACKETS)
    closed = sum(text.count(c) for c in _BRACKETS.values())
    return opened - closed
