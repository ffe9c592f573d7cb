"""A revised manuscript into its existing page: the author's blocks updated in place, the editor's kept.

The page's author units (:func:`tools.page.myst.author_units`) are matched with the
revised manuscript's (difflib, unit by unit). A unit that is unchanged keeps its page
blocks as they are. A changed unit of the same kind is rewritten in place: a heading keeps
its label, a cell its tags and options, a listing that the editor shows from the
manuscript (``literalinclude``) keeps that form while the manuscript still has its first
and last lines. A new unit goes just before the next author unit, after the editor's
blocks that follow the one before it (they comment on that one). A unit the author
removed goes, and only it. The editor's blocks are never changed.
"""

import difflib
from dataclasses import dataclass, field

from book._ext.shared.manuscript import FIGURE_SLOT
from tools.page import myst, render
from tools.page.myst import Block


@dataclass
class Result:
    """The synced page's text, the author's changes as a unified diff, and warnings."""

    text: str
    diff: str
    warnings: list = field(default_factory=list)


def sync(page_text, manuscript, label, page_path):
    """The page ``page_text`` with its author's layer made ``manuscript``'s."""
    blocks = myst.split(page_text)
    old = myst.author_units(blocks, page_path)
    new = myst.manuscript_units(manuscript, label)
    replaced, after, removed, warnings = {}, {}, set(), []
    matcher = difflib.SequenceMatcher(None, [u.key for u in old], [u.key for u in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        pairs = list(zip(range(i1, i2), range(j1, j2)))
        for i, j in pairs:
            if old[i].kind == new[j].kind:
                replaced.update(_rewrite(blocks, old[i], new[j], page_path, warnings))
            else:
                removed.update(old[i].blocks)
                _insert_before(after, blocks, old, i, new[j], label)
        for i in range(i1 + len(pairs), i2):
            removed.update(old[i].blocks)
        for j in range(j1 + len(pairs), j2):
            _insert_before(after, blocks, old, i2, new[j], label)
    result = []
    for index, block in enumerate(blocks):
        result.extend(after.get(index, []))
        if index not in removed:
            result.extend(replaced.get(index, [block]))
    result.extend(after.get(len(blocks), []))
    _end_gaps(result, blocks[-1].gap if blocks else "\n")
    text = myst.join(result)
    return Result(text, author_diff(old, new), warnings)


def _end_gaps(result, final):
    """The page ends as it did; a block that ended it and no longer does gets a blank line."""
    for block in result[:-1]:
        if block.gap == final and "\n\n" not in final:
            block.gap = "\n\n"
    if result:
        result[-1].gap = final


def _insert_before(after, blocks, old, i, unit, label):
    """Queue ``unit``'s new blocks before the page block of old unit ``i`` (or at the end)."""
    at = old[i].blocks[0] if i < len(old) else len(blocks)
    after.setdefault(at, []).extend(_new_blocks(unit.blocks[0], label))


def _new_blocks(manuscript_block, label):
    return myst.split(render.block(manuscript_block, label) + "\n\n")


def _rewrite(blocks, unit, new, page_path, warnings):
    """``{page block index: [blocks]}`` that make ``unit`` say what ``new`` says."""
    b = new.blocks[0]
    if unit.kind == "listing":
        return _rewrite_listing(blocks, unit, b, page_path, warnings)
    first = blocks[unit.blocks[0]]
    if unit.kind == "figure" and first.fence[0] != FIGURE_SLOT:
        name = first.options["mystnb"]["figure"].get("name", "")
        warnings.append(f"图 {b.label} 的图题改成了“{b.text}”：画它的单元格（{name}）的 caption 要由编者改")
        return {}
    labels = first.lines[:len(first.lines) - len(first.body_lines)]
    return {unit.blocks[0]: [Block("\n".join([*labels, render.block(b)]), first.gap)]}


def _rewrite_listing(blocks, unit, b, page_path, warnings):
    parts = [i for i in unit.blocks if myst.role(blocks[i]) == "listing"]
    outputs = [i for i in unit.blocks if myst.role(blocks[i]) == "output"]
    code = b.runnable
    changes = {}
    include = [i for i in parts if blocks[i].fence[0] == "literalinclude"]
    if include:
        shown = myst._code(blocks[include[0]], page_path)
        if code.startswith(shown) and len(parts) == 2:
            rest = code[len(shown):].lstrip("\n")
            cell = next(i for i in parts if i not in include)
            changes[cell] = [blocks[cell].with_body(rest)]
        else:
            warnings.append(f"原稿第 {b.line} 行起的清单不再能由编者的 literalinclude 展示：换成了一个普通的代码单元，"
                            "请重新检查配套包里它的副本")
            changes.update({i: [] for i in parts})
            changes[parts[0]] = [Block(render.listing_cell(code), blocks[parts[0]].gap)]
    else:
        if len(parts) > 1:
            warnings.append(f"原稿第 {b.line} 行起的清单在页面上分在 {len(parts)} 个单元里：修订后合成了一个，请编者重新拆分")
        changes.update({i: [] for i in parts[1:]})
        changes[parts[0]] = [blocks[parts[0]].with_body(code)]
    new_outputs = [Block(render.printed_output(text), "\n\n") for text in b.outputs]
    for index, block in zip(outputs, new_outputs):
        changes[index] = [Block(block.text, blocks[index].gap)]
    for index in outputs[len(new_outputs):]:
        changes[index] = []
    if len(new_outputs) > len(outputs):
        last = outputs[-1] if outputs else parts[-1]
        extra = new_outputs[len(outputs):]
        changes[last] = [*changes.get(last, [blocks[last]]), *extra]
    return changes


def author_diff(old, new):
    """The page's author layer and the revised manuscript's, as a unified diff (empty when equal)."""
    def lines(units):
        return [line for u in units for line in [*_text(u.key).split("\n"), ""]]
    return "".join(difflib.unified_diff([l + "\n" for l in lines(old)], [l + "\n" for l in lines(new)],
                                        "页面上的原稿", "修订后的原稿"))


def _text(key):
    if key[0] == "listing":
        return "\n".join([key[1], *key[2]])
    if key[0] == "figure":
        return f"（图）{key[1]}"
    return key[1]
