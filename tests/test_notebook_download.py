"""The downloaded notebook of a small book stands alone (book/_ext/writing/notebook_download.py).

The copy has the book's configuration and extensions, a tiny package in its own code/
and two executed pages: one glues values, includes the package's code (inside an
exercise and outside), and refers to the other page, which glues a value too. Built
once with the plain ``jupyter-book build``; the checks read the offered ``.ipynb``.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from buildfiles import ROOT
from notebooks import myst_left

pytestmark = [pytest.mark.build, pytest.mark.slow]

SITE = "https://attention-book.github.io/attention-book/"  # from repository.url in _config.yml
HEADER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""
LESSON = HEADER + """
(sec-lesson)=
# 课

```{code-cell} ipython3
from myst_nb import glue

glue("ratio", 0.12345, display=False)
glue("name", "键", display=False)
```

比值 {glue:text}`ratio:.2f`，名字 {glue:text}`name`，另一页的 {glue:text}`other::answer`。见 {ref}`sec-other`、{doc}`other` 与 [另一页](other.md#sec-other)。

术语 {term}`查询`，引文 {cite:p}`vaswani2017`。

````{exercise} 修好它
:label: ex-fix

```{literalinclude} ../code/tinypkg/start.py
:pyobject: Start
```
````

:::{editorial} 只是展示
```{literalinclude} ../code/tinypkg/start.py
:lines: 1-2
```
:::
"""
OTHER = HEADER + """
(sec-other)=
# 另一页

```{code-cell} ipython3
from myst_nb import glue

glue("answer", 42, display=False)
```

```{glossary}
查询
  英文 query。
```

```{bibliography}
```
"""
TOC = "format: jb-book\nroot: book/index\nchapters:\n  - file: book/lesson\n  - file: book/other\n"
PACKAGE = {
    "__init__.py": "from ._core import helper\n",
    "_core.py": "def helper():\n    return 41\n",
    "start.py": "import math\n\nfrom ._core import helper\n\n\nclass Start:\n"
                "    def value(self):\n        return helper() + math.floor(1.5)\n",
}


# Session-wide: a module fixture is built again whenever the worker runs another
# module's test between two of these.
@pytest.fixture(scope="session")
def offered(tmp_path_factory):
    """The small book's lesson notebook as the site offers it, and the book's root."""
    root = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "requirements.txt"):
        shutil.copy(ROOT / name, root / name)
    for folder in ("_ext", "_static", "_templates", "locale"):
        shutil.copytree(ROOT / "book" / folder, root / "book" / folder)
    for name in ("glossary.md", "references.bib"):
        shutil.copy(ROOT / "book" / name, root / "book" / name)
    (root / "_toc.yml").write_text(TOC, encoding="utf-8")
    (root / "book" / "index.md").write_text("# 小书\n\n首页。\n", encoding="utf-8")
    (root / "book" / "lesson.md").write_text(LESSON, encoding="utf-8")
    (root / "book" / "other.md").write_text(OTHER, encoding="utf-8")
    (root / "code" / "tinypkg").mkdir(parents=True)
    for name, text in PACKAGE.items():
        (root / "code" / "tinypkg" / name).write_text(text, encoding="utf-8")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    done = subprocess.run([str(jupyter_book), "build", str(root)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(root / "code")})
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return nbformat.read(root / "_build" / "html" / "_sources" / "book" / "lesson.ipynb", as_version=4), root


def markdown_of(notebook):
    return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def test_roles_become_values_and_links_to_the_site(offered):
    text = markdown_of(offered[0])
    assert "比值 0.12，名字 键，另一页的 42。" in text
    link = f"{SITE}book/other.html"
    assert f"[另一页]({link}#sec-other)、[另一页]({link}) 与 [另一页]({link}#sec-other)" in text
    assert re.search(rf"术语 \[查询\]\({re.escape(link)}#term-[^)]+\)，", text), text
    cited = re.search(rf"引文 \\\[\[([^\]]+)\]\({re.escape(link)}#[^)]+\)\\\]", text)
    page = (offered[1] / "_build" / "html" / "book" / "lesson.html").read_text(encoding="utf-8")
    shown = re.sub(r'</?span( lang="en")?>', "", page)  # English runs sit in <span lang="en">
    assert cited and f">{cited[1]}</a>]" in shown, text  # the citation as the page shows it
    assert not myst_left(text)


def test_glue_outputs_are_gone(offered):
    outputs = [o for cell in offered[0].cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if "scrapbook" in o.get("metadata", {})]


def test_included_code_is_shown_and_the_exercise_code_runs(offered):
    notebook, root = offered
    assert "> **编者：只是展示**\n>\n> ```python\n> import math\n> ```" in markdown_of(notebook)
    assert "### 练习 1（修好它）" in markdown_of(notebook)  # a page outside every section: no section number
    (code,) = [cell for cell in notebook.cells if cell.cell_type == "code" and "class Start" in cell.source]
    assert "from tinypkg import helper" in code.source and "import math" in code.source
    done = subprocess.run([sys.executable, "-c", code.source + "\nprint(Start().value())"], capture_output=True,
                          text=True, timeout=60, cwd=root, env={**os.environ, "PYTHONPATH": str(root / "code")})
    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr
