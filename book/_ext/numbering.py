"""Number figures and exercises the way the printed book does.

Section 4.5 is one section of a longer book. Its figures are numbered across the book,
and the first one is 图 20; its exercises are numbered within the section, as 练习
4.5.1, 4.5.2 and so on, which are also the ids the checker takes
(``check("4.5.2", ...)``). Sphinx counts every kind of number from 1, so after it
assigns the numbers this shifts figure numbers by ``fignum_start - 1`` and puts
``enumerable_prefix[kind]`` in front of the numbers of each other kind. It also
writes the parentheses around exercise titles full-width: 练习 4.5.1（标题）.
"""

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

_FULL_WIDTH = {" (": "（", ")": "）"}


def _renumber(app, env):
    shift = app.config.fignum_start - 1
    prefixes = {kind: tuple(prefix) for kind, prefix in app.config.enumerable_prefix.items()}
    for fignumbers in env.toc_fignumbers.values():
        for figure_id, number in fignumbers.get("figure", {}).items():
            fignumbers["figure"][figure_id] = number[:-1] + (number[-1] + shift,)
        for kind, prefix in prefixes.items():
            for node_id, number in fignumbers.get(kind, {}).items():
                fignumbers[kind][node_id] = prefix + number
    return []


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
    app.add_config_value("fignum_start", 1, "env", types=[int])
    app.add_config_value("enumerable_prefix", {}, "env", types=[dict])
    # Sphinx assigns the numbers in its own env-get-updated handler (priority 500).
    app.connect("env-get-updated", _renumber, priority=900)
    app.add_post_transform(FullWidthExerciseTitles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
