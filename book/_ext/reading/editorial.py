"""The editor's layer: marked, separable from the author's text, and listed for review.

The section page is the author's manuscript; everything the site adds is the editor's.
This extension gives the editor's additions one look and one HTML class, ``editorial``,
on their outermost element, so a reader (and a test) can tell the two voices apart:

* ``:::{editorial} 标题`` … ``:::`` is a block of editorial prose. With a title it is an
  editor's note and is listed on the 编者注与勘误 page. ``:correction: <claim id>`` marks
  it as a correction of a manuscript claim, ``:qualifies: <claim id>`` as a note that
  qualifies one (limits it, or says what this build cannot measure), ``:checks: <claim
  id>`` as the paragraph that checks one whose verdict this build computes (so it can
  neither promise a correction nor a confirmation); all three are listed on
  that page, titled or not, and linked from the claim's ledger row (see claims.py).
  Without a title or either option it is a bridge or an explanation and carries only
  the 「编者」 label. Either option may name several claims, separated by spaces; an
  untitled block with one of them needs ``:summary:``, the line it is listed by, which
  its head shows as its title.
* ``:::{editorial-anchor} 标题`` with one of ``:correction:``, ``:qualifies:`` and
  ``:checks:`` and no content
  marks the paragraph that follows it, on a page that is the editor's throughout, as
  correcting or qualifying a claim: it renders the note's head line (「编者 · 限定 标题」)
  as the paragraph's title, and is listed and linked like a note.
* A code cell tagged ``editorial`` (its output and figure included) gets the class and
  the label too.
* **Two layers.** An editorial block teaches (explains, shows or lets the reader try
  something about attention) unless it is marked as checking (records values, checks
  the package or the manuscript, documents provenance or versions): ``:kind: check`` on
  the directive (with ``:summary:``, the line it shows folded, when it has no title), or
  the tag ``check`` beside ``editorial`` on a cell. A note and the cells right after it
  become one container; a checking block and the untitled checking blocks and cells after
  it become one ``<details>`` of class ``editorial editorial-check``, folded, whose
  ``<summary>`` is 「编者 · 核对」 and that block's summary or title.
* ``:::{editorial-page}`` at the top of a page marks the whole page as the editor's
  (编者撰写); such a page has no switch.
* Every other page with editorial blocks gets a switch of three views, remembered
  (localStorage) and applied before the page is painted: 原文 (the author alone, with
  the live outputs), 原文 + 讲解 (the default) and 全部 (with the checking, open). Without
  JavaScript the page shows the default view with the checking folded, and no switch.
  A link to an element the view hides (a ledger row's cell) shows its block alone.
* ``:::{editor-notes}`` is replaced, once every page is read, by the list of every
  editor's note, correction and qualification of the book, with links, in reading order.

What each page holds is gathered by :class:`EditorialCollector` (a Sphinx environment
collector, so parallel reads merge it) from marks the directives leave on the nodes.
"""

import json

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from book._ext.shared.env import PageStores
from book._ext.shared.nodes import ancestors, internal_ref

LABEL = "编者"
VIEWS = {"author": "原文", "lesson": "原文 + 讲解", "all": "全部（连同核对）"}
DEFAULT_VIEW = "lesson"  # a new reader's view: the author and the editor's teaching
SWITCH = ('<fieldset class="voice-switch"><legend>显示</legend>'
          + "".join(f'<label><input type="radio" name="attnbook-view" value="{view}"'
                    f'{" checked" if view == DEFAULT_VIEW else ""}> {text}</label>'
                    for view, text in VIEWS.items())
          + '<span class="voice-switch-hint">讲解：编者的说明、例子与图；核对：记录数值、'
            '核对配套包与原稿的单元</span></fieldset>')
# Applied before the page is painted. The view is remembered; a link to something the
# view hides (a ledger row's cell, say) shows that block, and only that one.
SWITCH_JS = """(() => {
  const key = "attnbook:view", root = document.documentElement, views = %s;
  let saved = null;
  try { saved = localStorage.getItem(key); } catch (e) { /* storage blocked: default view */ }
  root.dataset.voice = views.includes(saved) ? saved : "%s";
  const sync = () => {
    for (const box of document.querySelectorAll("details.editorial-check")) {
      box.open = root.dataset.voice === "all" || box.classList.contains("revealed");
    }
  };
  const reveal = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (!target || target.getClientRects().length) return;
    let block = null;
    for (let node = target; node && node !== root; node = node.parentElement) {
      if (node.matches(".editorial-check, .editorial")) block = node;
    }
    if (!block) return;
    block.classList.add("revealed");
    sync();
    target.scrollIntoView();
  };
  document.addEventListener("DOMContentLoaded", () => {
    for (const input of document.querySelectorAll(".voice-switch input")) {
      input.checked = input.value === root.dataset.voice;
      input.addEventListener("change", () => {
        if (!input.checked) return;
        root.dataset.voice = input.value;
        try { localStorage.setItem(key, input.value); } catch (e) { /* not remembered */ }
        sync();
      });
    }
    sync();
    reveal();
  });
  window.addEventListener("hashchange", reveal);
})();""" % (json.dumps(list(VIEWS)), DEFAULT_VIEW)


def label(text=LABEL):
    return nodes.inline(text, text, classes=["editorial-label"])


CHECK = "check"  # the layer of a block that checks (records values, checks the package or the
# manuscript, documents provenance) rather than teaches: `:kind: check`, or a cell's tag
CHECK_LABEL = f"{LABEL} · 核对"
CHECK_SUMMARY = "本次构建的核对"  # a folded check's line when it names nothing better
KINDS = {"correction": "更正", "qualifies": "限定", "checks": "核对"}  # option -> label beside 编者
LISTED_AS = {"correction": "（更正原稿）", "qualifies": "（限定原稿的说法）", "checks": "（核对原稿的说法）"}


class EditorialDirective(SphinxDirective):
    """A block of the editor's prose; with a title, an editor's note."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {**{option: directives.unchanged_required for option in (*KINDS, "summary")},
                   "kind": lambda arg: directives.choice(arg, (CHECK,))}

    def run(self):
        title = self.arguments[0] if self.arguments else ""
        kinds = [kind for kind in KINDS if kind in self.options]
        if len(kinds) > 1:
            raise self.error("an editorial block corrects, qualifies or checks one claim, not two of these")
        kind = kinds[0] if kinds else ""
        node_id = f"editorial-{self.env.new_serialno('editorial')}"
        box = nodes.container(ids=[node_id], classes=["editorial", *kinds])
        if kind and not title:
            title = self.options.get("summary", "")
            if not title:
                raise self.error(f"an untitled editorial block with :{kind}: needs :summary:, "
                                 "the line the 编者注与勘误 page lists it by and its head shows")
        head, plain = _head(self, kind, title)
        box += head
        self.state.nested_parse(self.content, self.content_offset, box)
        if plain:  # read by EditorialCollector
            box["editorial_note"] = {"id": node_id, "title": plain, "kind": kind,
                                     "claim": self.options.get(kind, "")}
        box["editorial_block"] = True
        if "kind" in self.options:
            box["editorial_layer"] = CHECK
            box["check_summary"] = plain or self.options.get("summary", "")
        return [box]


def _head(directive, kind, title):
    """The head line of a note, 「编者[ · 更正|限定] 标题」, and its title as plain text:
    a title the 编者注与勘误 page lists is the title the reader finds where it links."""
    head = nodes.paragraph("", "", label(f"{LABEL} · {KINDS[kind]}" if kind else LABEL),
                           classes=["editorial-title"])
    if not title:
        return head, ""
    text_nodes, messages = directive.state.inline_text(title, directive.lineno)
    head += text_nodes
    head += messages
    return head, "".join(node.astext() for node in text_nodes)


class EditorialAnchorDirective(SphinxDirective):
    """An anchor before a paragraph of an editor's page that corrects or qualifies a claim."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {kind: directives.unchanged_required for kind in KINDS}

    def run(self):
        kinds = [kind for kind in KINDS if kind in self.options]
        if len(kinds) != 1:
            raise self.error("editorial-anchor needs exactly one of :correction:, :qualifies: and :checks:")
        node_id = f"editorial-{self.env.new_serialno('editorial')}"
        box = nodes.container(ids=[node_id], classes=["editorial-anchor", kinds[0]])
        head, plain = _head(self, kinds[0], self.arguments[0])
        box += head
        box["editorial_note"] = {"id": node_id, "title": plain, "kind": kinds[0],
                                 "claim": self.options[kinds[0]]}
        return [box]


class EditorialPageDirective(SphinxDirective):
    """Marks the whole page as written by the editor (编者撰写)."""

    has_content = True

    def run(self):
        box = nodes.container(classes=["editorial", "editorial-page"])
        box += nodes.paragraph("", "", label("编者撰写"), classes=["editorial-title"])
        self.state.nested_parse(self.content, self.content_offset, box)
        box["editorial_page"] = True
        return [box]


class editor_notes_list(nodes.General, nodes.Element):
    """Placeholder for the list of editor's notes, filled at doctree-resolved."""


class EditorNotesDirective(SphinxDirective):
    def run(self):
        return [editor_notes_list()]


class EditorialCollector(PageStores):
    """Per page: the editor's notes (``env.editorial_notes``, docname -> [note dicts with
    ``id``, ``title``, ``kind`` and ``claim``]), whether the page is the editor's or has
    editorial blocks (``env.editorial_docs``: "page" or "blocks"), and whether it lists
    the notes (``env.editor_notes_docs``; any page read again may add or drop a note, so
    that page is read again too). Editorial code cells get their class, label and the
    page its switch here too."""

    STORES = ("editorial_notes", "editorial_docs", "editor_notes_docs")
    REREAD = "editor_notes_docs"

    def process_doc(self, app, doctree):
        env = EditorialCollector.stores(app.env)
        docname = env.docname
        kind = None
        for cell in doctree.findall(nodes.container):
            if cell.get("editorial_page"):
                kind = "page"
            elif cell.get("editorial_block") and kind is None:
                kind = "blocks"
            if cell.get("editorial_note"):
                env.editorial_notes.setdefault(docname, []).append(cell["editorial_note"])
            tags = cell.get("cell_metadata", {}).get("tags", []) if cell.get("nb_element") == "cell_code" else []
            if "editorial" in tags:
                cell["classes"].append("editorial")
                cell.insert(0, nodes.paragraph("", "", label(), classes=["editorial-title"]))
                if CHECK in tags:
                    cell["editorial_layer"] = CHECK
                kind = kind or "blocks"
        if kind:
            env.editorial_docs[docname] = kind
        if kind == "blocks":
            _group_blocks(doctree)
            _insert_switch(doctree)
        if next(doctree.findall(editor_notes_list), None) is not None:
            env.editor_notes_docs[docname] = True


def _is_block(node):
    return (isinstance(node, nodes.Element) and "editorial" in node.get("classes", ())
            and not node.get("editorial_page"))


def _is_cell(node):
    return node.get("nb_element") == "cell_code"


def _group_blocks(doctree):
    """One block per thing the reader meets: a note and the cells that follow it become one
    editorial container, and consecutive checking blocks one folded ``<details>``."""
    parents = {id(n.parent): n.parent for n in doctree.findall(_is_block)
               if not any(map(_is_block, ancestors(n)))}
    for parent in parents.values():
        children, grouped = list(parent.children), []
        while children:
            run = [children.pop(0)]
            if _is_block(run[0]):
                layer = run[0].get("editorial_layer")
                # a check with a summary or title of its own opens a fold of its own
                while (children and _is_block(children[0]) and children[0].get("editorial_layer") == layer
                       and ((layer == CHECK and not children[0].get("check_summary")) or _is_cell(children[0]))):
                    run.append(children.pop(0))
            grouped.append(_wrap(run) if _is_block(run[0]) else run[0])
        del parent[:]
        parent.extend(grouped)


def _wrap(run):
    """A run of editorial blocks as one container; the first head line (or, for checks, the
    ``<summary>``) stands for all of them: the other untitled 「编者」 lines go."""
    check = run[0].get("editorial_layer") == CHECK
    if len(run) == 1 and not check:
        return run[0]
    if check and len(run) == 1 and len(run[0]) == 1 and not _is_cell(run[0]):
        return _aside(run[0])
    if check:
        box = checking(classes=["editorial", "editorial-check"])
        # only the first check of a run has a summary: a later one opens a fold of its own
        box += checking_summary("", "", label(CHECK_LABEL), nodes.Text(run[0].get("check_summary") or CHECK_SUMMARY))
    else:
        box = nodes.container(classes=["editorial", "editorial-group"])
    for i, member in enumerate(run):
        head = member[0] if len(member) and "editorial-title" in member[0].get("classes", ()) else None
        if head is not None and (check or i) and len(head) == 1:
            member.remove(head)
        box += member
    return box


def _aside(block):
    """A check that is one line (its summary, no body), such as what the manuscript printed
    under an output: one small line, nothing to unfold."""
    line = nodes.paragraph("", "", label(CHECK_LABEL), nodes.Text(block["check_summary"]),
                           classes=["editorial-title"])
    return nodes.container("", line, ids=block["ids"], classes=["editorial", "editorial-check", "editorial-aside"])


class checking(nodes.General, nodes.Element):
    """Blocks that check rather than teach: folded (``<details>``) unless the view shows them."""


class checking_summary(nodes.General, nodes.TextElement):
    """The line a folded check shows."""


def _html_element(tag, **attributes):
    """The HTML visitors of a node written as the element ``tag``."""
    def visit(self, node):
        self.body.append(self.starttag(node, tag, **attributes))

    def depart(self, node):
        self.body.append(f"</{tag}>\n")

    return visit, depart


def _insert_switch(doctree):
    section = next(doctree.findall(nodes.section), None)
    if section is not None and isinstance(section[0], nodes.title):
        section.insert(1, nodes.raw("", SWITCH, format="html"))


def _fill_notes(app, doctree, fromdocname):
    env = EditorialCollector.stores(app.env)
    for placeholder in list(doctree.findall(editor_notes_list)):
        listing = nodes.bullet_list(classes=["editor-notes"])
        for docname in docs_in_reading_order(env):
            for note in env.editorial_notes.get(docname, []):
                item = nodes.paragraph()
                item += nodes.Text(f"{env.titles[docname].astext()}：")
                item += internal_ref(app, fromdocname, docname, note["id"], note["title"])
                if note["kind"]:
                    item += nodes.Text(LISTED_AS[note["kind"]])
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
    env = EditorialCollector.stores(app.env)
    if env.editorial_docs.get(pagename) == "blocks":
        app.add_js_file(None, body=SWITCH_JS)


def setup(app):
    app.add_directive("editorial", EditorialDirective)
    app.add_directive("editorial-page", EditorialPageDirective)
    app.add_directive("editorial-anchor", EditorialAnchorDirective)
    app.add_directive("editor-notes", EditorNotesDirective)
    app.add_node(editor_notes_list)
    app.add_node(checking, html=_html_element("details"))
    app.add_node(checking_summary, html=_html_element("summary", CLASS="editorial-title"))
    app.add_env_collector(EditorialCollector)
    app.connect("doctree-resolved", _fill_notes)
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 4}
