"""book/_ext/writing/code_lines.py: each line of a code block in a ``span.line``, the text unchanged.

The markup is what lets a long line wrap with a continuation mark (book.css, its last
section; tests/test_code_wrap_browser.py looks at it in Chromium). Here: the splitter
keeps every character of the code, and in the build every code input and every text
output is split.
"""

import html
import re

import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from book._ext.writing import code_lines
from buildfiles import html_pages, soup


SOURCE = '''class Layer:
    """多行的
    文档字符串 <与> & 引号"""

    def call(self, x):  # 一条很长的注释，在手机上要折行
        return x
'''


def text_of(markup):
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def inner_pre(markup):
    return re.search(r"<pre[^>]*>(.*)</pre>", markup, re.S).group(1)


@pytest.mark.parametrize("formatter", [HtmlFormatter(), HtmlFormatter(hl_lines=[2, 3, 4])],
                         ids=["plain", "emphasised-lines"])
def test_each_line_in_a_span_and_the_code_unchanged(formatter):
    pre = inner_pre(highlight(SOURCE, PythonLexer(), formatter))
    split = code_lines.split_lines(pre)
    assert text_of(split) == text_of(pre) == SOURCE
    lines = re.findall(r'<span class="line"(?: style="--indent:(\d+)")?>', split)
    assert len(lines) == SOURCE.count("\n")
    assert [int(n or 0) for n in lines] == [0, 4, 4, 0, 4, 8]  # a blank line carries no indent
    # Every line is whole in its span: its tags balanced, its newline the span's last character.
    for body in re.findall(r'<span class="line"[^>]*>(.*?\n)</span>(?=<span class="line"|$)', split, re.S):
        assert body.count("<span") == body.count("</span>"), body
    assert split.count("\n") == SOURCE.count("\n")


@pytest.mark.parametrize("markup", ["<span>a</span>\n<b>b</b>\n", "<span>a\n", "a</span>\n"])
def test_what_pygments_does_not_write_is_left_alone(markup):
    assert code_lines.split_lines(markup) is None


@pytest.mark.book
def test_every_code_block_of_the_site_is_split_into_lines():
    unsplit, counts = [], {"input": 0, "output": 0}
    for page in html_pages():
        for pre in soup(page).select("div.highlight pre"):
            counts["output" if pre.find_parent(class_="cell_output") else "input"] += 1
            lines = pre.select(":scope > span.line")
            rest = "".join(str(c) for c in pre.children if getattr(c, "name", None) != "span"
                           or "line" not in c.get("class", []))
            if not lines or rest.strip() or "".join(line.get_text() for line in lines) != pre.get_text():
                unsplit.append(f"{page}: {pre.get_text()[:60]!r}")
    assert counts["input"] > 50 and counts["output"] > 50, f"only {counts} code blocks found: is the site built?"
    assert not unsplit, "code blocks not wholly in span.line:\n  " + "\n  ".join(unsplit[:20])
