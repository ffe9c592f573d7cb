"""Keep the glossary's terms whole in the Chinese search index.

Sphinx splits Chinese text with jieba, whose general vocabulary cuts this book's terms
apart: 交叉注意力 becomes 交叉 + 注意 + 注意力 and 位置编码 becomes 位置 + 编码, so a
reader who types the whole term finds nothing indexed under it. This extension reads
the terms of the glossary page (the source of truth for the book's vocabulary), writes
them as a jieba user dictionary, and hands that file to the indexer through
``html_search_options['dict']``. jieba still indexes the parts as well, so 注意力 alone
is found too.
"""

import re
from pathlib import Path

# A user-dictionary frequency high enough that jieba never splits the term.
_FREQUENCY = 100_000
_GLOSSARY_BLOCK = re.compile(r"^```\{glossary\}\n(.*?)^```", re.S | re.M)


def glossary_terms(text):
    """The terms of the first ``{glossary}`` block of a MyST page, in order.

    A term is a non-indented, non-empty line; its definition is indented below it.
    Several term lines in a row name one entry (an alias such as 缩放点积).
    """
    block = _GLOSSARY_BLOCK.search(text)
    if block is None:
        raise ValueError("no ```{glossary} block found in the glossary page")
    lines = block.group(1).splitlines()
    return [line.strip() for line in lines if line.strip() and not line[0].isspace()]


def write_user_dict(terms, path):
    """Write ``terms`` as a jieba user dictionary: one ``word frequency`` per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # jieba splits dictionary lines on spaces, so a term with a space cannot be kept whole.
    words = [term for term in terms if " " not in term]
    path.write_text("".join(f"{word} {_FREQUENCY}\n" for word in words), encoding="utf-8")


def _configure(app, config):
    glossary = Path(app.srcdir) / config.search_terms_glossary
    path = Path(app.doctreedir) / "jieba_userdict.txt"
    write_user_dict(glossary_terms(glossary.read_text(encoding="utf-8")), path)
    config.html_search_options = {**config.html_search_options, "dict": str(path)}


def setup(app):
    app.add_config_value("search_terms_glossary", "book/glossary.md", "env", types=[str])
    app.connect("config-inited", _configure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
