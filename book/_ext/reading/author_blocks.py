"""Two of the author's blocks that `make page` writes and the site has to show with a word from the editor.

* ``:::{manuscript-figure} 图 21 图神经网络的消息传递`` is a figure line of the manuscript
  whose drawing the editor has not made yet: a numbered figure (``fig-21``; numbering.py
  gives it its printed number, 图 21, from the manuscript) with the author's caption and,
  in its frame, the editor's note that the drawing is still to come. When the editor
  draws it, a figure cell with the same caption takes the slot's place.
* A ``listing-printed-output`` code block holds the comments a listing printed in place
  of its output (``# 输出示例：…``). It stands under the live output, so the editor labels
  it as what the manuscript printed, lest it read as a second output.
"""

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from book._ext.reading.editorial import label
from book._ext.shared.manuscript import FIGURE, FIGURE_SLOT, PRINTED_LABEL, PRINTED_OUTPUT, WAITING


class ManuscriptFigure(SphinxDirective):
    """A slot for a figure of the manuscript: its number, caption and a note that it waits."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"name": lambda arg: arg.strip()}

    def run(self):
        match = FIGURE.match(self.arguments[0])
        if not match:
            raise self.error(f"expected a manuscript figure line, 图 <number> <caption>: {self.arguments[0]!r}")
        figure = nodes.figure(classes=["figure-slot"])
        figure["names"].append(self.options.get("name", f"fig-{match['number']}"))
        self.state.document.note_explicit_target(figure, figure)
        figure += nodes.container("", nodes.paragraph("", "", label(), nodes.Text(WAITING)),
                                  classes=["editorial", "figure-slot-waiting"])
        figure += nodes.caption(match["caption"], match["caption"])
        return [figure]


def label_printed_outputs(app, doctree):
    """Put the editor's label beside each block of a listing's printed output: the two in one
    ``printed-output`` box, on one line where the width allows (book.css)."""
    for block in list(doctree.findall(nodes.literal_block)):
        if PRINTED_OUTPUT in block.get("classes", ()):
            note = nodes.container("", nodes.paragraph("", "", label(), nodes.Text(PRINTED_LABEL)),
                                   classes=["editorial", "printed-output-label"])
            block.parent.replace(block, nodes.container("", note, block.deepcopy(), classes=["printed-output"]))


def setup(app):
    app.add_directive(FIGURE_SLOT, ManuscriptFigure)
    app.connect("doctree-read", label_printed_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
