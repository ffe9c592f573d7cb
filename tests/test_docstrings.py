"""The code that readers see is Chinese and fits the page (CONTRIBUTING.md).

Two places show code to readers:

- the API page, ``book/api.md``, renders the docstrings of the objects its
  ``automodule`` directives select. They are derived here the way autodoc selects them
  (the ``:members:`` list, else ``__all__``, else the public names defined in the module),
  so a new public function is checked without editing this file;
- the pages show package objects with ``literalinclude`` and ``:pyobject:``. The code box
  is about 80 columns wide at 1280 px, a CJK character taking two.

Plain unit tests: nothing is built. The last tests check that each checker can fail.
"""

import ast
import importlib
import inspect
import io
import re
import textwrap
import tokenize
import types
import unicodedata

import pytest
from docutils import nodes
from docutils.core import publish_doctree
from sphinx.ext.napoleon import Config
from sphinx.ext.napoleon.docstring import GoogleDocstring
from sphinx.pycode import ModuleAnalyzer

from book._ext.reading.cjk_linebreaks import join_cjk_breaks
from buildfiles import ROOT

BOOK = ROOT / "book"
CODE_BOX_COLUMNS = 80

NOT_YET_CHECKED = set()  # module names of the API page left out, while being translated
NOT_YET_CHECKED_SOURCES = set()  # folders whose literalincluded code is left out

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HALF_WIDTH_NEXT_TO_HAN = re.compile(  # ASCII punctuation touching a Han character
    r"[\u3400-\u4dbf\u4e00-\u9fff](?:[,.;:!?()]| ?[\"'])"
    r"|(?:[,.;:!?()]|[\"'] ?)[\u3400-\u4dbf\u4e00-\u9fff]")
_ENGLISH_WORDS = re.compile(r"[A-Za-z]{2,}[ ]+[A-Za-z]{2,}")
_PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|fmt:|pylint:)")


# --- helpers -----------------------------------------------------------------------


def display_width(line):
    """Columns the line takes in a monospace code box: wide and full-width characters take 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def has_han(text):
    return bool(_HAN.search(text or ""))


def is_english_only(comment):
    """True for a comment with English words and no Chinese; shapes and pragmas pass."""
    text = re.sub(r"``.*?``|`.*?`", "", comment)
    return not has_han(text) and not _PRAGMA.match(text) and bool(_ENGLISH_WORDS.search(text))


def automodule_directives():
    """``(module name, options)`` for every ``automodule`` directive of the API page."""
    text = (BOOK / "api.md").read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"^\.\. automodule::[ \t]+(\S+)[ \t]*\n((?:[ \t]+:.*\n)*)", text, re.M):
        options = dict(re.findall(r":([\w-]+):[ \t]*(.*)", match.group(2)))
        found.append((match.group(1), options))
    return found


def _attribute_docs(module_name):
    """``{(class qualname or '', name): lines}`` for ``#:`` comments and attribute docstrings."""
    return ModuleAnalyzer.for_module(module_name).find_attr_docs()


def _class_members(cls, qualname):
    """The members autodoc renders for a class: its own public members with a docstring.

    ``inspect.getdoc`` inherits a method's docstring from a base class, as autodoc does
    (``autodoc_inherit_docstrings``), so a Keras docstring that would appear is caught.
    """
    attr_docs = _attribute_docs(cls.__module__)
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if inspect.isroutine(value) or isinstance(value, (property, classmethod, staticmethod)):
            doc = inspect.getdoc(getattr(cls, name))
            if doc:
                yield f"{qualname}.{name}", doc
        elif (cls.__qualname__, name) in attr_docs:
            yield f"{qualname}.{name}", "\n".join(attr_docs[(cls.__qualname__, name)])


def api_docstrings():
    """``(qualified name, docstring or None)`` for everything the API page renders."""
    entries = []
    for module_name, options in automodule_directives():
        if module_name in NOT_YET_CHECKED:
            continue
        module = importlib.import_module(module_name)
        entries.append((module_name, inspect.getdoc(module)))
        if "members" not in options:
            continue
        excluded = {n.strip() for n in options.get("exclude-members", "").split(",")}
        names = [n.strip() for n in options["members"].split(",") if n.strip()]
        attr_docs = _attribute_docs(module_name)
        if not names:
            names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n, v in vars(module).items() if not n.startswith("_")
                     and getattr(v, "__module__", None) == module_name]
            names += [n for (scope, n) in attr_docs if not scope and n not in names]
        for name in names:
            if name in excluded:
                continue
            obj = getattr(module, name)
            qualname = f"{module_name}.{name}"
            if isinstance(obj, types.ModuleType):
                continue  # autodoc does not document a submodule as a member
            if inspect.isclass(obj) or inspect.isroutine(obj):
                entries.append((qualname, inspect.getdoc(obj)))
                if inspect.isclass(obj):
                    entries.extend(_class_members(obj, qualname))
            elif ("", name) in attr_docs:  # data is rendered only with a #: comment
                entries.append((qualname, "\n".join(attr_docs[("", name)])))
    return entries


def rest_problems(doc):
    """Docutils warnings for a docstring after napoleon has converted it, as autodoc does.

    Sphinx roles (``:func:`x```) become inline literals first: the same characters
    stand on both sides, so the inline-markup rules give the same verdict.
    """
    config = Config(napoleon_use_param=True, napoleon_use_rtype=True)
    text = str(GoogleDocstring(doc, config))
    text = re.sub(r":[\w:]+:`([^`]*)`", r"``\1``", text)
    stream = io.StringIO()
    tree = publish_doctree(text, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream})
    problems = [m.astext() for m in tree.findall(nodes.system_message) if m["level"] >= 2]
    for node in tree.findall(nodes.Text):
        if not isinstance(node.parent, (nodes.literal, nodes.literal_block, nodes.system_message)):
            problems += [f"half-width punctuation in Chinese prose: {m.group()!r} in {str(node)!r}"
                         for m in _HALF_WIDTH_NEXT_TO_HAN.finditer(str(node))]
    # ``a``（b）、``c`` gives no warning but one literal "a``（b）、``c": as bad.
    problems += [f"literal swallowed markup: {lit.astext()}" for lit in tree.findall(nodes.literal)
                 if "``" in lit.astext()]
    return problems


def shown_objects():
    """``(page, source file, pyobject)`` for each ``literalinclude`` with ``:pyobject:``."""
    fence = re.compile(
        r"^(?:`{3,}|:{3,})\{literalinclude\}[ \t]+(\S+)[ \t]*\n((?:[ \t]*:[\w-]+:.*\n)*)", re.M)
    found = []
    for page in sorted(BOOK.rglob("*.md")):
        for match in fence.finditer(page.read_text(encoding="utf-8")):
            options = dict(re.findall(r":([\w-]+):[ \t]*(.*)", match.group(2)))
            if "pyobject" in options:
                source = (page.parent / match.group(1)).resolve()
                found.append((page.relative_to(ROOT).as_posix(), source, options["pyobject"].strip()))
    return found


def shown_lines(source, pyobject):
    """``(first line number, lines)`` that Sphinx shows for ``:pyobject:`` (its own lookup)."""
    _, start, end = ModuleAnalyzer.for_file(str(source), "").find_tags()[pyobject]
    return start, source.read_text(encoding="utf-8").splitlines()[start - 1:end]


def listing_problems(lines, first_line=1):
    """Lines wider than the code box, and English-only comments or docstrings."""
    problems = [f"line {first_line + i}: {display_width(line)} columns: {line.strip()}"
                for i, line in enumerate(lines) if display_width(line) > CODE_BOX_COLUMNS]
    source = textwrap.dedent("\n".join(lines)) + "\n"
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and is_english_only(token.string):
            problems.append(f"line {first_line + token.start[0] - 1}: English comment: {token.string}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if doc and not has_han(doc.splitlines()[0]):
                problems.append(f"{node.name}: docstring starts in English: {doc.splitlines()[0]}")
    return problems


# --- the API page ------------------------------------------------------------------

API = api_docstrings()
SHOWN = [entry for entry in shown_objects()
         if not any(entry[1].is_relative_to(folder) for folder in NOT_YET_CHECKED_SOURCES)]


def test_the_api_page_is_found():
    modules = [name for name, _ in automodule_directives()]
    assert "attnbook" in modules and "attnbook.cost" in modules, modules
    names = [name for name, _ in API]
    for expected in ["attnbook.scaled_dot_product_attention", "attnbook.MiniMultiHeadAttention",
                     "attnbook.masks.padding_leak", "attnbook.measurements.measure_mha",
                     "attnbook.bench.evaluate_targets",
                     "attnbook.scaling.METRICS", "attnbook.toy.ReversalModel.encode",
                     "attnbook.plots.setup"]:
        assert expected in names


@pytest.mark.parametrize("name, doc", API, ids=[name for name, _ in API])
def test_api_docstring_starts_in_chinese(name, doc):
    assert doc, f"{name} has no docstring, so the API page leaves it out"
    first = doc.strip().splitlines()[0]
    assert has_han(first), f"{name}: the first line has no Chinese: {first!r}"


@pytest.mark.parametrize("name, doc", [e for e in API if e[1]], ids=[n for n, d in API if d])
def test_api_docstring_is_valid_rest_with_full_width_punctuation(name, doc):
    # Inline literals next to Chinese punctuation are easy to get wrong: ``x``（ is not markup.
    assert rest_problems(doc) == []


# --- code shown with literalinclude --------------------------------------------------


def test_the_listings_are_found():
    shown = {(source.name, obj) for _, source, obj in SHOWN}
    assert {("attention.py", "scaled_dot_product_attention"),
            ("attention.py", "MiniMultiHeadAttention")} <= shown


@pytest.mark.parametrize("page, source, pyobject", SHOWN,
                         ids=[f"{page}:{obj}" for page, _, obj in SHOWN])
def test_listing_fits_the_code_box_and_speaks_chinese(page, source, pyobject):
    first_line, lines = shown_lines(source, pyobject)
    assert listing_problems(lines, first_line) == [], f"{source.name}, shown on {page}"


# --- the checkers can fail ---------------------------------------------------------


def test_display_width_counts_wide_characters_twice():
    assert display_width("abc") == 3
    assert display_width("每头维度") == 8
    assert display_width("，（）") == 6
    assert display_width("√d_k·Kᵀ") == 7


@pytest.mark.parametrize("comment, english", [
    ("# A finite floor instead of -inf", True),
    ("# count the forward pass only, not the build", True),
    ("# 3. 归一：每行总和为 1", False),
    ("# (batch, heads, n_q, depth)", False),
    ("# (..., n_q, n_k)", False),
    ("# noqa: F401  (import first)", False),
    ("# ``tf.where`` 把被遮住的位置置 0", False),
])
def test_english_comment_detection(comment, english):
    assert is_english_only(comment) is english


def test_listing_check_flags_wide_lines_english_comments_and_docstrings():
    lines = [
        "def f(x):",
        '    """Return x."""',
        "    y = x  # keep the input as it is",
        "    z = '" + "很" * 40 + "'",
        "    return y  # (batch, n)",
    ]
    problems = listing_problems(lines)
    assert len(problems) == 3, problems
    assert any("columns" in p for p in problems)
    assert any("English comment" in p for p in problems)
    assert any("docstring" in p for p in problems)
    assert listing_problems(['def f(x):', '    """返回 x。"""', "    return x  # 原样返回"]) == []


def test_rest_check_flags_inline_literal_before_full_width_bracket():
    assert rest_problems("掩码 ``mask``（布尔型）。")
    assert rest_problems("``max_weight``（最大的权重）、``entropy``")
    assert rest_problems("返回权重(n_q, n_k).")
    assert rest_problems("用 \"spawn\" 方式")
    assert rest_problems("掩码 ``mask``，布尔型（见 :func:`attnbook.causal_mask`）。") == []


def test_api_derivation_follows_all_and_members(tmp_path, monkeypatch):
    package = tmp_path / "fakeapi"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent('''
        """假的包。"""
        from .sub import shown, hidden_helper
        __all__ = ["shown"]
    '''), encoding="utf-8")
    (package / "sub.py").write_text(textwrap.dedent('''
        """Sub module."""
        import os
        #: English data docs.
        LIMIT = 3
        def shown():
            """English first line."""
        def hidden_helper():
            """不在页面上。"""
        class Box:
            """盒子。"""
            def open(self):
                """Opens it."""
    '''), encoding="utf-8")
    (tmp_path / "api.md").write_text(
        "```{eval-rst}\n.. automodule:: fakeapi\n   :members:\n```\n"
        "```{eval-rst}\n.. automodule:: fakeapi.sub\n   :members:\n```\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(globals(), "BOOK", tmp_path)
    found = dict(api_docstrings())
    assert set(found) == {"fakeapi", "fakeapi.shown", "fakeapi.sub", "fakeapi.sub.LIMIT",
                          "fakeapi.sub.shown", "fakeapi.sub.hidden_helper", "fakeapi.sub.Box",
                          "fakeapi.sub.Box.open"}
    english = {name for name, doc in found.items() if not has_han(doc.splitlines()[0])}
    assert english == {"fakeapi.sub", "fakeapi.sub.LIMIT", "fakeapi.shown", "fakeapi.sub.shown",
                       "fakeapi.sub.Box.open"}


# --- the API page joins the line breaks of wrapped Chinese docstrings ----------------


def test_line_breaks_between_chinese_characters_are_joined():
    tree = publish_doctree("可广播到\n同一形状，\nTrue 表示可以看；\n``(n,\nn)``\n形状。\n\n"
                           "::\n\n    代码\n    保持原样\n")
    join_cjk_breaks(tree)
    paragraph, block = tree.children
    assert paragraph.astext() == "可广播到同一形状，True 表示可以看；(n,\nn)\n形状。"
    assert block.astext() == "代码\n保持原样"
