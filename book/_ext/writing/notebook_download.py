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

Its markdown cells are made to stand alone (``notebook_markdown.py``): MyST that
Jupyter and Colab would show as raw text becomes plain Markdown, every
``literalinclude`` the code it names, and links point to the published site
(``https://<owner>.github.io/<repository>/``, from the same ``repository.url``). The
hidden outputs of ``glue`` go away once their values are in the text.

It also repairs one thing in that notebook. With ``nb_merge_streams``, myst-nb's
``coalesce_streams`` appends every later stdout chunk of a cell to the first one *in
place*, but only its returned list drops the later chunks: the page is right, while
the stored notebook keeps both, so a line that the kernel happened to send in a
second chunk appears twice in the ``.ipynb``. Whether the kernel splits a cell's
output depends on timing, so this shows up only now and then.
"""

import contextlib
import io
import posixpath
import re
from pathlib import Path
from urllib.parse import urljoin

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader
from sphinx.errors import ExtensionError
from sphinx.util.nodes import split_explicit_title

from book._ext.shared.checkout import site_url
from book._ext.shared.sections import for_app, next_sentence
from book._ext.writing import notebook_markdown

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
            stream = output.get("output_type") == "stream"
            name = output.get("name")
            if stream and name in first and first[name]["text"].endswith(output["text"].rstrip() + "\n"):
                dropped += 1
                continue
            kept.append(output)
            if stream:
                first.setdefault(name, output)
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
    notebook = notebook_markdown.standalone(notebook, BuiltPage(app, pagename, doctree))
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


class BuiltPage(notebook_markdown.Page):
    """What the markdown conversion needs, answered from this build."""

    def __init__(self, app, docname, doctree):
        self.app, self.env, self.docname = app, app.env, docname
        self.site = site_url(_repository_url(app))
        self.url = urljoin(self.site, app.builder.get_target_uri(docname))
        self.exercises = {}
        for box in doctree.findall(nodes.Element):
            if type(box).__name__ == "exercise_enumerable_node" and box.children:
                for label in [box.get("label"), *box["ids"]]:
                    self.exercises.setdefault(label, box.children[0].astext().strip())

    def include(self, argument, options):
        options = {key: (LiteralInclude.option_spec[key](None if value is True else str(value))
                         if key in LiteralInclude.option_spec else value) for key, value in options.items()}
        _, filename = self.env.relfn2path(argument, self.docname)
        if "diff" in options:
            options["diff"] = self.env.relfn2path(options["diff"], self.docname)[1]
        text, _ = LiteralIncludeReader(filename, options, self.app.config).read()
        language = options.get("language") or ("python" if filename.endswith(".py") else "")
        partial = {"pyobject", "lines", "start-after", "start-at", "end-before", "end-at", "diff"} & set(options)
        return notebook_markdown.Included(text, language, Path(filename), whole_file=not partial)

    def exercise_title(self, label):
        """'练习 4.5.1（标题）': the number as {numref} gives it, then the box's own title."""
        if label not in self.exercises:
            return None
        resolved = self._resolve("std", "numref", label, label, explicit=False)
        return (resolved.astext().strip() if resolved is not None else "") + self.exercises[label]

    def figure_number(self, name):
        resolved = self._resolve("std", "numref", name.lower(), name, explicit=False)
        return resolved.astext().strip() if resolved is not None else None

    def next_section(self):
        return next_sentence(for_app(self.app), self.docname)

    def link(self, target):
        path, _, anchor = target.partition("#")
        path = self._source_path(path)
        if path.startswith("../"):
            return None
        stem, suffix = posixpath.splitext(path)
        if suffix in (".md", ".ipynb", ".rst") and stem in self.env.all_docs:
            path = self.app.builder.get_target_uri(stem)
        return self.site + path + (f"#{anchor}" if anchor else "")

    def _source_path(self, relative):
        """A path relative to this page as a path relative to the book's root."""
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.docname), relative))

    def role(self, name, text):
        if name.startswith("glue"):
            return self._glue(name, text)
        domain, typ = name.split(":", 1) if ":" in name else ("std", name)
        if name == "cite":
            domain, typ = "cite", "p"
        explicit, title, target = split_explicit_title(text)
        if domain == "std" and typ in ("ref", "numref", "keyword"):
            target = target.lower()
        resolved = self._resolve(domain, typ, target, title, explicit)
        return None if resolved is None else self._markdown(resolved)

    def _resolve(self, domain, typ, target, title, explicit):
        """The node Sphinx puts in place of the role, or None."""
        node = addnodes.pending_xref(title, nodes.inline(title, title), refdomain=domain, reftype=typ,
                                     reftarget=target, refexplicit=explicit, refdoc=self.docname)
        try:
            return self.env.get_domain(domain).resolve_xref(
                self.env, self.docname, self.app.builder, typ, target, node, node[0].deepcopy())
        except Exception:  # noqa: BLE001 - an unknown domain or role: the text as written
            return None

    def _markdown(self, node):
        if isinstance(node, nodes.Text):
            return re.sub(r"([\\[\]*_`])", r"\\\1", str(node))
        inner = "".join(self._markdown(child) for child in node.children)
        if isinstance(node, nodes.reference) and node.get("refuri"):
            return f"[{inner}]({urljoin(self.url, node['refuri'])})"
        return inner

    def _glue(self, name, text):
        """A value glued on another page: ``{glue:text}`../page::key:fmt```."""
        doc, _, key = text.partition("::")
        other = Path(self.app.outdir).parent / "jupyter_execute" / f"{self._source_path(doc)}.ipynb"
        if not key or not other.is_file():
            return None
        return notebook_markdown.glue_text(notebook_markdown.take_glue(nbformat.read(other, as_version=4)), name, key)


def setup(app):
    # sphinx-book-theme reads ipynb_source in its handler at priority 501.
    app.connect("html-page-context", _add_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
