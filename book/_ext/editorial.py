"""The editor's layer: marked, separable from the author's text, and listed for review.

The section page is the author's manuscript; everything the site adds is the editor's.
This extension gives the editor's additions one look and one HTML class, ``editorial``,
on their outermost element, so a reader (and a test) can tell the two voices apart:

* ``:::{editorial} 标题`` … ``:::`` is a block of editorial prose. With a title it is an
  editor's note and is listed on the 编者注与勘误 page; ``:correction: <claim id>`` marks
  it as a correction of a manuscript claim (see claims.py). Without a title it is a
  bridge or an explanation and carries only the 「编者」 label.
* A code cell tagged ``editorial`` (its output and figure included) gets the class and
  the label too.
* ``:::{editorial-page}`` at the top of a page marks the whole page as the editor's
  (编者撰写); such a page has no switch.
* Every other page with editorial blocks gets a switch, 只看原文, that hides the editor's
  layer and keeps the author's text with its live outputs. The choice is remembered
  (localStorage) and applied before the page is painted.
* ``:::{editor-notes}`` is replaced, once every page is read, by the list of every
  editor's note and correction of the book, with links, in reading order.
"""

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

LABEL = "编者"
SWITCH = """<div class="voice-switch" role="group" aria-label="显示哪些内容">
<label><input type="checkbox" class="voice-switch-input"> 只看原文</label>
<span class="voice-switch-hint">勾选后隐藏编者加入的说明、检查单元和图，原文与它的运行输出保留</span>
</div>"""
SWITCH_JS = """(() => {
  const key = "attnbook:voice", root = document.documentElement;
  let saved = null;
  try { saved = localStorage.getItem(key); } catch (e) { /* storage blocked: default view */ }
  root.dataset.voice = saved === "author" ? "author" : "all";
  document.addEventListener("DOMContentLoaded", () => {
    for (const box of document.querySelectorAll(".voice-switch-input")) {
      box.checked = root.dataset.voice === "author";
      box.addEventListener("change", () => {
        root.dataset.voice = box.checked ? "author" : "all";
        try { localStorage.setItem(key, root.dataset.voice); } catch (e) { /* not remembered */ }
      });
    }
  });
})();"""


def label(text=LABEL):
    return nodes.inline(text, text, classes=["editorial-label"])


def _notes(env):
    if not hasattr(env, "editorial_notes"):
        env.editorial_notes = {}  # docname -> [(node id, title, claim id or "")]
        env.editorial_docs = {}  # docname -> "page" (editor's page) or "blocks"
        env.editor_notes_docs = set()  # pages that list the notes
    return env


class EditorialDirective(SphinxDirective):
    """A block of the editor's prose; with a title, an editor's note."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {"correction": directives.unchanged_required, "name": directives.unchanged_required}

    def run(self):
        title = self.arguments[0] if self.arguments else ""
        correction = self.options.get("correction", "")
        box = nodes.container(classes=["editorial"] + (["correction"] if correction else []))
        node_id = self.options.get("name") or f"editorial-{self.env.new_serialno('editorial')}"
        box["ids"].append(node_id)
        head = nodes.paragraph(classes=["editorial-title"])
        head += label(f"{LABEL} · 更正" if correction else LABEL)
        if title:
            text_nodes, messages = self.state.inline_text(title, self.lineno)
            head += text_nodes
            head += messages
            plain = "".join(node.astext() for node in text_nodes)
            _notes(self.env).editorial_notes.setdefault(self.env.docname, []).append(
                (node_id, plain, correction))
        box += head
        self.state.nested_parse(self.content, self.content_offset, box)
        _notes(self.env).editorial_docs.setdefault(self.env.docname, "blocks")
        return [box]


class EditorialPageDirective(SphinxDirective):
    """Marks the whole page as written by the editor (编者撰写)."""

    has_content = True

    def run(self):
        box = nodes.container(classes=["editorial", "editorial-page"])
        head = nodes.paragraph(classes=["editorial-title"])
        head += label("编者撰写")
        box += head
        self.state.nested_parse(self.content, self.content_offset, box)
        _notes(self.env).editorial_docs[self.env.docname] = "page"
        return [box]


class editor_notes_list(nodes.General, nodes.Element):
    """Placeholder for the list of editor's notes, filled at doctree-resolved."""


class EditorNotesDirective(SphinxDirective):
    def run(self):
        _notes(self.env).editor_notes_docs.add(self.env.docname)
        return [editor_notes_list()]


def _mark_cells(app, doctree):
    """Give editorial code cells the class and the label; count them for the switch."""
    env = _notes(app.env)
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code":
            continue
        if "editorial" in cell.get("cell_metadata", {}).get("tags", []):
            cell["classes"].append("editorial")
            cell.insert(0, nodes.paragraph("", "", label(), classes=["editorial-title"]))
            env.editorial_docs.setdefault(env.docname, "blocks")
    if env.editorial_docs.get(env.docname) == "blocks":
        _insert_switch(doctree)


def _insert_switch(doctree):
    section = next(doctree.findall(nodes.section), None)
    if section is not None and isinstance(section[0], nodes.title):
        section.insert(1, nodes.raw("", SWITCH, format="html"))


def _fill_notes(app, doctree, fromdocname):
    env = _notes(app.env)
    for placeholder in list(doctree.findall(editor_notes_list)):
        listing = nodes.bullet_list(classes=["editor-notes"])
        for docname in docs_in_reading_order(env):
            for node_id, title, correction in env.editorial_notes.get(docname, []):
                ref = nodes.reference("", "", internal=True,
                                      refuri=app.builder.get_relative_uri(fromdocname, docname) + "#" + node_id)
                ref += nodes.Text(title)
                item = nodes.paragraph()
                item += nodes.Text(f"{env.titles[docname].astext()}：")
                item += ref
                if correction:
                    item += nodes.Text("（更正原稿）")
                listing += nodes.list_item("", item)
        placeholder.replace_self(listing if len(listing) else nodes.paragraph(text="（暂无编者注。）"))


def docs_in_reading_order(env):
    """Every document reachable from the root's toctree, depth first, root first."""
    order, stack = [], [env.config.root_doc]
    while stack:
        doc = stack.pop(0)
        if doc in order:
            continue
        order.append(doc)
        stack[0:0] = env.toctree_includes.get(doc, [])
    return order


def _page_context(app, pagename, templatename, context, doctree):
    env = _notes(app.env)
    if env.editorial_docs.get(pagename) == "blocks":
        app.add_js_file(None, body=SWITCH_JS)


def _outdated(app, env, added, changed, removed):
    """Any page read again may add or drop a note: the list of notes is read again too."""
    return sorted(_notes(env).editor_notes_docs) if (added or changed or removed) else []


def _purge(app, env, docname):
    _notes(env)
    env.editorial_notes.pop(docname, None)
    env.editorial_docs.pop(docname, None)
    env.editor_notes_docs.discard(docname)


def _merge(app, env, docnames, other):
    _notes(env)
    _notes(other)
    for docname in docnames:
        for store in ("editorial_notes", "editorial_docs"):
            if docname in getattr(other, store):
                getattr(env, store)[docname] = getattr(other, store)[docname]
    env.editor_notes_docs |= other.editor_notes_docs & set(docnames)


def setup(app):
    app.add_directive("editorial", EditorialDirective)
    app.add_directive("editorial-page", EditorialPageDirective)
    app.add_directive("editor-notes", EditorNotesDirective)
    app.add_node(editor_notes_list)
    app.connect("doctree-read", _mark_cells)
    app.connect("doctree-resolved", _fill_notes)
    app.connect("html-page-context", _page_context)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
