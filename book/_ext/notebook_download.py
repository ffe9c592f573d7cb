"""Offer each executed page as ``.ipynb`` in the theme's download menu.

sphinx-book-theme adds the ``.ipynb`` entry only when a launch service (Binder, Colab
and so on) is configured, and this book links to none. This does the theme's own
steps without the launch service: copy the notebook that myst-nb executed into
``_sources`` and name it in the page context, before the theme builds its buttons.

The downloaded copy begins with one extra code cell (:func:`versions_cell`) that names
the ``attnbook`` and TensorFlow versions the book was built with, reports the ones it
runs against, and prints the line that installs what is missing. The install line
comes from ``repository.url`` in ``_config.yml``. The cell's stored output is what it
printed in the building environment, so a rerun with the same versions prints the same.

It also repairs one thing in that notebook. With ``nb_merge_streams``, myst-nb's
``coalesce_streams`` appends every later stdout chunk of a cell to the first one *in
place*, but only its returned list drops the later chunks: the page is right, while
the stored notebook keeps both, so a line that the kernel happened to send in a
second chunk appears twice in the ``.ipynb``. Whether the kernel splits a cell's
output depends on timing, so this shows up only now and then.
"""

import contextlib
import io
from pathlib import Path

import nbformat
from sphinx.errors import ExtensionError

VERSIONS_CELL_ID = "attnbook-versions"

# The body runs both at build time and in the reader's kernel; the comment above it is
# filled in with the versions it found at build time.
_VERSIONS_COMMENT = """\
# 编者：本书用 attnbook {attnbook}、TensorFlow {tensorflow} 构建。本单元报告当前环境里的版本（不导入它们）；
# 缺少时打印安装命令：在 Notebook 里运行那一行，装好后重启内核。
"""
_VERSIONS_BODY = """\
from importlib.metadata import PackageNotFoundError, version


def installed(distribution):
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


attnbook_version = installed("attnbook")
tensorflow_version = installed("tensorflow") or installed("tensorflow-cpu")
print(f"当前环境：attnbook {{attnbook_version or '未安装'}}，TensorFlow {{tensorflow_version or '未安装'}}。")
if not (attnbook_version and tensorflow_version):
    extra = "" if tensorflow_version else "[cpu]"  # 已有 TensorFlow（如 Colab）时沿用它
    print("安装命令（有 NVIDIA GPU 的机器把 [cpu] 换成 [gpu]）：" if extra else "安装命令：")
    print(f'%pip install "attnbook{{extra}} @ git+{repository}.git#subdirectory=code"')
"""


def versions_cell(repository_url):
    """The first cell of every downloaded notebook, with what it printed at build time."""
    body = _VERSIONS_BODY.format(repository=repository_url.rstrip("/").removesuffix(".git"))
    found, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(body, found)  # noqa: S102  (our own template, run as the reader's kernel will)
    comment = _VERSIONS_COMMENT.format(attnbook=found["attnbook_version"],
                                       tensorflow=found["tensorflow_version"])
    cell = nbformat.v4.new_code_cell(comment + body, id=VERSIONS_CELL_ID)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed.getvalue())]
    return cell


def _drop_merged_chunks(notebook):
    """Remove stream outputs already appended to an earlier one; return how many."""
    dropped = 0
    for cell in notebook.cells:
        kept, first = [], {}
        for output in cell.get("outputs", []):
            name = output.get("name") if output.get("output_type") == "stream" else None
            if name is not None and name in first and first[name]["text"].endswith(output["text"].rstrip() + "\n"):
                dropped += 1
                continue
            first.setdefault(name, output)
            kept.append(output)
        if "outputs" in cell:
            cell.outputs = kept
    return dropped


def _add_notebook(app, pagename, templatename, context, doctree):
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if doctree is None or not executed.is_file():
        return
    notebook = nbformat.read(executed, as_version=4)
    if _drop_merged_chunks(notebook):
        nbformat.write(notebook, executed)
    notebook.cells.insert(0, versions_cell(_repository_url(app)))
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def _repository_url(app):
    url = app.config.html_theme_options.get("repository_url", "")
    if not url.startswith("https://github.com/"):
        raise ExtensionError(f"repository.url in _config.yml must be the book's GitHub repository, got {url!r}")
    return url


def setup(app):
    # sphinx-book-theme reads ipynb_source in its handler at priority 501.
    app.connect("html-page-context", _add_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
