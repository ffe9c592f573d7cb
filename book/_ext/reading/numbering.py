"""Number figures so that the editor's can never clash with the printed book's.

Section 4.5 is one section of a longer book whose figures are numbered across the
book: the manuscript's only figure is 图 20, and 图 21 belongs to the next section. So
the manuscript's figures keep their printed numbers (``manuscript_figures``: label ->
number) and every other figure, all of them the editor's, is numbered in reading order
with ``editorial_figure_format`` (编者图 4.5-1, 4.5-2, …), a form no printed number
takes. With ``numfig_format`` ``"%s"`` for figures, the whole label is the "number".
Both formats write ``{section}`` where the section number goes.

Exercises are numbered within the section, as 练习 4.5.1, 4.5.2 and so on, which are
also the ids the checker takes: ``enumerable_prefix[kind]`` goes in front of Sphinx's
numbers of that kind. The exercises' prefix is not written in ``_config.yml``: it is
the exercise catalog's ``SECTION`` (``attnbook.exercises.catalog``, read by
``shared.checkout.section_number``), the one place the section number is written; the
figure, table and listing formats take it from there too. The parentheses around
exercise titles are made full-width: 练习 4.5.1（标题）.
"""

import copy

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from book._ext.shared.checkout import section_number

_FULL_WIDTH = {" (": "（", ")": "）"}


def _section_numbers(app, config):
    """Put the catalog's SECTION into the number formats and the exercises' prefix."""
    section = section_number()
    config.numfig_format = {kind: fmt.replace("{section}", section) for kind, fmt in config.numfig_format.items()}
    config.editorial_figure_format = config.editorial_figure_format.replace("{section}", section)
    if "exercise" not in config.enumerable_prefix:
        config.enumerable_prefix = {**config.enumerable_prefix, "exercise": [int(n) for n in section.split(".")]}


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
    _renumber_figures(env, app.config.manuscript_figures, app.config.editorial_figure_format)
    prefixes = {kind: tuple(prefix) for kind, prefix in app.config.enumerable_prefix.items()}
    for fignumbers in env.toc_fignumbers.values():
        for kind, prefix in prefixes.items():
            for node_id, number in fignumbers.get(kind, {}).items():
                fignumbers[kind][node_id] = prefix + number
    before = getattr(env, "labelled_fignumbers", {})
    return sorted(doc for doc, numbers in env.toc_fignumbers.items() if numbers != before.get(doc))


def _renumber_figures(env, manuscript, editorial_format):
    """Printed numbers for the manuscript's figures, 编者图 numbers for the rest."""
    figures = sorted((number, docname, figure_id)
                     for docname, fignumbers in env.toc_fignumbers.items()
                     for figure_id, number in fignumbers.get("figure", {}).items())
    editorial = 0
    for _, docname, figure_id in figures:
        if figure_id in manuscript:
            label = f"图 {manuscript[figure_id]}"
        else:
            editorial += 1
            label = editorial_format.format(editorial)
        env.toc_fignumbers[docname]["figure"][figure_id] = (label,)


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
    app.add_config_value("manuscript_figures", {}, "env", types=[dict])
    app.add_config_value("editorial_figure_format", "编者图 {}", "env", types=[str])
    app.add_config_value("enumerable_prefix", {}, "env", types=[dict])
    app.connect("config-inited", _section_numbers)
    # Sphinx assigns the numbers in its own env-get-updated handler (priority 500).
    app.connect("env-get-updated", _sphinx_numbers_back, priority=400)
    app.connect("env-get-updated", _renumber, priority=900)
    app.add_post_transform(FullWidthExerciseTitles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
