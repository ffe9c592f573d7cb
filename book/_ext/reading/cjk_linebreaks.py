"""Remove the line breaks that wrapping leaves inside Chinese sentences.

The package's docstrings are Chinese and wrapped over several source lines. Docutils
keeps every line break of a paragraph in its text, and a browser that does not apply
the CSS Text rules for segment breaks between CJK characters (Chromium, for one)
shows the break as a space: 「可广播到\\n同一形状」 reads 「可广播到 同一形状」 on the
API page. This transform deletes a line break, with the indentation around it, when
the characters on both sides are CJK characters, or when either side is full-width
punctuation (「，\\nTrue」 becomes 「，True」). A break between a CJK character and
Latin text stays, since a space is right there. Code (literal blocks, inline
literals, raw HTML and math) is never touched.
"""

import re

from docutils import nodes
from docutils.transforms import Transform

from book._ext.shared.nodes import in_code

# Full-width punctuation, with the curly quotes, dash and ellipsis that Chinese uses.
_PUNCT = "\u3000-\u303f\ufe30-\ufe4f\uff00-\uffef\u2018\u2019\u201c\u201d\u2014\u2026"
# CJK radicals, ideographs, kana and the punctuation above.
_CJK = f"\u2e80-\u9fff\uf900-\ufaff{_PUNCT}"
_BREAK = re.compile(
    rf"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])"
    rf"|(?<=[{_PUNCT}])[ \t]*\n[ \t]*"
    rf"|[ \t]*\n[ \t]*(?=[{_PUNCT}])"
)


def join_cjk_breaks(doctree):
    """Remove those line breaks from every text node of ``doctree`` outside code."""
    for text in list(doctree.findall(nodes.Text)):
        if text.parent is None or in_code(text.parent):
            continue
        joined = _BREAK.sub("", str(text))
        if joined != str(text):
            text.parent.replace(text, nodes.Text(joined))


class JoinCJKBreaks(Transform):
    default_priority = 880  # late: after the transforms that build or move text

    def apply(self):
        join_cjk_breaks(self.document)


def setup(app):
    app.add_transform(JoinCJKBreaks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
