"""book/_ext/writing/tables.py: which tables become cards on a phone, and their labels.

book.css sets a table with the class ``cards`` as one card a row on a narrow screen, each
body cell under its ``data-label``; tests/test_code_wrap_browser.py measures the result
in Chromium. Here: one header row over plain rows gets each column's header text; a table
with a cell spanning rows or columns, or with no header row, is left as it was.
"""

from docutils import nodes
from docutils.core import publish_doctree

from book._ext.writing import tables

PLAIN = """
+------+------+-----------+
|      | 性质 | 时间      |
+======+======+===========+
| 完整 | 精确 | O(n²)     |
+------+------+-----------+
| 滑动 | 受限 | O(n·*w*)  |
+------+------+-----------+
"""
SPANNING = """
+---+---+---+
| A | B | C |
+===+===+===+
| a | b & c |
+---+---+---+
| x | y | z |
+---+---+---+
"""
HEADLESS = """
+---+---+
| a | b |
+---+---+
| x | y |
+---+---+
"""


def table(rst):
    return next(publish_doctree(rst).findall(nodes.table))


def test_one_header_row_gives_each_column_its_label():
    assert tables.card_labels(table(PLAIN)) == ["", "性质", "时间"]


def test_a_spanning_cell_or_no_header_row_is_left_alone():
    assert tables.card_labels(table(SPANNING)) is None
    assert tables.card_labels(table(HEADLESS)) is None
