"""A page's tables as cards on a phone: each body cell carries its column's header text.

On a 390 px phone a table of three to five columns leaves each column a few characters:
Chinese text breaks between any two characters, so a short cell stacked one character
a line (「RNN」 one letter a line), and a formula such as O(n·window) broke in two. book.css
("Tables as cards") sets such a table as cards there instead, one card a row, each cell
under its column's header text, as the claims ledger does (resolving/claims.py). The
header text is what this writes: at ``doctree-resolved`` every table with one header
row and no cell spanning rows or columns gets the class ``cards`` and each of its body
cells the text of its column's header, which the HTML translator in use (wrapped at
``builder-inited``, as code_lines.py does) writes as ``data-label``. A table with
another shape, and the ledger, which has its own labels, are left as they were.
"""

import re

from docutils import nodes

from book._ext.shared.translators import wrap_html_translators

CLASS = "cards"
_LABEL = "card_label"  # the entry node's attribute that holds its data-label


def card_labels(table):
    """The header text of each column of ``table``, or None when it is not one header
    row over body rows without spanning cells."""
    groups = [child for child in table.children if isinstance(child, nodes.tgroup)]
    if len(groups) != 1 or "claims-ledger" in table["classes"]:
        return None
    heads = list(groups[0].findall(nodes.thead))
    bodies = list(groups[0].findall(nodes.tbody))
    if len(heads) != 1 or len(bodies) != 1 or len(heads[0].children) != 1:
        return None
    if any("morerows" in e or "morecols" in e for e in groups[0].findall(nodes.entry)):
        return None
    labels = [" ".join(entry.astext().split()) for entry in heads[0].children[0].children]
    widths = {len(row.children) for row in bodies[0].children}
    return labels if len(labels) > 1 and widths == {len(labels)} else None


def _label_tables(app, doctree, docname):
    for table in doctree.findall(nodes.table):
        labels = card_labels(table)
        if labels is None:
            continue
        table["classes"].append(CLASS)
        for row in next(table.findall(nodes.tbody)).children:
            for entry, label in zip(row.children, labels):
                entry[_LABEL] = label


class TableCardsMixin:
    """Writes a body cell's ``data-label``: docutils writes a cell's classes and ids only."""

    def visit_entry(self, node):
        super().visit_entry(node)
        if _LABEL not in node:
            return
        index = next(i for i in range(len(self.body) - 1, -1, -1) if self.body[i].startswith(("<td", "<th")))
        attribute = f' data-label="{self.attval(node[_LABEL])}"'
        self.body[index] = re.sub(r"/?>\s*$", lambda m: attribute + m.group(0), self.body[index], count=1)


def setup(app):
    app.connect("doctree-resolved", _label_tables)
    # After code_lines.py's wrapper (800): each wraps the classes the ones before it made.
    app.connect("builder-inited", wrap_html_translators(TableCardsMixin, "TableCards"), priority=850)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
