"""The glossary's anchors by name, and the editor's prose linked to them.

* **Stable anchors.** Sphinx makes a term's id from its ASCII letters; a Chinese term has
  none, so 查询 became ``term-4``, a number that changed whenever a term was added above
  it. Each term's id is now made from its English name, which the glossary gives first in
  every definition (``英文 query；…`` → ``term-query``). Of two terms in a row (a full
  name and its short form, such as 缩放点积注意力 and 缩放点积), the second gets
  ``-short``. A term without an English name is a build error.
* **First use linked.** On each page, the first use of each glossary term in the editor's
  prose (``{editorial}`` blocks, or the whole of an ``{editorial-page}``) becomes a link
  to its entry, made here at build time; the page sources are not touched and the
  author's text never gets one. Words are found with jieba and the glossary as its user
  dictionary (search_terms.py writes it), so 值 in 数值 or 取值 is not the term 值.
  Quotes (block quotes and “…”), headings, captions, code, formulas and existing links are left alone.
"""

import functools
import re
from pathlib import Path

import sphinx.domains.std as std
from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

from book._ext.shared.glossary import glossary_block
from book._ext.shared.nodes import ancestors

logger = logging.getLogger(__name__)
_ENGLISH = re.compile(r"英文\s*([^；;（(]+)")
_SKIP = (nodes.title, nodes.caption, nodes.reference, nodes.literal, nodes.literal_block, nodes.math,
         nodes.math_block, nodes.raw, nodes.block_quote, nodes.term, nodes.comment, nodes.FixedTextElement,
         addnodes.desc_signature, addnodes.pending_xref, addnodes.glossary, nodes.rubric)
_SKIP_CLASSES = {"editorial-label", "editorial-title", "claim-quote", "cell_output", "voice-switch",
                 "editor-notes"}  # the list of notes: every link in it lands on a note


def glossary_anchors(text):
    """{term: id} for the first ``{glossary}`` block of a MyST page (see the module doc)."""
    anchors, group = {}, []
    for line in glossary_block(text).splitlines() + [""]:
        if line.strip() and not line[0].isspace():
            group.append(line.strip())
            continue
        if not group:
            continue
        english = _ENGLISH.search(line)
        if english is None:
            raise ValueError(f"glossary entry {group} has no English name (英文 …) on its first line")
        slug = re.sub(r"[^a-z0-9]+", "-", english.group(1).strip().lower()).strip("-")
        for i, term in enumerate(group):
            anchors[term] = f"term-{slug}" + ("-short" * i)
        group = []
    return anchors


def _patch_glossary(app):
    """Give make_glossary_term the term's named id (Sphinx's own Glossary calls it)."""
    if getattr(std.make_glossary_term, "_named_ids", False):
        return
    original = std.make_glossary_term

    def make_glossary_term(env, textnodes, index_key, source, lineno, node_id, document):
        named = None
        if node_id is None:
            termtext = "".join(n.astext() for n in textnodes)
            named = node_id = getattr(env.config, "_glossary_anchors", {}).get(termtext)
            if named is None:
                logger.warning("glossary term %r has no named anchor (no English name?)", termtext,
                               location=(source, lineno))
        term = original(env, textnodes, index_key, source, lineno, node_id, document)
        if named is not None:
            document.note_explicit_target(term)
        return term

    make_glossary_term._named_ids = True
    std.make_glossary_term = make_glossary_term


def _read_anchors(app, config):
    glossary = Path(app.srcdir) / config.search_terms_glossary
    config._glossary_anchors = glossary_anchors(glossary.read_text(encoding="utf-8"))
    config._glossary_doc = str(Path(config.search_terms_glossary).with_suffix("")).replace("\\", "/")


@functools.cache
def _tokenizer(user_dict):
    """jieba, with the glossary as its user dictionary (search_terms.py writes it)."""
    import jieba

    jieba.setLogLevel(60)
    tokenizer = jieba.Tokenizer()
    tokenizer.load_userdict(user_dict)
    return tokenizer


def _skipped(node):
    return any(isinstance(parent, _SKIP) or _SKIP_CLASSES & set(parent.get("classes", ()))
               for parent in ancestors(node))


def _editor_roots(app, doctree, docname):
    """The parts of the page that are the editor's prose."""
    kind = getattr(app.env, "editorial_docs", {}).get(docname)
    if kind == "page":
        return [doctree]
    return [n for n in doctree.findall(nodes.container) if "editorial" in n["classes"]
            and not any("editorial" in a.get("classes", ()) for a in ancestors(n))]


def _link_terms(app, doctree, docname):
    config = app.config
    anchors = getattr(config, "_glossary_anchors", {})
    if app.builder.format != "html" or docname == config._glossary_doc or not anchors:
        return
    linked = set()
    uri = app.builder.get_relative_uri(docname, config._glossary_doc)
    tokenizer = _tokenizer(str(Path(app.doctreedir) / "jieba_userdict.txt"))
    for root in _editor_roots(app, doctree, docname):
        for text in list(root.findall(nodes.Text)):
            if _skipped(text) or not isinstance(text.parent, (nodes.paragraph, nodes.inline, nodes.strong,
                                                                nodes.emphasis, nodes.list_item, nodes.entry)):
                continue
            parts, plain, quoted = [], [], False
            for word in tokenizer.cut(text.astext(), HMM=False):
                if word in "“”「」":  # the editor quoting the author: no link inside a quote
                    quoted = word in "“「"
                if word in anchors and word not in linked and not quoted:
                    linked.add(word)
                    parts += [nodes.Text("".join(plain)), nodes.reference(
                        "", "", nodes.inline(word, word, classes=["xref", "std", "std-term"]),
                        internal=True, refuri=f"{uri}#{anchors[word]}", classes=["glossary-term-link"])]
                    plain = []
                else:
                    plain.append(word)
            if parts:
                text.parent.replace(text, [part for part in parts + [nodes.Text("".join(plain))] if part.astext()])


def setup(app):
    app.setup_extension("book._ext.config.search_terms")
    _patch_glossary(app)
    app.connect("config-inited", _read_anchors)
    app.connect("doctree-resolved", _link_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
