"""Every pointer in the editor's text and in the package's docstrings leads to something real.

The editor's text on the built site (the section page's editorial blocks, the pages the
editor wrote, the ledger and the errata page, captions included) and the docstrings of
``code/attnbook`` point readers at tests, files, package objects and pages. Each pointer
is resolved:

- ``tests/test_x.py`` exists; ``tests/test_x.py::test_y`` defines ``test_y``. When the
  paragraph says the test compares or checks something (一致, 相同, 比较, 核对, 对照 …)
  and names a class or a dotted API name besides the test, the test (its function and the
  module-level helpers it calls, or the whole file) mentions that name as a whole word:
  a pointer to a file that never builds ``keras.layers.MultiHeadAttention`` does not back
  a sentence about a comparison with it.
- another path of the repository (``book/claims.yml``, ``attnbook/minimal.py``) exists.
- ``attnbook.x.y``, a submodule's ``cost.score_table``, ``tf.where`` and the Sphinx roles
  of docstrings (``:func:`reach```) import, attribute by attribute.
- a code span that names a function or class (snake_case with an underscore, CamelCase,
  or any name right after 函数、方法、类) is an object of the package, of TensorFlow,
  Keras or NumPy, or a name the package's or the pages' code uses (a parameter, a
  variable, a key): a name no code has is a pointer to nothing.
- an internal link of the editor's text reaches an existing page and anchor.

The scanners take text, so the unit tests at the bottom feed them hand-written snippets,
each with a planted bad pointer, and show that each kind is caught.
"""

import ast
import functools
import importlib
import inspect
import io
import re
import tokenize
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from buildfiles import EXECUTED, HTML, ROOT, soup
from section_texts import SECTIONS

PACKAGE_DIR = ROOT / "code" / "attnbook"
# The pages whose every word is the editor's, besides the editorial blocks of the section page.
SECTION_PAGES = [section.page for section in SECTIONS]
EDITOR_PAGES = ["book/ch04/mechanism", "book/ch04/cost", "book/ch04/exercises", "index", "book/index",
                "book/glossary", "book/api", "book/claims", "book/errata"]
NOT_TEXT = ["div.cell_input", "div.cell_output", "pre", "script", "style", ".headerlink"]
BLOCKS = ["p", "li", "figcaption", "td", "th", "dd", "dt", "caption"]

TEST_POINTER = re.compile(r"(?<![\w./-])tests/(?:[\w-]+/)*test_\w+\.py(?:::\w+)?")
REPO_PATH = re.compile(r"(?<![\w./-])(?:tests|code|book|tools|manuscript|attnbook)/[\w./-]*")
DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
NAME = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?:\(.*\))?$", re.S)
ROLE = re.compile(r":(?:py:)?(?:func|class|data|mod|meth|attr|exc|obj):`~?([^`]+)`")
LITERAL = re.compile(r"``(.+?)``|(?<!`)`([^`]+)`(?!`)", re.S)
COMPARES = re.compile(r"一致|相同|相等|等于|比较|相比|对照|核对|比对")
FUNCTION_WORD = re.compile(r"(?:函数|方法|类|层)\s*$")
FILE_NAME = r"\.(?:py|md|yml|yaml|txt|toml|ipynb|html|zip|json|css|js|bib|cfg|ini|pdf|png|svg)$"
CAMEL = re.compile(r"^_?[A-Z][a-z0-9]+[A-Z]\w*$")
EXTERNAL_ROOTS = {"tf": "tensorflow", "keras": "keras", "np": "numpy", "tensorflow": "tensorflow",
                  "numpy": "numpy"}


@dataclass(frozen=True)
class Pointer:
    kind: str      # "test", "path", "object", "name", "role"
    target: str
    context: str   # the paragraph the pointer stands in
    where: str     # page or module, for the report


# --- what the package and the pages define ------------------------------------------------


@functools.cache
def package_modules():
    """``{name: module}`` of every module of attnbook, namespace packages' modules
    included (``__main__`` modules left out: importing one runs it)."""
    return {name: importlib.import_module(name) for name, _ in module_sources()}


def _identifiers(source):
    """Every identifier of Python source: its names, and the identifiers inside its strings."""
    found = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(re.findall(r"[A-Za-z_]\w*", source))
    for token in tokens:
        if token.type == tokenize.NAME:
            found.add(token.string)
        elif token.type in (tokenize.STRING, tokenize.COMMENT) or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            found |= set(re.findall(r"[A-Za-z_]\w*", token.string))
    return found


@functools.cache
def package_identifiers():
    """Every identifier the package's source uses: names, parameters, attributes, keys."""
    return frozenset().union(*(_identifiers(p.read_text(encoding="utf-8")) for p in PACKAGE_DIR.rglob("*.py")))


@functools.cache
def page_identifiers():
    """Every identifier the executed pages' code cells use (the variables a page names)."""
    found = set()
    for path in EXECUTED.rglob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                found |= _identifiers(cell.source)
    return frozenset(found)


def _class_attributes(cls):
    """The names a class has: its attributes, dataclass fields and ``self.x`` it assigns."""
    names = set(dir(cls))
    if is_dataclass(cls):
        names |= {f.name for f in fields(cls)}
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _has(obj, attribute):
    if hasattr(obj, attribute):
        return True
    return inspect.isclass(obj) and attribute in _class_attributes(obj)


def _walk(obj, parts):
    """Follow ``parts`` as attributes from ``obj``; a class's instance attributes count."""
    for i, part in enumerate(parts):
        if not _has(obj, part):
            return False
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return i == len(parts) - 1   # an instance attribute (self.depth), the last part
    return True


@functools.cache
def package_objects():
    """``{short name: [objects]}``: every module, function, class of attnbook by its name."""
    found = {}
    for name, module in package_modules().items():
        found.setdefault(name.rsplit(".", 1)[-1], []).append(module)
        for attribute, value in vars(module).items():
            if inspect.isfunction(value) or inspect.isclass(value) or inspect.ismodule(value):
                found.setdefault(attribute, []).append(value)
            elif not attribute.startswith("__"):
                found.setdefault(attribute, []).append(module)   # a constant: its module holds it
    return found


def resolve_dotted(target, module=None):
    """Whether a dotted name (``attnbook.cost.score_table``, ``cost.score_table``,
    ``tf.where``, ``MiniMultiHeadAttention.depth``, ``.wire.Message``) names an object."""
    if target.startswith("."):
        if module is None:
            return False
        package = module.__name__ if hasattr(module, "__path__") else module.__name__.rsplit(".", 1)[0]
        dots = len(target) - len(target.lstrip("."))
        base = package.rsplit(".", dots - 1)[0] if dots > 1 else package
        target = f"{base}.{target.lstrip('.')}"
    parts = target.split(".")
    if module is not None and _walk(module, parts):
        return True
    if parts[0] in EXTERNAL_ROOTS:
        parts = EXTERNAL_ROOTS[parts[0]].split(".") + parts[1:]
    for cut in range(len(parts), 0, -1):   # the longest importable module, then attributes
        try:
            base = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, TypeError, ValueError):
            continue
        return _walk(base, parts[cut:])
    if parts[0] in package_objects():
        return any(_walk(obj, parts[1:]) for obj in package_objects()[parts[0]])
    return None   # not a name of the package or a library: an attribute of a variable


def variable_attribute(target, local=frozenset()):
    """For ``verdict.state`` or ``layer.h`` (a variable's attribute): whether code uses the
    variable's name and the attribute's."""
    head, *rest = target.split(".")
    names = package_identifiers() | local
    return head in names and all(part in names for part in rest)


def name_resolves(name, module=None, local=frozenset()):
    """Whether a bare name in a code span is something: a package object, a TensorFlow,
    Keras or NumPy name, or a name the package's code (or ``local``, a page's) uses."""
    if name in package_objects() or name in package_identifiers() or name in local:
        return True
    if module is not None and hasattr(module, name):
        return True
    return any(resolve_dotted(f"{root}.{name}") for root in ("tf", "tf.nn", "tf.math", "keras.layers", "np"))


# --- finding pointers --------------------------------------------------------------------


def _function_like(name, before=""):
    return "_" in name or bool(CAMEL.match(name)) or bool(FUNCTION_WORD.search(before))


def pointers_in(paragraph, literals, where):
    """The pointers of one paragraph: its text and its code spans (``literals``)."""
    found = []
    for match in TEST_POINTER.finditer(paragraph):
        found.append(Pointer("test", match.group(0), paragraph, where))
    tested = {p.target for p in found}
    for match in REPO_PATH.finditer(paragraph):
        path = match.group(0)
        if not any(t.startswith(path) or path.startswith(t.split("::")[0]) for t in tested):
            found.append(Pointer("path", path, paragraph, where))
    for literal in literals:
        text = literal.strip()
        call = NAME.match(text)
        head = text.split("(", 1)[0]
        if DOTTED.match(head) and not re.search(FILE_NAME, head):
            found.append(Pointer("object", head, paragraph, where))
        elif call:
            before = paragraph[:paragraph.find(text)] if text in paragraph else ""
            if _function_like(call.group("name"), before):
                found.append(Pointer("name", call.group("name"), paragraph, where))
    return found


def docstring_pointers(source, module_name):
    """``[Pointer]`` of every docstring of a module's source, paragraph by paragraph."""
    tree = ast.parse(source)
    found = []
    for node in [tree, *ast.walk(tree)]:
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=True)
        if not doc:
            continue
        where = module_name + ("" if isinstance(node, ast.Module) else f".{node.name}")
        for paragraph in re.split(r"\n\s*\n", doc):
            literals = [a or b for a, b in LITERAL.findall(ROLE.sub("", paragraph))]
            found += pointers_in(paragraph, literals, where)
            found += [Pointer("role", role, paragraph, where) for role in ROLE.findall(paragraph)]
    # a pointer found twice (a Module node is walked twice) is reported once
    return list(dict.fromkeys(found))


def site_pointers(page, parsed):
    """``([Pointer], [link problems])`` of the editor's text of a built page."""
    article = parsed.select_one("article.bd-article") or parsed
    roots = article.select(".editorial") if page in SECTION_PAGES else [article]
    found, links = [], []
    for root in roots:
        root = BeautifulSoup(str(root), "html.parser")
        for selector in NOT_TEXT:
            for node in root.select(selector):
                node.decompose()
        for block in root.find_all(BLOCKS):
            if block.find(BLOCKS):
                continue
            # no separator: the ledger cuts names into text nodes at <wbr> (tests/ test_ x.py)
            text = re.sub(r"\s+", " ", block.get_text()).strip()
            literals = [code.get_text() for code in block.select("code")]
            found += pointers_in(text, literals, page)
        links += [a["href"] for a in root.select("a.reference.internal[href]")]
    return found, links


# --- resolving them ------------------------------------------------------------------------


def _test_source(path, name=None):
    """The text a test pointer points at: the file, or the test with the module-level
    functions and classes it names (its helpers)."""
    source = path.read_text(encoding="utf-8")
    if name is None:
        return source
    tree = ast.parse(source)
    defs = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    test = defs[name]
    used = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    return "\n".join(ast.get_source_segment(source, node) for node in [test, *(defs[u] for u in sorted(used) if u in defs)])


def around(pointer):
    """The sentence that holds the pointer and the one before it (a pointer often follows
    the sentence that says what is compared: ``……一致。这由 tests/test_x.py 核对。``)."""
    sentences = [s for s in re.split(r"(?<=[。；！？])", pointer.context) if s.strip()]
    at = next((i for i, s in enumerate(sentences) if pointer.target in s), 0)
    return "".join(sentences[max(0, at - 1):at + 1])


def compared_names(pointer):
    """The classes and dotted API names the text around a test pointer says it compares or checks."""
    text = around(pointer)
    if not COMPARES.search(text):
        return []
    spans = [a or b for a, b in LITERAL.findall(text)] + ROLE.findall(text)
    spans += re.findall(r"\b(?:[a-z_]\w*\.)+[A-Z]\w+\b", text)   # a name in the site's text
    names = []
    for span in spans:
        head = span.strip().split("(", 1)[0].lstrip("~")
        if TEST_POINTER.fullmatch(head) or REPO_PATH.match(head):
            continue
        last = head.rsplit(".", 1)[-1]
        if (DOTTED.match(head) and CAMEL.match(last)) or CAMEL.match(head):
            names.append(head)
    return list(dict.fromkeys(names))


def problem(pointer, module=None, local=frozenset(), root=ROOT):
    """Why ``pointer`` leads nowhere, or None."""
    if pointer.kind == "test":
        file, _, name = pointer.target.partition("::")
        path = root / file
        if not path.is_file():
            return f"{pointer.target}: no such file"
        if name and not re.search(rf"^\s*(?:async\s+)?def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
            return f"{pointer.target}: {file} defines no {name}"
        source = _test_source(path, name or None)
        for compared in compared_names(pointer):
            last = compared.rsplit(".", 1)[-1]
            if not re.search(rf"(?<![\w]){re.escape(last)}(?![\w])", source):
                return (f"{pointer.target}: the text says it compares or checks {compared}, "
                        f"but {'the test' if name else 'the file'} never mentions {last}")
        return None
    if pointer.kind == "path":
        target = pointer.target.rstrip(".")
        path = root / ("code/" + target if target.startswith("attnbook/") else target)
        return None if path.exists() else f"{pointer.target}: no such file or folder"
    if pointer.kind in ("object", "role"):
        found = resolve_dotted(pointer.target, module)
        head = pointer.target.lstrip(".").split(".")[0]
        strict = pointer.target.startswith(".") or head in EXTERNAL_ROOTS or any(
            inspect.ismodule(obj) for obj in package_objects().get(head, []))
        if not found and not strict:   # a variable's attribute (layer.h), or a bare name in a role
            found = variable_attribute(pointer.target, local) or name_resolves(pointer.target, module, local)
        return None if found else f"{pointer.target}: imports nothing"
    if pointer.kind == "name":
        return None if name_resolves(pointer.target, module, local) else \
            f"`{pointer.target}`: no object of the package, TensorFlow, Keras or NumPy, and no code uses the name"
    raise ValueError(pointer.kind)


def link_problem(page, href, html=HTML):
    """Why an internal link of ``page`` leads nowhere, or None."""
    file, _, anchor = href.partition("#")
    base = (html / page).parent
    target = (base / file).resolve() if file else (html / f"{page}.html")
    if not target.is_file():
        return f"{href}: no such page"
    if anchor and anchor not in ids_of(target):
        return f"{href}: {target.relative_to(html)} has no #{anchor}"
    return None


@functools.cache
def ids_of(path):
    """The ids of a built page's elements."""
    return frozenset(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


# --- the tests ----------------------------------------------------------------------------------


def module_sources():
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1] != "__main__":
            yield name, path.read_text(encoding="utf-8")


def test_every_pointer_in_the_packages_docstrings_resolves():
    modules = package_modules()
    found, bad = 0, []
    for name, source in module_sources():
        for pointer in docstring_pointers(source, name):
            found += 1
            why = problem(pointer, modules.get(name))
            if why:
                bad.append(f"{pointer.where}: {why}")
    print(f"{found} pointers in the package's docstrings")
    assert found >= 100, found
    assert not bad, "\n".join(bad)


@pytest.mark.book
@pytest.mark.parametrize("page", [*SECTION_PAGES, *EDITOR_PAGES])
def test_every_pointer_in_the_editors_text_resolves(page):
    found, links = site_pointers(page, soup(page))
    bad = [why for pointer in found if (why := problem(pointer, local=page_identifiers()))]
    bad += [why for href in sorted(set(links)) if (why := link_problem(page, href))]
    print(f"{page}: {len(found)} pointers, {len(set(links))} links")
    assert not bad, f"{page}:\n" + "\n".join(bad)


@pytest.mark.book
def test_the_editors_text_points_at_tests_and_package_objects():
    """The scan finds what it scans for on the built site (a scanner that found nothing
    would pass everything)."""
    kinds = {}
    for page in [*SECTION_PAGES, *EDITOR_PAGES]:
        for pointer in site_pointers(page, soup(page))[0]:
            kinds.setdefault(pointer.kind, set()).add(pointer.target)
    print({kind: len(targets) for kind, targets in kinds.items()})
    assert {"test", "path", "object", "name"} <= set(kinds), kinds
    assert len(kinds["test"]) >= 10 and len(kinds["object"]) >= 10, kinds


# --- the scanner can fail -----------------------------------------------------------------------


def _doc_problems(docstring, module="attnbook.attention"):
    source = f'"""{docstring}"""\n'
    return [why for p in docstring_pointers(source, module)
            if (why := problem(p, package_modules().get(module)))]


def test_a_comparison_pointer_to_a_test_that_never_builds_the_other_side_is_caught():
    """The audit's finding: the keras comparison pointed at tests/test_keras.py."""
    wrong = ("参数相同时，它与 ``keras.layers.MultiHeadAttention`` 的结果在 float32\n舍入之内一致。"
             "这由仓库里的测试\n``tests/test_keras.py`` 核对。")
    assert any("never mentions MultiHeadAttention" in why for why in _doc_problems(wrong))
    right = wrong.replace("tests/test_keras.py", "tests/test_attention.py::test_matches_keras_multi_head_attention")
    assert _doc_problems(right) == []
    whole_file = wrong.replace("tests/test_keras.py", "tests/test_attention.py")
    assert _doc_problems(whole_file) == []


def test_a_missing_test_file_or_function_is_caught():
    assert any("no such file" in why for why in _doc_problems("见 ``tests/test_nowhere.py``。"))
    assert any("defines no test_nowhere" in why
               for why in _doc_problems("见 ``tests/test_attention.py::test_nowhere``。"))
    assert _doc_problems("见 ``tests/test_attention.py::test_head_depth_scaling_not_d_model``。") == []


def test_a_name_that_imports_nothing_is_caught():
    assert _doc_problems("见 :func:`attnbook.cost.no_such_function`。")
    assert _doc_problems("见 ``attnbook.cost.no_such_function``。")
    assert _doc_problems("由函数 ``no_such_function`` 算出。")
    assert _doc_problems("交给 ``scaled_dot_product_atention``。")   # a typo
    ok = ("见 :func:`attnbook.cost.score_table`、``cost.peak_memory``、:func:`_attend`、``tf.where``、"
          "``MiniMultiHeadAttention.depth``、``attnbook.cost.PeakMemory.growth_bytes``、"
          "函数 ``scaled_dot_product_attention``、参数 ``attention_mask``。")
    assert _doc_problems(ok) == []


def test_a_missing_path_is_caught():
    assert _doc_problems("写进 ``book/data/nowhere/``。")
    assert _doc_problems("见 ``attnbook/nowhere.py``。")
    assert _doc_problems("写进 ``book/data/bench/``，见 ``attnbook/minimal.py``。") == []


def test_the_site_scanner_reads_code_spans_captions_and_links(tmp_path):
    html = ('<article class="bd-article"><p>配套包的 <code>scaled_dot_product_attention</code> 与函数 '
            '<code>no_such_function</code>；见 <code>tests/test_nowhere.py</code>。</p>'
            '<figure><figcaption>由 <code>attnbook.plots.no_such_plot</code> 画出。</figcaption></figure>'
            '<p><a class="reference internal" href="#here">这里</a>，'
            '<a class="reference internal" href="#nowhere">那里</a>。</p><span id="here"></span></article>')
    (tmp_path / "p.html").write_text(html, encoding="utf-8")
    found, links = site_pointers("p", BeautifulSoup(html, "html.parser"))
    bad = sorted(why for p in found if (why := problem(p)))
    assert [why.split(":")[0] for why in bad] == ["`no_such_function`", "attnbook.plots.no_such_plot",
                                                   "tests/test_nowhere.py"], bad
    assert [link_problem("p", href, html=tmp_path) for href in links] == [None, "#nowhere: p.html has no #nowhere"]
