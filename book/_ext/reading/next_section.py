"""``:::{next-section}``: where a section page's reader goes next, as the section list has it.

The author's closing line names the next section of the printed book; whether the site
has it depends on the section list. The directive writes, at the start of its first
paragraph, the next section the site has (本站的下一节是《4.6 …》) or, when this is the
last, that the next one is not on the site and which sections are; the rest of its
content follows. So the closing note stays true as sections are added.
"""

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from book._ext.shared.sections import for_app, next_sentence


class NextSection(SphinxDirective):
    has_content = True

    def run(self):
        parsed = self.parse_text_to_nodes(next_sentence(for_app(self.env.app), self.env.docname))
        rest = self.parse_text_to_nodes("\n".join(self.content)) if self.content else []
        if parsed and rest and isinstance(rest[0], nodes.paragraph):
            parsed[0].extend(rest.pop(0).children)
        return [*parsed, *rest]


def setup(app):
    app.add_directive("next-section", NextSection)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
