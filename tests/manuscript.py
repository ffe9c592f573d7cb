"""The author's manuscript (manuscript/4.5-attention.txt), split the way the page uses it.

The manuscript is plain text: paragraphs and code listings separated by blank lines.
A block whose first line reads as Python (an import, a comment, an assignment, a
class, an indented line, a call to print) is code; consecutive code blocks form one
listing. Everything else is prose.
"""

import re

from buildfiles import ROOT

PATH = ROOT / "manuscript" / "4.5-attention.txt"
_CODE_START = re.compile(r"^(import |from |class |def |#|\s|[A-Za-z_][\w, ]*=|print\()", re.A)
# The manuscript's boxes open with their title; on the page the title is the box's own.
BOX_PREFIXES = ("本节摘要：", "⚠️常见坑：", "💡关键直觉：")
# Lines that stood for output in print: the page shows the live output instead.
OUTPUT_COMMENT = re.compile(r"^# 输出(示例)?：")


def text():
    return PATH.read_text(encoding="utf-8")


def blocks():
    """``[(kind, text)]`` in order, kind "prose" or "code"; code blocks merged into listings."""
    merged = []
    for block in re.split(r"\n\s*\n", text().strip()):
        kind = "code" if _CODE_START.match(block) else "prose"
        if kind == "code" and merged and merged[-1][0] == "code":
            merged[-1] = ("code", merged[-1][1] + "\n\n" + block)
        else:
            merged.append((kind, block))
    return merged


def listings():
    """The code listings, as printed."""
    return [body for kind, body in blocks() if kind == "code"]


def layer_class():
    """The class of the second listing (``class MiniMultiHeadAttention`` … ``return self.wo(out)``),
    without the three lines that use it: what the section page shows from the manuscript."""
    layer = next(body for body in listings() if body.startswith("class MiniMultiHeadAttention"))
    return layer.split("\n\nattn = ")[0].strip()


def runnable(listing):
    """A listing as the page runs it: the lines that stood for output are dropped."""
    lines = [line for line in listing.splitlines() if not OUTPUT_COMMENT.match(line)]
    return "\n".join(lines).strip()


def normalize(value):
    """Text compared across the manuscript and the page: no whitespace, no quote marks,
    no list bullets (the manuscript's ASCII quotes became “” on the page)."""
    return re.sub(r"[\s\"“”•]", "", value)


def prose_sentences(min_chars=8):
    """Every sentence of the prose, normalized: the text up to each 。！？ (headings and
    other lines without one are not sentences)."""
    sentences = []
    for kind, body in blocks():
        if kind != "prose":
            continue
        for part in re.split(r"(?<=[。！？])|\n", body):
            part = re.sub(r"^\d+\.", "", normalize(part))  # the numbers of a list are the page's
            if len(part) >= min_chars and part[-1] in "。！？":
                sentences.append(part)
    return sentences
