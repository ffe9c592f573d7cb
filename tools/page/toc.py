"""Add a section page to ``_toc.yml``, in the part of its chapter, in the order of the section numbers.

A chapter's part has the caption ``第 N 章``; a missing one is made, before the first part
of a later chapter or the first part that is not a chapter (附录). The file is written back
in the layout it has (two-space indents, lists indented under their key), so a page added
changes only its own lines.
"""

import re

import yaml

from book._ext.shared.sections import number_key

CHAPTER = re.compile(r"^第 (\d+) 章$")


def add(toc_text, docname, number, numbers_of):
    """``toc_text`` with ``docname`` (section ``number``) listed; ``numbers_of(docname)`` gives
    the section number of a listed page, or None for a page that is not a section's."""
    toc = yaml.safe_load(toc_text)
    chapter = int(number.split(".")[0])
    parts = toc.setdefault("parts", [])
    part = next((p for p in parts if p.get("caption") == f"第 {chapter} 章"), None)
    if part is None:
        part = {"caption": f"第 {chapter} 章", "chapters": []}
        later = [i for i, p in enumerate(parts)
                 if not (m := CHAPTER.match(p.get("caption", ""))) or int(m[1]) > chapter]
        parts.insert(later[0] if later else len(parts), part)
    chapters = part.setdefault("chapters", [])
    before = [i for i, entry in enumerate(chapters)
              if (n := numbers_of(entry.get("file", ""))) and number_key(n) > number_key(number)]
    chapters.insert(before[0] if before else len(chapters), {"file": docname})
    return dump(toc)


def dump(value, indent=0):
    """YAML in the toc's own layout (what :func:`yaml.safe_load` reads back the same)."""
    pad = " " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, list):
            lines.append(f"{pad}{key}:")
            for entry in item:
                first, *rest = dump(entry, indent + 4).split("\n")
                lines.append(f"{pad}  - {first.lstrip()}")
                lines.extend(rest)
        else:
            lines.append(f"{pad}{key}: {item}")
    return "\n".join(lines) + ("\n" if indent == 0 else "")
