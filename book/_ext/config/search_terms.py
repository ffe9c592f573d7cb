"""Keep the glossary's terms, and each section's subject and headings, whole in the Chinese search index.

Sphinx splits Chinese text with jieba, whose general vocabulary cuts this book's terms
apart: 交叉注意力 becomes 交叉 + 注意 + 注意力 and 位置编码 becomes 位置 + 编码, and a
section's own subject, 图神经网络, becomes 图 + 神经网络, so a reader who types the whole
term finds nothing indexed under it. This extension reads the terms of the glossary page
(the source of truth for the book's vocabulary) and, from the section list, each section's
subject and the phrases of its title and headings (:func:`section_terms`), writes them
as a jieba user dictionary, and hands that file to the indexer through
``html_search_options['dict']``. jieba still indexes the parts as well, so 注意力 alone
is found too.

It also keeps the index entries of pages a build does not read again. Sphinx's Chinese
indexer drops one-character words, so a search for 键 or 值 finds the glossary only
through the glossary's index entries. Sphinx 7.4 loads the previous ``searchindex.js``
in an incremental build but not its ``indexentries`` (sphinx-doc/sphinx#12599), so a
plain ``jupyter-book build .`` wrote an index without the entries of every page it had
not read again, and those searches found nothing. ``_keep_index_entries`` loads them
back, and drops those of pages that left the book.
"""

import re
from pathlib import Path

from sphinx.search import IndexBuilder

from book._ext.shared.glossary import glossary_block
from book._ext.shared.sections import for_app

# A user-dictionary frequency high enough that jieba never splits the term.
_FREQUENCY = 100_000


def glossary_terms(text):
    """The terms of the first ``{glossary}`` block of a MyST page, in order.

    A term is a non-indented, non-empty line; its definition is indented below it.
    Several term lines in a row name one entry (an alias such as 缩放点积).
    """
    lines = glossary_block(text).splitlines()
    return [line.strip() for line in lines if line.strip() and not line[0].isspace()]


def section_terms(sections):
    """Each section's subject, then the phrases of its title and headings: the text between
    its ：, quotes and other punctuation, two characters or more (注意力机制, 让张量互相打分,
    顺序传递, 手写一个多头注意力层 …)."""
    terms = []
    for section in sections:
        terms.append(section.subject)
        for line in [section.title, *section.text.headings]:
            terms += [part for part in re.split(r"[：:，,、“”\"（）()《》\s]+", line) if len(part) >= 2]
    return list(dict.fromkeys(terms))


def write_user_dict(terms, path):
    """Write ``terms`` as a jieba user dictionary: one ``word frequency`` per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # jieba splits dictionary lines on spaces, so a term with a space cannot be kept whole.
    words = [term for term in terms if " " not in term]
    path.write_text("".join(f"{word} {_FREQUENCY}\n" for word in words), encoding="utf-8")


def _configure(app, config):
    glossary = Path(app.srcdir) / config.search_terms_glossary
    path = Path(app.doctreedir) / "jieba_userdict.txt"
    terms = glossary_terms(glossary.read_text(encoding="utf-8")) + section_terms(for_app(app).sections)
    write_user_dict(list(dict.fromkeys(terms)), path)
    config.html_search_options = {**config.html_search_options, "dict": str(path)}


def _keep_index_entries():
    """Patch IndexBuilder.load and .prune to carry the index entries over (sphinx#12599)."""
    if getattr(IndexBuilder, "_keeps_index_entries", False):
        return
    load, prune = IndexBuilder.load, IndexBuilder.prune

    def load_with_entries(self, stream, format):
        position = stream.tell()
        load(self, stream, format)
        stream.seek(position)
        frozen = (self.formats[format] if isinstance(format, str) else format).load(stream)
        entries, docnames = {}, frozen["docnames"]
        for entry, places in frozen.get("indexentries", {}).items():
            for doc, target, main in places:
                entries.setdefault(docnames[doc], []).append((entry, target, "main" if main else ""))
        self._index_entries.clear()
        self._index_entries.update(entries)

    def prune_with_entries(self, docnames):
        prune(self, docnames)
        for docname in set(self._index_entries) - set(docnames):
            del self._index_entries[docname]

    IndexBuilder.load, IndexBuilder.prune = load_with_entries, prune_with_entries
    IndexBuilder._keeps_index_entries = True


def setup(app):
    app.add_config_value("search_terms_glossary", "book/glossary.md", "env", types=[str])
    app.connect("config-inited", _configure)
    _keep_index_entries()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
