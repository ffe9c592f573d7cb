"""The execution cache decides right (book/_ext/reading/execution.py), proved on a small copy.

The copy has the book's configuration, extensions and templates, a tiny package in its
own code/ (on the kernel's PYTHONPATH) and two executed pages, one of which prints a
value from that package. Each case runs the plain ``jupyter-book build`` command a
reader types, and reads from its log which pages executed: an edit to a page's prose,
to its code, to the package, to an extension in book/_ext or to requirements.txt.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildfiles import ROOT, search_index

# Meant to keep the cases on one worker, in order, on one copy. pytest-xdist 3.8 under
# pytest 9.2 ignores the group (pytest-xdist#1386): each worker builds its own copy and
# runs its share of the cases in order, so each case asserts only on the edit it makes.
pytestmark = [pytest.mark.build, pytest.mark.xdist_group("cache")]

HEADER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""
PAGES = {
    "uses": HEADER + "# 用包的页面\n\n开头的文字。\n\n```{code-cell} ipython3\nimport tinypkg\nprint(tinypkg.GREETING)\n```\n",
    "plain": HEADER + "# 另一页\n\n```{code-cell} ipython3\nprint(6 * 7)\n```\n",
}
TOC = """format: jb-book
root: book/index
chapters:
  - file: book/uses
  - file: book/plain
"""
# A numbered figure: the book relabels Sphinx's figure numbers (编者图 …), which must not
# make a build with nothing to do write the page again. An index entry: a one-character
# term such as 键 is found by search only through one, and a build that does not write
# this page again must keep it (search_terms.py).
INDEX = ("# 小书\n\n不执行的首页。\n\n```{index} 键\n```\n\n"
         "```{figure} dot.svg\n:name: fig-dot\n\n一个点。\n```\n")
DOT = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><circle cx="4" cy="4" r="4"/></svg>'
EXECUTED = re.compile(r"\[execution\] (book/\w+): executed")


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """A small book beside a tiny package, built once (cold) per worker before its cases run
    (session-wide: a module fixture is built again after another module's test)."""
    root = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "requirements.txt"):
        shutil.copy(ROOT / name, root / name)
    for folder in ("_ext", "_static", "_templates", "locale"):
        shutil.copytree(ROOT / "book" / folder, root / "book" / folder)
    for name in ("glossary.md", "references.bib"):
        shutil.copy(ROOT / "book" / name, root / "book" / name)
    (root / "_toc.yml").write_text(TOC, encoding="utf-8")
    (root / "book" / "index.md").write_text(INDEX, encoding="utf-8")
    (root / "book" / "dot.svg").write_text(DOT, encoding="utf-8")
    for name, text in PAGES.items():
        (root / "book" / f"{name}.md").write_text(text, encoding="utf-8")
    (root / "code" / "tinypkg").mkdir(parents=True)
    (root / "code" / "tinypkg" / "__init__.py").write_text('GREETING = "第一版"\n', encoding="utf-8")
    assert build(root) == {"book/uses", "book/plain"}, "the cold build must execute both pages"
    return root


def build(root):
    """Run the plain build; return the pages it executed."""
    return set(EXECUTED.findall(build_log(root)))


def build_log(root):
    """Run the plain build; return what it printed, without colours."""
    env = {**os.environ, "PYTHONPATH": str(root / "code")}
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    done = subprocess.run([str(jupyter_book), "build", str(root)], env=env, capture_output=True,
                          text=True, timeout=600)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    assert "Executing notebook" not in log, "myst-nb executed a page itself: the cache key differs"
    assert "without encryption" not in log, "a kernel ran over TCP"
    return re.sub(r"\x1b\[[0-9;]*m", "", log)


def index_entries(root):
    """The search index's entries: {entry: {(document, anchor, main), ...}}."""
    frozen = search_index(root / "_build" / "html")
    return {entry: {(frozen["docnames"][doc], anchor, main) for doc, anchor, main in places}
            for entry, places in frozen["indexentries"].items()}


def html(root, page):
    return (root / "_build" / "html" / "book" / f"{page}.html").read_text(encoding="utf-8")


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_no_change_executes_nothing_and_writes_no_page(book):
    cold = index_entries(book)
    log = build_log(book)
    assert not EXECUTED.findall(log)
    assert "looking for now-outdated files... none found" in log, log[-3000:]
    assert "键" in cold and index_entries(book) == cold, "the search index lost entries"


def test_prose_edit_executes_nothing_and_a_code_edit_that_page_alone(book):
    """One build, two edits: prose on one page, a code cell on the other."""
    before = index_entries(book)
    edit(book / "book" / "uses.md", "开头的文字。", "改过的文字。")
    edit(book / "book" / "plain.md", "print(6 * 7)", "print(6 * 8)")
    assert build(book) == {"book/plain"}, "a prose edit ran its page's code, or a code edit did not"
    assert "改过的文字。" in html(book, "uses") and "48" in html(book, "plain")
    assert index_entries(book) == before, "the front page, not written again, lost its index entry"


def test_package_edit_executes_the_pages_and_shows_the_new_output(book):
    assert "第一版" in html(book, "uses")
    edit(book / "code" / "tinypkg" / "__init__.py", "第一版", "第二版")
    assert "book/uses" in build(book)
    assert "第二版" in html(book, "uses")
    executed = (book / "_build" / "jupyter_execute" / "book" / "uses.ipynb").read_text(encoding="utf-8")
    assert "第二版" in executed, "the downloadable notebook keeps the old output"


def test_extension_edit_writes_every_page_again_and_executes_nothing(book):
    """Sphinx alone would not notice: the extensions' sources are the environment's version."""
    before = index_entries(book)
    tooltip = "下载全书 PDF（含构建时的真实输出）"
    assert all(tooltip in html(book, page) for page in ("index", "uses", "plain"))
    edit(book / "book" / "_ext" / "writing" / "book_pdf.py", tooltip, "改过的扩展写的提示")
    log = build_log(book)
    assert not EXECUTED.findall(log), "an extension edit ran the pages' code again"
    for page in ("index", "uses", "plain"):
        assert "改过的扩展写的提示" in html(book, page), f"{page}.html was not written again"
    assert "build environment version not current" in log, log[-3000:]
    assert index_entries(book) == before, "the search index lost entries"


def test_requirements_edit_executes_again(book):
    with open(book / "requirements.txt", "a", encoding="utf-8") as requirements:
        requirements.write("# a comment changes the pinned environment's key too\n")
    assert build(book) == {"book/uses", "book/plain"}


def test_old_caches_are_pruned(book):
    folders = [p for p in (book / "_build" / ".jupyter_cache").iterdir() if p.is_dir()]
    assert 1 <= len(folders) <= 3, folders
