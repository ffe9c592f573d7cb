"""Number figures, tables, listings and exercises by section, so the editor's never clash with the printed book's.

Each section is one section of a longer printed book whose figures are numbered across
the book (4.5's manuscript prints 图 20, and 图 21 belongs to a later section). So a
manuscript's figures keep their printed numbers: a figure on a section page whose
caption is a figure line of that section's manuscript (``图 20 注意力打分的信号流``) is
图 20, whether the editor has drawn it or it still waits in its slot. Every other figure,
table and listing is the editor's and is numbered in reading order within its section
(the section page and the pages under it in the toc, ``shared.sections``): 编者图 4.5-1,
编者表 4.6-2, 编者代码 4.5-1, forms no printed number takes. A page outside every section
(the preface, an appendix) numbers them without a section: 编者图 1.

Exercises are numbered within their section too, 练习 4.5.1, 4.5.2 …, which are the ids
the checker takes (``attnbook.exercises.catalog`` keys them by the same section). With
``numfig_format`` ``"%s"`` for figures, tables and listings, the whole label is the
"number". The parentheses sphinx-exercise puts around an exercise's title are made
full-width: 练习 4.5.1（标题）.
"""

import copy

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from book._ext.shared.env import PageStores
from book._ext.shared.sections import for_app

EDITORIAL = {"figure": "编者图", "table": "编者表", "code-block": "编者代码"}
_FULL_WIDTH = {" (": "（", ")": "）"}


class FigureCaptions(PageStores):
    """Per page, ``{figure id: caption text}``: which figures are the manuscript's."""

    STORES = ("figure_captions",)

    def process_doc(self, app, doctree):
        captions = {}
        for figure in doctree.findall(nodes.figure):
            caption = next(iter(figure.findall(nodes.caption)), None)
            for node_id in figure["ids"]:
                captions[node_id] = caption.astext().strip() if caption else ""
        self.stores(app.env).figure_captions[app.env.docname] = captions


def _sphinx_numbers_back(app, env):
    """Before Sphinx numbers again, give it back its own numbers of the last build.

    Sphinx rewrites every page whose numbers differ from the stored ones; compared with
    our labels, they always would, and every page with a figure would be written again
    on a build with nothing to do."""
    if hasattr(env, "sphinx_fignumbers"):
        env.labelled_fignumbers, env.toc_fignumbers = env.toc_fignumbers, env.sphinx_fignumbers
    return []


def _renumber(app, env):
    """Relabel Sphinx's numbers; return the pages whose labels changed."""
    env.sphinx_fignumbers = copy.deepcopy(env.toc_fignumbers)
    labels = labels_by_section(for_app(app), env.toc_fignumbers, FigureCaptions.stores(env).figure_captions)
    for (docname, kind, node_id), label in labels.items():
        env.toc_fignumbers[docname][kind][node_id] = label
    before = getattr(env, "labelled_fignumbers", {})
    return sorted(doc for doc, numbers in env.toc_fignumbers.items() if numbers != before.get(doc))


def labels_by_section(book, fignumbers, captions):
    """``{(docname, kind, id): number}``: Sphinx's book-wide numbers (``fignumbers``, as in
    ``env.toc_fignumbers``) counted again within each section."""
    ordered = sorted((kind, number, docname, node_id)
                     for docname, kinds in fignumbers.items()
                     for kind, numbers in kinds.items() if kind in (*EDITORIAL, "exercise")
                     for node_id, number in numbers.items())
    counts, labels = {}, {}
    for kind, number, docname, node_id in ordered:
        section = book.of(docname)
        printed = section and docname == section.page and \
            {c: n for n, c in section.figures.items()}.get(captions.get(docname, {}).get(node_id))
        if kind == "figure" and printed:
            labels[docname, kind, node_id] = (f"图 {printed}",)
            continue
        key = (kind, section.number if section else "")
        counts[key] = counts.get(key, 0) + 1
        n = counts[key]
        if kind == "exercise":
            labels[docname, kind, node_id] = (*map(int, section.number.split(".")), n) if section else number
        else:
            labels[docname, kind, node_id] = (f"{EDITORIAL[kind]} {section.number}-{n}" if section
                                              else f"{EDITORIAL[kind]} {n}",)
    return labels


class FullWidthExerciseTitles(SphinxPostTransform):
    """Replace the ASCII " (" and ")" that sphinx-exercise puts around a title."""

    default_priority = 30  # after sphinx-exercise builds the titles (20, 21)

    def run(self):
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

        kinds = (exercise_enumerable_node, exercise_node, solution_node)
        for box in self.document.findall(lambda node: isinstance(node, kinds)):
            title = box.children[0] if box.children else None
            if not isinstance(title, nodes.title):
                continue
            for text in list(title.findall(nodes.Text)):
                if str(text) in _FULL_WIDTH:
                    text.parent.replace(text, nodes.Text(_FULL_WIDTH[str(text)]))


def setup(app):
    app.add_env_collector(FigureCaptions)
    # Sphinx assigns the numbers in its own env-get-updated handler (priority 500).
    app.connect("env-get-updated", _sphinx_numbers_back, priority=400)
    app.connect("env-get-updated", _renumber, priority=900)
    app.add_post_transform(FullWidthExerciseTitles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
