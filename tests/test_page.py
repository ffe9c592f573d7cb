"""`make page SECTION=N` (tools/page): a manuscript in the seed's format in, a section page out.

On the test manuscripts of tests/manuscripts/ (two listings, the second using the first's
names; output comments on one line and on several; a figure line; the three boxes; a
numbered objectives list and a • recap; a line no rule classifies) and on 4.5's own:

* the round trip: converted, 4.5's manuscript gives the author's layer of today's 4.5
  page, unit for unit, and the page reads back as the manuscript it came from;
* a new page and its toc entry, or a clear error and nothing written;
* a revised manuscript synced into a page: the author's blocks change in place, the
  editor's blocks do not, the author's changes come out as a diff, and claims whose
  quotes the revision dropped are named.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from book._ext.shared import manuscript
from book._ext.shared.sections import Book
from buildfiles import ROOT
from tools.page import myst, render, sync, toc
from tools.page.__main__ import PageError, make_page

MANUSCRIPTS = Path(__file__).parent / "manuscripts"
GRAPHS = MANUSCRIPTS / "4.6-graphs.txt"
ATTENTION_PAGE = ROOT / "book" / "ch04" / "attention.md"


def keys(units):
    return [unit.key for unit in units]


def page_units(text, path=ATTENTION_PAGE):
    return myst.author_units(myst.split(text), path)


def without_pages(entries, pages):
    """``_toc.yml``'s ``entries`` (a list of dicts) without those whose file is in ``pages``."""
    return [{**e, **{k: without_pages(e[k], pages) for k in ("chapters", "sections") if k in e}}
            for e in entries if e.get("file") not in pages]


@pytest.fixture
def book(tmp_path):
    """A copy of the book's files that `make page` reads and writes, with 4.5 its only
    section whatever the real book holds: these tests add 4.6 and 4.7 themselves."""
    first, *later = Book(ROOT).sections
    for name in ("_config.yml", first.manuscript, "book/ch04/attention.md", "book/claims.yml"):
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    toc["parts"] = without_pages(toc["parts"], {page for s in later for page in s.pages})
    (tmp_path / "_toc.yml").write_text(yaml.safe_dump(toc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return tmp_path


# --- reading the format --------------------------------------------------------------------


def test_the_test_manuscript_has_every_kind_of_block():
    text = manuscript.read(GRAPHS)
    assert [b.kind for b in text.blocks].count("listing") == 2
    assert text.boxes == [("summary", "本节摘要"), ("warning", "⚠️ 常见坑"), ("tip", "💡 关键直觉")]
    assert [b.style for b in text.of_kind("list")] == ["numbered", "bullets"]
    assert text.figures == {21: "一步消息传递的信号流"}
    first, second = text.listings
    assert "A_hat" in first.runnable and "A_hat" in second.runnable.split("=", 1)[1]


def test_output_comments_on_one_line_and_on_several():
    first, second = manuscript.read(GRAPHS).listings
    assert first.outputs == ("# 输出：\n# [[0.5  0.5  0.   0.  ]\n#  [0.33 0.33 0.33 0.  ]\n"
                             "#  [0.   0.33 0.33 0.33]\n#  [0.   0.   0.5  0.5 ]]",)
    assert first.runnable.endswith("print(A_hat.numpy().round(2))\n# 每行总和为 1——每个节点平均听取邻居的汇报")
    assert second.outputs == ("# 输出：(4, 3)",)
    assert "# 节点数不变" in second.runnable and "输出" not in second.runnable


@pytest.mark.parametrize("listing, outputs, kept", [
    ("print(x)\n# 输出示例：[[1 2]\n#  [3 4]]\n# 说明", ("# 输出示例：[[1 2]\n#  [3 4]]",), "print(x)\n# 说明"),
    ("print(x)\n# 输出：\n# tf.Tensor(\n# [1. 2.], shape=(2,), dtype=float32)", ("# 输出：\n# tf.Tensor(\n# [1. 2.], shape=(2,), dtype=float32)",), "print(x)"),
    ("print(a)\n# 输出：3\nprint(b)\n# 输出：4", ("# 输出：3", "# 输出：4"), "print(a)\nprint(b)"),
    ("print(s)\n# 输出：loss 0.69\n# loss 0.41\n# 损失在降——训练收敛", ("# 输出：loss 0.69\n# loss 0.41",), "print(s)\n# 损失在降——训练收敛"),
    ("print(x)\n# 输出：(2, 8)\n#\n# 下一行", ("# 输出：(2, 8)",), "print(x)\n#\n# 下一行"),
])
def test_where_an_output_comment_ends(listing, outputs, kept):
    assert manuscript.split_outputs(listing) == (kept, outputs)


def test_a_line_no_rule_classifies_is_named_by_its_number():
    with pytest.raises(manuscript.ManuscriptError, match="第 9 行无法归类.*表 3"):
        manuscript.read(MANUSCRIPTS / "4.7-table.txt")
    with pytest.raises(manuscript.ManuscriptError, match="第 3 行无法归类"):
        manuscript.parse("4.8 标题\n\n这一行很长很长，没有句末标点，也不像标题，因为它比三十个字还要长得多得多得多\n", "4.8")


@pytest.mark.parametrize("text, message", [
    ("4.9 标题\n\n正文。\n", "节号 4.9 与文件名的节号 4.8"),
    ("正文。\n", "第一行应当是节号和标题"),
])
def test_a_title_must_open_the_manuscript_with_the_files_number(text, message):
    with pytest.raises(manuscript.ManuscriptError, match=message):
        manuscript.parse(text, "4.8")


def test_markdown_in_the_authors_text_is_shown_as_written():
    assert render.inline('用 a*b*c 与 $x$、<b>、[1] 和 "引号"；x_1 与 _斜体_') == \
        r"用 a\*b\*c 与 \$x\$、\<b>、\[1\] 和 “引号”；x_1 与 \_斜体\_"


# --- the round trip on 4.5 -----------------------------------------------------------------


def test_4_5s_manuscript_is_the_author_layer_of_todays_page():
    """Converted, 4.5's manuscript is today's page with the editor's blocks set aside: every
    title, heading, paragraph, box, list, listing with its printed outputs and figure, in order."""
    text = manuscript.read(ROOT / "manuscript" / "4.5-attention.txt")
    expected = keys(myst.manuscript_units(text, "sec-attention"))
    assert keys(page_units(ATTENTION_PAGE.read_text(encoding="utf-8"))) == expected
    assert keys(page_units(render.page(text, "sec-attention"))) == expected
    assert len(expected) == 25


def test_a_new_page_reads_back_as_its_manuscript():
    text = manuscript.read(GRAPHS)
    page = render.page(text, "sec-graphs")
    assert myst.join(myst.split(page)) == page
    assert keys(page_units(page)) == keys(myst.manuscript_units(text, "sec-graphs"))
    assert page.count(render.SETUP) == 1 and page.index(render.SETUP) < page.index("本节摘要")
    assert ":::{manuscript-figure} 图 21 一步消息传递的信号流\n:::" in page
    assert page.count("# 4.6 ") == 1


@pytest.mark.slow
def test_a_converted_manuscript_runs_and_its_listings_print_live_output(tmp_path):
    """The page `make page` writes runs top to bottom in a fresh kernel, the second listing
    on the first one's names, and each listing whose manuscript printed an output prints."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from notebooks import cell_text, run_as_reader

    text = manuscript.read(GRAPHS)
    nb = run_as_reader(read_myst_markdown_notebook(render.page(text, "sec-graphs")), tmp_path, sys.executable)
    cells = [c for c in nb.cells if c.cell_type == "code" and "remove-cell" not in c.metadata.get("tags", [])]
    assert [c.source for c in cells] == [b.runnable for b in text.listings]
    for cell, block in zip(cells, text.listings):
        assert not [o for o in cell.outputs if o.get("name") == "stderr"], cell.outputs
        assert bool(cell_text(cell).strip()) == bool(block.outputs), (block.line, cell_text(cell))
    assert "(4, 3)" in cell_text(cells[1])


# --- make page ---------------------------------------------------------------------------


def test_make_page_writes_the_page_and_lists_it(book):
    shutil.copy(GRAPHS, book / "manuscript")
    said = make_page("4.6", root=book)
    page = book / "book" / "ch04" / "graphs.md"
    assert page.read_text(encoding="utf-8") == render.page(manuscript.read(GRAPHS), "sec-graphs")
    chapters = yaml.safe_load((book / "_toc.yml").read_text(encoding="utf-8"))["parts"][0]["chapters"]
    assert [c["file"] for c in chapters] == ["book/ch04/attention", "book/ch04/graphs"]
    assert "graphs.md" in said and "第 4 章" in said
    assert [s.number for s in Book(book).sections] == ["4.5", "4.6"]


@pytest.mark.parametrize("setup, number, message", [
    (lambda b: None, "4.6", "没有第 4.6 节的原稿"),
    (lambda b: [shutil.copy(GRAPHS, b / "manuscript"), shutil.copy(GRAPHS, b / "manuscript" / "4.6-other.txt")],
     "4.6", "第 4.6 节有两份原稿"),
    (lambda b: shutil.copy(MANUSCRIPTS / "4.7-table.txt", b / "manuscript"), "4.7", "第 9 行无法归类"),
    (lambda b: None, "4.5", "已经存在"),
])
def test_an_error_is_said_and_nothing_is_written(book, setup, number, message):
    setup(book)
    before = {p: p.read_bytes() for p in book.rglob("*") if p.is_file()}
    with pytest.raises(PageError, match=message):
        make_page(number, root=book)
    assert {p: p.read_bytes() for p in book.rglob("*") if p.is_file()} == before


def test_syncing_a_page_that_does_not_exist_is_an_error(book):
    shutil.copy(GRAPHS, book / "manuscript")
    with pytest.raises(PageError, match="不存在"):
        make_page("4.6", root=book, resync=True)
    assert not (book / "book" / "ch04" / "graphs.md").exists()


def test_the_command_line_says_one_line_and_exits_1_on_error(book):
    done = subprocess.run([sys.executable, "-m", "tools.page", "4.9"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "没有第 4.9 节的原稿" in done.stderr


def test_the_converter_imports_neither_tensorflow_nor_sphinx():
    """`make page` stays a fraction of a second: nothing heavy is imported."""
    code = "import sys, tools.page.__main__; print(sorted({'tensorflow', 'sphinx', 'docutils'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_page_is_added_in_the_order_of_section_numbers():
    text = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert toc.dump(yaml.safe_load(text)) == text
    numbers = {"book/ch04/attention": "4.5"}.get
    earlier = yaml.safe_load(toc.add(text, "book/ch04/rnn", "4.4", numbers))["parts"][0]["chapters"]
    assert [c["file"] for c in earlier][:2] == ["book/ch04/rnn", "book/ch04/attention"]
    parts = yaml.safe_load(toc.add(text, "book/ch05/rl", "5.1", numbers))["parts"]
    assert [p["caption"] for p in parts] == ["第 4 章", "第 5 章", "附录"]


# --- an author's revision ------------------------------------------------------------------


def editorial_blocks(text):
    return [b.text for b in myst.split(text) if myst.role(b) == "editorial"]


def revise(text):
    """4.5's manuscript, revised: a sentence changed, a paragraph added, a listing's output
    comment changed, the class listing and a box edited, the figure's caption changed."""
    return (text.replace("RNN 的信息传递是接力", "RNN 的信息传递像一场接力")
            .replace("手写一个多头注意力层\n", "这是作者新加的一段。\n\n手写一个多头注意力层\n")
            .replace("# 输出：(2, 6, 32)", "# 输出：(2, 6, 32)\n# 输出示例：[0.1 0.2]")
            .replace("print(y.shape)", "print(y.shape, y.dtype)")
            .replace("⚠️ 常见坑：给注意力层的输入忘了加掩码。", "⚠️ 常见坑：别忘了掩码。")
            .replace("图 20 注意力打分的信号流", "图 20 注意力打分的信号流程"))


def test_a_revision_updates_the_authors_blocks_and_keeps_the_editors():
    old = ATTENTION_PAGE.read_text(encoding="utf-8")
    text = manuscript.parse(revise((ROOT / "manuscript" / "4.5-attention.txt").read_text(encoding="utf-8")), "4.5")
    result = sync.sync(old, text, "sec-attention", ATTENTION_PAGE)
    assert editorial_blocks(result.text) == editorial_blocks(old)
    new_keys, wanted = keys(page_units(result.text)), keys(myst.manuscript_units(text, "sec-attention"))
    # the drawn figure keeps its caption until the editor changes the cell, and says so
    assert [k for k in new_keys if k[0] != "figure"] == [k for k in wanted if k[0] != "figure"]
    assert any("图 20" in w and "fig-signal-flow" in w for w in result.warnings)
    assert "+这是作者新加的一段。" in result.diff and "-RNN 的信息传递是接力" in result.diff
    assert ":tags: [claim-layer-output-shape]" in result.text  # the cell kept its tags
    assert "```{literalinclude} ../../manuscript/4.5-attention.txt" in result.text  # and the class its form
    # the new paragraph goes after the editor's note on the figure, before the next heading
    assert result.text.index("图 20 的出处") < result.text.index("这是作者新加的一段。") < result.text.index("## 手写")


def test_syncing_an_unrevised_manuscript_changes_nothing():
    old = ATTENTION_PAGE.read_text(encoding="utf-8")
    result = sync.sync(old, manuscript.read(ROOT / "manuscript" / "4.5-attention.txt"), "sec-attention", ATTENTION_PAGE)
    assert (result.text, result.diff, result.warnings) == (old, "", [])


def test_a_revision_through_make_page_names_the_claims_it_breaks(book, capsys):
    path = book / "manuscript" / "4.5-attention.txt"
    path.write_text(path.read_text(encoding="utf-8").replace("一百万对", "一千万对"), encoding="utf-8")
    with pytest.raises(PageError):
        make_page("4.5", root=book)
    said = make_page("4.5", root=book, resync=True)
    assert "论断 million-pairs" in said and "-注意力把 RNN" in said
    assert "一千万对" in (book / "book" / "ch04" / "attention.md").read_text(encoding="utf-8")


def test_a_new_sections_page_syncs_a_revised_listing_in_place(book):
    shutil.copy(GRAPHS, book / "manuscript")
    make_page("4.6", root=book)
    page = book / "book" / "ch04" / "graphs.md"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "## 一步消息传递", "## 一步消息传递\n\n:::{editorial}\n编者的话。\n:::"), encoding="utf-8")
    revised = GRAPHS.read_text(encoding="utf-8").replace("W = tf.keras.layers.Dense(3)", "W = tf.keras.layers.Dense(5)") \
        .replace("# 输出：(4, 3)", "# 输出：(4, 5)")
    (book / "manuscript" / "4.6-graphs.txt").write_text(revised, encoding="utf-8")
    make_page("4.6", root=book, resync=True)
    text = page.read_text(encoding="utf-8")
    assert "Dense(5)" in text and "# 输出：(4, 5)" in text and "编者的话。" in text and "Dense(3)" not in text
    assert keys(page_units(text, page)) == keys(myst.manuscript_units(manuscript.parse(revised, "4.6"), "sec-graphs"))
