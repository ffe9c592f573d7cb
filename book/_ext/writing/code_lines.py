"""Each line of a highlighted code block in its own ``<span class="line">``, so that it can wrap.

On a 390 px phone a code block is about 37 columns wide, and most of the author's
listings, the editor's cells and the cells' outputs have longer lines (comments, printed
arrays, the checkers' reports): the block scrolled sideways, and the end of each line was
out of sight; at 1280 px some comments still ran past the block's edge. book.css (its
last section) wraps every code block on screen instead, and a wrapped line needs two
things that CSS cannot do to a bare ``<pre>``: its continuation rows indented under the
line's own indentation, and a continuation mark on those rows only. Both need an
element per source line, which this writes at HTML-writing time: the HTML translator in
use is wrapped (shared/translators.py, as for images.py), and after Sphinx has
highlighted a literal block, the ``<pre>`` that Pygments wrote is split at its newlines into

    <span class="line" style="--indent:N">…tokens of the line…\\n</span>

where ``N`` is the line's leading spaces (a blank line and an unindented one carry no
style), with an empty ``span.wrap-here`` after each dot, opening bracket and comma
token, where a long name may wrap. Only the markup changes: every character of the
code, each newline included, is where it was, so the text of the ``<pre>`` (what the
copy button copies, what the tests compare with the manuscript) is the same. A token
span that runs over a newline (Pygments' ``hll`` for an emphasised line, an ANSI colour
of an output) is closed at the end of the line and opened again on the next.

Code inputs and a cell's text outputs (``.cell_output pre``, highlighted as
``myst-ansi``) alike: an output wraps with the same mark. A parsed literal (not
highlighted), a block with line numbers in a table, or a ``<pre>`` with anything but
``<span>`` tags in it is left as it was.
"""

import html
import re

from docutils import nodes

from book._ext.shared.translators import wrap_html_translators

_PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"</?span\b[^>]*>")
# After a dot, an opening bracket or a comma a long name may wrap (book.css gives
# span.wrap-here a zero-width space there, on screen only): tf.keras.layers.Dense(d_model)
# breaks at tf.keras. rather than inside d_model.
_BREAK_AFTER = re.compile(r'<span class="[op]">[.(\[,]</span>')


def split_lines(code_html: str) -> str | None:
    """The inside of a Pygments ``<pre>`` with each line in a ``span.line``; None when it
    is not what Pygments writes (a tag other than <span>, or unbalanced spans)."""
    out, line, text, stack = [], [], [], []
    reopen = 0  # the spans still open at the last newline, not yet opened again on this line

    def flush():
        nonlocal reopen
        line.extend(stack[len(stack) - reopen:] if reopen else ())
        reopen = 0

    def end_line(newline: str):
        nonlocal reopen
        line.append("</span>" * (len(stack) - reopen))
        plain = html.unescape("".join(text))
        indent = len(plain) - len(plain.lstrip(" "))
        style = f' style="--indent:{indent}"' if indent and plain.strip() else ""
        out.append(f'<span class="line"{style}>{"".join(line)}{newline}</span>')
        line.clear()
        text.clear()
        reopen = len(stack)

    for token in _TOKEN.findall(code_html):
        if token.startswith("</"):
            if not _TAG.fullmatch(token) or not stack:
                return None
            stack.pop()
            if reopen:  # closed before anything of it on this line: never opened again
                reopen -= 1
            else:
                line.append(token)
        elif token.startswith("<"):
            if not _TAG.fullmatch(token):
                return None
            flush()
            line.append(token)
            stack.append(token)
        else:
            for i, part in enumerate(token.split("\n")):
                if i:
                    flush()
                    end_line("\n")
                if part:
                    flush()
                    line.append(part)
                    text.append(part)
    if stack:
        return None
    if text:  # a last line without a newline
        end_line("")
    # Anything else after the last newline is tags with no text in them.
    return "".join(out)


class CodeLinesMixin:
    def visit_literal_block(self, node):
        start = len(self.body)
        try:
            super().visit_literal_block(node)
        except nodes.SkipNode:  # Sphinx highlighted it and wrote the whole block
            self._split_code_lines(start)
            raise

    def _split_code_lines(self, start):
        for index in range(start, len(self.body)):
            chunk = self.body[index]
            if "<table" in chunk:  # line numbers in a table: their own layout
                return
            match = _PRE.search(chunk)
            if not match:
                continue
            lines = split_lines(match.group(2))
            if lines is not None:
                lines = _BREAK_AFTER.sub(r'\g<0><span class="wrap-here"></span>', lines)
                self.body[index] = chunk[:match.start(2)] + lines + chunk[match.end(2):]
            return


def setup(app):
    # After pydata-sphinx-theme's wrapper (500), images.py's (600) and a11y.py's (700).
    app.connect("builder-inited", wrap_html_translators(CodeLinesMixin, "CodeLines"), priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
