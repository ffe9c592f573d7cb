"""book/_ext/writing/notebook_markdown.py: MyST markdown cells made plain Markdown for Jupyter.

No build: a small page object stands in for what Sphinx resolves.
"""

import subprocess
import sys
import textwrap

import nbformat
import pytest

from book._ext.writing import notebook_markdown as markdown

SITE = "https://example.github.io/book/"


class FakePage(markdown.Page):
    """Resolves {ref}`x` to '[X](SITE#x)' and includes files from ``folder``."""

    def __init__(self, folder=None):
        self.folder, self.asked = folder, []

    def include(self, argument, options):
        path = self.folder / argument
        text = path.read_text(encoding="utf-8")
        if "pyobject" in options:
            start = text.index(f"class {options['pyobject']}")
            text = text[start:]
        return markdown.Included(text, options.get("language", "python"), path, "pyobject" not in options)

    def role(self, name, text):
        self.asked.append((name, text))
        return f"[{text.upper()}]({SITE}#{text})" if name in ("ref", "doc", "cite:p") else None

    def exercise_title(self, label):
        return {"ex-one": "练习 4.5.1（第一题）"}.get(label)

    def link(self, target):
        return SITE + target.replace(".md", ".html")

    def figure_number(self, name):
        return {"fig-a": "图 20"}.get(name)

    def next_section(self):
        return "本站的下一节是《{ref}`sec-next`》。"


def convert(source, page=None, outputs=()):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(textwrap.dedent(source), id="m1")])
    if outputs:
        notebook.cells.insert(0, nbformat.v4.new_code_cell("glue()", id="c1"))
        notebook.cells[0].outputs = list(outputs)
    return markdown.standalone(notebook, page or FakePage())


def only_markdown(source, page=None):
    (cell,) = convert(source, page).cells
    assert cell.cell_type == "markdown"
    return cell.source


def test_editorial_blocks_become_quotes_headed_editor():
    text = only_markdown("""
        前文。

        :::{editorial} 怎样读
        第一段。

        第二段。
        :::

        :::{editorial-page}
        本页由编者撰写。
        :::

        :::{editorial} 编者的扩展
        :::
        """)
    assert text == ("前文。\n\n> **编者：怎样读**\n>\n> 第一段。\n>\n> 第二段。\n\n> **编者**\n>\n> 本页由编者撰写。"
                    "\n\n> **编者的扩展**")


def test_display_math_in_a_quote_is_one_line():
    """Jupyter takes math out before it reads the Markdown: a "> " inside would stay."""
    text = only_markdown(":::{editorial}\n公式：\n\n$$\na = b\n  + c\n$$\n:::\n\n$$\nx\n$$")
    assert text == "> **编者**\n>\n> 公式：\n>\n> $$ a = b + c $$\n\n$$\nx\n$$"


def test_admonitions_keep_their_title_and_lose_their_options():
    text = only_markdown("""
        :::{admonition} 本节摘要
        :class: note

        摘要。
        :::

        ```{warning}
        小心。
        ```
        """)
    assert text == "> **本节摘要**\n>\n> 摘要。\n\n> **警告**\n>\n> 小心。"


def test_roles_are_resolved_and_unknown_ones_keep_their_text():
    page = FakePage()
    text = only_markdown("见 {ref}`sec-a`、{doc}`other`、{term}`查询 <query>`、{abc}`x` 与 {math}`a^2`。", page)
    assert text == f"见 [SEC-A]({SITE}#sec-a)、[OTHER]({SITE}#other)、查询、x 与 $a^2$。"
    assert ("term", "查询 <query>") in page.asked


def test_code_spans_and_plain_code_fences_are_left_as_they_are():
    source = textwrap.dedent("""\
        写成 `` {ref}`x` `` 就是一个角色。

        ```markdown
        {ref}`x`
        :::{note}
        ```
        """).strip()
    page = FakePage()
    assert only_markdown(source, page) == source
    assert page.asked == []


def test_targets_comments_and_equation_labels_go():
    text = only_markdown("""
        (sec-a)=
        # 标题
        % 编辑的注释
        $$
        x = 1
        $$ (eq-x)
        """)
    assert text == "# 标题\n$$\nx = 1\n$$"


def test_relative_links_point_to_the_site_and_others_stay():
    text = only_markdown("[甲](other.md#a)、[乙](https://x.org/) 与 [丙](#here)")
    assert text == f"[甲]({SITE}other.html#a)、[乙](https://x.org/) 与 [丙](#here)"


def test_shown_code_is_a_fenced_block_and_exercise_code_a_cell(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("from ._private import helper\n")
    (tmp_path / "pkg" / "_private.py").write_text("def helper():\n    return 41\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text(textwrap.dedent('''\
        """模块。"""

        import math

        from .._private import helper


        class Start:
            def value(self):
                return helper() + math.floor(1.5)
        '''))
    page = FakePage(tmp_path)
    notebook = convert("""
        ```{literalinclude} pkg/_private.py
        :language: python
        ```

        ````{exercise} 修好它
        :label: ex-one

        从这里开始：

        ```{literalinclude} pkg/sub/mod.py
        :pyobject: Start
        ```

        想一想。
        ````
        """, page)
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds == ["markdown", "code", "markdown"]
    first, code, last = notebook.cells
    assert first.source == ("```python\ndef helper():\n    return 41\n```\n\n### 练习 4.5.1（第一题）\n\n从这里开始：")
    assert last.source == "想一想。"
    assert "from pkg import helper\nimport math" in code.source or "import math\nfrom pkg import helper" in code.source
    assert len({cell.id for cell in notebook.cells}) == 3
    # As in a reader's kernel: a fresh interpreter whose working folder holds the files.
    ran = subprocess.run([sys.executable, "-c", code.source + "\nprint(Start().value())"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.split() == ["42"], ran.stderr


def test_runnable_class_makes_a_code_cell_outside_an_exercise(tmp_path):
    (tmp_path / "start.py").write_text("import math\n\nVALUE = math.floor(2.5)\n")
    notebook = convert("```{literalinclude} start.py\n:class: runnable\n```", FakePage(tmp_path))
    (cell,) = notebook.cells
    assert cell.cell_type == "code" and cell.source.endswith("import math\n\nVALUE = math.floor(2.5)\n")


def test_solutions_are_folded_as_on_the_page():
    text = only_markdown("""
        ```{solution-start} ex-one
        :class: dropdown
        ```

        答案。

        ```{solution-end}
        ```

        之后。
        """)
    assert text == "<details>\n<summary>解答：练习 4.5.1（第一题）</summary>\n\n答案。\n\n</details>\n\n之后。"


def test_a_check_cell_inside_a_solution_splits_the_fold():
    cells = [nbformat.v4.new_markdown_cell("```{solution-start} ex-one\n```\n\n答案。", id="m1"),
             nbformat.v4.new_code_cell("check()", id="c1"),
             nbformat.v4.new_markdown_cell("还有。\n\n```{solution-end}\n```\n\n下一题。", id="m2"),
             nbformat.v4.new_markdown_cell("再下一题。", id="m3")]
    notebook = markdown.standalone(nbformat.v4.new_notebook(cells=cells), FakePage())
    assert [cell.source for cell in notebook.cells] == [
        "<details>\n<summary>解答：练习 4.5.1（第一题）</summary>\n\n答案。\n\n</details>", "check()",
        "<details>\n<summary>解答：练习 4.5.1（第一题）（续）</summary>\n\n还有。\n\n</details>\n\n下一题。",
        "再下一题。"]


def test_a_figure_slot_and_the_closing_pointer_say_what_the_page_says():
    assert only_markdown(":::{manuscript-figure} 图 21 消息传递\n:::\n") == \
        f"> **编者**\n>\n> {markdown.WAITING}\n\n**图 21**　消息传递"
    text = only_markdown("::::{editorial}\n:::{next-section}\n去做练习。\n:::\n::::\n")
    assert f"> 本站的下一节是《[SEC-NEXT]({SITE}#sec-next)》。去做练习。" in text


def test_unknown_directives_keep_only_their_content():
    text = only_markdown("""
        ::::{container} box
        :class: wide

        :::{note}
        里面。
        :::
        ::::
        """)
    assert text == "> **注**\n>\n> 里面。"


def glue_output(name, text):
    prefix = "application/papermill.record/"
    return nbformat.from_dict({"output_type": "display_data",  # as attnbook.pages.glue writes it
                               "data": {prefix + "text/plain": text, prefix + "application/json": {"value": 0}},
                               "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}}})


def test_glued_values_show_in_the_text_and_their_hidden_outputs_go():
    shown = nbformat.v4.new_output("stream", name="stdout", text="printed\n")
    notebook = convert("比值 {glue:text}`ratio:.2f`，名字 {glue:text}`name`，{glue}`ratio`。",
                       outputs=[glue_output("ratio", "0.12345"), shown, glue_output("name", "键")])
    code, cell = notebook.cells
    assert cell.source == "比值 0.12，名字 键，0.12345。"
    assert code.outputs == [shown]


def test_the_notebook_given_is_left_unchanged():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(":::{note}\nx\n:::", id="m1")])
    before = nbformat.writes(notebook)
    markdown.standalone(notebook, FakePage())
    assert nbformat.writes(notebook) == before


@pytest.mark.parametrize("source", ["```{note}\n没有结尾", "::::{note}\n:::\n"])
def test_an_unclosed_fence_runs_to_the_end_of_the_cell(source):
    assert only_markdown(source).startswith("> **注**")


def test_editorial_code_cells_say_so_in_their_first_line():
    cells = [nbformat.v4.new_code_cell("x = 1", id="c1", metadata={"tags": ["editorial", "claim-x"]}),
             nbformat.v4.new_code_cell("%%time\nx = 1", id="c2", metadata={"tags": ["editorial"]}),
             nbformat.v4.new_code_cell("y = 2", id="c3")]
    notebook = markdown.standalone(nbformat.v4.new_notebook(cells=cells), FakePage())
    assert [cell.source for cell in notebook.cells] == ["# 编者的单元，不是原稿的一部分\nx = 1", "%%time\nx = 1", "y = 2"]


def test_a_figure_cell_is_followed_by_its_caption_with_its_number():
    cells = [nbformat.v4.new_code_cell("fig = plot()", id="c1",
                                       metadata={"mystnb": {"figure": {"name": "fig-a", "caption": "信号流，见 {ref}`sec-a`"}}}),
             nbformat.v4.new_code_cell("fig = plot()", id="c2", metadata={"mystnb": {"figure": {"caption": "无名"}}})]
    notebook = markdown.standalone(nbformat.v4.new_notebook(cells=cells), FakePage())
    assert [(cell.cell_type, cell.id) for cell in notebook.cells] == [
        ("code", "c1"), ("markdown", "c1-caption"), ("code", "c2"), ("markdown", "c2-caption")]
    assert notebook.cells[1].source == f"**图 20**　信号流，见 [SEC-A]({SITE}#sec-a)"
    assert notebook.cells[3].source == "无名"


# --- what regular expressions get wrong: the text is read by myst-parser --------------


def test_the_parser_has_the_books_myst_extensions():
    import yaml

    from buildfiles import ROOT

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert markdown.EXTENSIONS == set(config["parse"]["myst_enable_extensions"])


def test_a_fence_inside_a_colon_fence_directive_is_kept_line_for_line():
    """Nothing inside the code is read as MyST, not even display math."""
    code = "(sec-a)=\n% 注释\n$$\nx\n$$\n:::{note}\n{ref}`y` 与 [甲](other.md)"
    text = only_markdown(f":::{{editorial}}\n看：\n\n```markdown\n{code}\n```\n:::")
    assert text == "> **编者**\n>\n> 看：\n>\n> ```markdown\n" + "\n".join(f"> {line}" for line in code.split("\n")) + "\n> ```"


def test_a_four_backtick_fence_holds_a_three_backtick_one():
    shown = "````markdown\n```{note}\n里面。\n```\n\n$$\nx\n$$\n{ref}`x`\n````"
    assert only_markdown(shown) == shown
    text = only_markdown(f"::::{{editorial}}\n{shown}\n::::")
    assert text == "> **编者**\n>\n" + "\n".join(f"> {line}".rstrip() for line in shown.split("\n"))
    text = only_markdown("````{note}\n```python\nx = 1\n```\n\n```{warning}\n小心。\n```\n````")
    assert text == "> **注**\n>\n> ```python\n> x = 1\n> ```\n>\n> > **警告**\n> >\n> > 小心。"


@pytest.mark.parametrize(("source", "expected"), [
    ("- 第一项\n\n  :::{note}\n  里面。\n  :::\n- 第二项",
     "- 第一项\n\n  > **注**\n  >\n  > 里面。\n\n- 第二项"),
    ("1. 甲\n   - 乙\n\n     ```{note}\n     丙 {ref}`sec-a`\n     ```",
     f"1. 甲\n   - 乙\n\n     > **注**\n     >\n     > 丙 [SEC-A]({SITE}#sec-a)"),
    ("> 引文\n>\n> :::{note}\n> 里面。\n> :::", "> 引文\n>\n> > **注**\n> >\n> > 里面。"),
], ids=["list item", "nested list", "quote"])
def test_an_indented_directive_stays_where_it_is(source, expected):
    assert only_markdown(source) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("`x` {ref}`sec-a`", f"`x` [SEC-A]({SITE}#sec-a)"),
    ("{glue:text}`a` `code`", "a `code`"),
    ("见 `` `x` {ref}`y` `` 与 {ref}`sec-a`", f"见 `` `x` {{ref}}`y` `` 与 [SEC-A]({SITE}#sec-a)"),
    ("写成 `` a\n{ref}`y` `` 即可", "写成 `` a\n{ref}`y` `` 即可"),  # a code span over two lines
    ("`[甲](other.md)` 与 [乙](other.md)", f"`[甲](other.md)` 与 [乙]({SITE}other.html)"),
    ("| 甲 | `{ref}`x`` 与 {ref}`sec-a` |\n| --- | --- |\n| {math}`a` | \\| {doc}`b` |",
     f"| 甲 | `{{ref}}`x`` 与 [SEC-A]({SITE}#sec-a) |\n| --- | --- |\n| $a$ | \\| [B]({SITE}#b) |"),
], ids=["code then role", "glue then code", "role in code", "code over two lines", "link in code", "table"])
def test_a_role_beside_a_code_span(source, expected):
    assert only_markdown(source) == expected


def test_a_code_cell_that_looks_like_myst_is_code():
    code = '%timeit f()\ntext = """\n(sec-a)=\n:::{note}\n$$\nx\n$$\n"""'
    cell = f"```{{code-cell}} ipython3\n:tags: [skip]\n{code}\n```"
    shown = f"```ipython3\n{code}\n```"
    assert only_markdown(f"::::{{exercise}} 题\n{cell}\n::::") == f"### 练习（题）\n\n{shown}"
    quoted = "\n".join(f"> {line}".rstrip() for line in shown.split("\n"))
    assert only_markdown(f"::::{{editorial}}\n{cell}\n::::") == f"> **编者**\n>\n{quoted}"
