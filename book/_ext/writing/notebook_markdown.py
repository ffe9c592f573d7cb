"""A page's MyST markdown cells as plain Markdown, for the notebook a reader downloads.

Jupyter and Colab know CommonMark, not MyST: a directive fence, a role or a ``(label)=``
target shows up there as raw text, and a ``literalinclude`` names a file that exists only
in the repository. :func:`standalone` rewrites every markdown cell of a notebook:

* ``literalinclude`` becomes the code it includes. Inside an ``{exercise}`` (or with
  ``:class: runnable``) it is code the reader runs, the exercise's starting point, so
  it becomes a code cell that runs on its own (the module's imports, made absolute, go
  in front of a ``:pyobject:``); anywhere else the code is only shown, as a fenced block.
* ``{editorial}`` and ``{editorial-page}`` become a quoted block headed 编者;
  admonitions a quoted block with their title; ``{exercise}`` a heading with its number;
  a solution is folded in ``<details>`` as the page folds it; any other directive
  becomes its content.
* Roles become text: cross-references and citations as the page shows them, linked to
  the published site; ``{glue:text}`` the value glued in this build; ``{math}`` ``$…$``.
  Relative links to other pages point to the site; ``(label)=`` lines and ``%`` comments
  go away.
* A code cell tagged ``editorial`` begins with the comment ``# 编者的单元…``.
* A figure's caption, kept by myst-nb in the cell's metadata, follows the cell as a
  markdown cell with the figure's number.

The text is read by myst-parser's own parser with the book's extensions (``EXTENSIONS``),
so a fence, a directive, a code span or a role is what the page's build takes it to be,
at any depth (a directive in a list item stays in it). Only what Jupyter would show as
MyST is replaced, found by its token's lines (a block) or source span (inline); all the
rest is copied as written.

What needs the build (resolving a reference, reading an included file, a glued value, an
exercise's number) is asked of a ``page`` object (see :class:`Page`), so the text
handling here can be tested without Sphinx.
"""

import ast
import copy
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
from docutils.parsers.rst.directives.misc import TestDirective
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.directives import parse_directive_text
from myst_parser.parsers.mdit import create_md_parser

from book._ext.shared.manuscript import FIGURE_SLOT, WAITING

EXTENSIONS = {"amsmath", "colon_fence", "deflist", "dollarmath", "substitution"}  # as in _config.yml
EDITORIAL = {"editorial", "editorial-page"}
EDITOR = "编者"
ADMONITIONS = {"note": "注", "tip": "提示", "hint": "提示", "important": "重要", "warning": "警告",
               "caution": "小心", "attention": "注意", "danger": "危险", "error": "错误", "seealso": "另见"}
CODE_BLOCKS = {"code-block", "code", "sourcecode", "code-cell"}


@dataclass
class Included:
    """What a ``literalinclude`` shows: the text, its language, and the file it came from."""

    text: str
    language: str
    path: Path
    whole_file: bool


class Page:
    """What the conversion asks of the build (``notebook_download.BuiltPage`` answers it):

    * ``include(argument, options)``: the :class:`Included` code of ``literalinclude
      argument`` with ``options``;
    * ``role(name, text)``: a role as Markdown, or None when the page has no answer for it;
    * ``exercise_title(label)``: '练习 4.5.1（标题）' for an exercise's label, or None;
    * ``link(target)``: the URL of a relative link ``target`` (a path in the sources), or None;
    * ``figure_number(name)``: '图 20' for the figure named ``name``, or None;
    * ``next_section()``: the MyST sentence ``{next-section}`` opens with on this page.
    """


@dataclass
class Code:
    """A code cell to insert between markdown cells."""

    source: str


@dataclass
class Fold:
    """Where a solution begins (its title) or ends (None): folded as on the page."""

    title: object = None


@dataclass
class _Context:
    page: Page
    in_exercise: bool = False
    fold: object = None  # the title of the solution being folded, across cells
    reopen: bool = False  # the fold was closed at a code cell and goes on after it


class _Glued:
    """``page``, answering the ``{glue}`` roles of this notebook's own values itself."""

    def __init__(self, page, glued):
        self.page, self.glued = page, glued

    def __getattr__(self, name):
        return getattr(self.page, name)

    def role(self, name, text):
        if name in ("glue", "glue:text", "glue:any", "glue:md") and "::" not in text:
            return glue_text(self.glued, name, text)
        return self.page.role(name, text)


# --- the notebook ----------------------------------------------------------------------


def standalone(notebook, page):
    """A copy of ``notebook`` whose markdown cells need nothing but a Jupyter to show.

    The hidden outputs that ``glue`` records are dropped (JupyterLab would say it has no
    renderer for them); their values are in the text.
    """
    result = copy.deepcopy(notebook)
    cells, context = [], _Context(_Glued(page, take_glue(result)))
    for cell in result.cells:
        if cell.cell_type == "code":
            cells += [_label_editorial(cell)] + _caption(cell, context.page)
            continue
        if cell.cell_type != "markdown":
            cells.append(cell)
            continue
        for i, part in enumerate(_cells(render(cell.source, context), context)):
            new = copy.deepcopy(cell) if isinstance(part, str) else nbformat.v4.new_code_cell(part.source)
            if isinstance(part, str):
                new.source = part
            if i:
                new["id"] = f"{cell.get('id', 'cell')}-{i}"[:64]
            cells.append(new)
    result.cells = cells
    return result


def _caption(cell, page):
    """A figure cell's caption, which myst-nb keeps in the cell's metadata, as a markdown
    cell after it: '**图 20**　注意力打分的信号流'."""
    figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
    if not figure.get("caption"):
        return []
    number = page.figure_number(figure["name"]) if figure.get("name") else None
    text = _inline(str(figure["caption"]), page)
    caption = nbformat.v4.new_markdown_cell(f"**{number}**　{text}" if number else text)
    caption["id"] = f"{cell.get('id', 'cell')}-caption"[:64]
    return [caption]


def _label_editorial(cell):
    """An ``editorial``-tagged code cell says so in its first line, as the page marks it."""
    tags = cell.get("metadata", {}).get("tags", [])
    if "editorial" in tags and not cell.source.startswith((f"# {EDITOR}", "%%")):
        cell.source = f"# {EDITOR}的单元，不是原稿的一部分\n" + cell.source
    return cell


def _cells(parts, context):
    """Consecutive Markdown parts (blocks) joined into one cell; each code part its own.

    A solution goes in ``<details>``, as the page folds it; a code cell inside it (its
    check) closes the fold, and the text after the cell opens a new one.
    """
    cells, text = [], []

    def close_cell():
        if context.fold is not None and text:
            text.append("</details>")
            context.reopen = True
        if "".join(text).strip():
            cells.append("\n\n".join(text))
        text.clear()

    for part in parts:
        if isinstance(part, Fold) and part.title is not None:
            text.append(f"<details>\n<summary>{part.title}</summary>")
            context.fold, context.reopen = part.title, False
        elif isinstance(part, Fold):
            if context.fold is not None and not context.reopen:
                text.append("</details>")
            context.fold, context.reopen = None, False
        elif isinstance(part, str) and part.strip():
            if context.fold is not None and context.reopen:
                text.append(f"<details>\n<summary>{context.fold}（续）</summary>")
                context.reopen = False
            text.append(part.strip("\n"))
        elif isinstance(part, Code):
            close_cell()
            cells.append(part)
    close_cell()
    return cells


def take_glue(notebook):
    """The values glued in ``notebook``, by name; their hidden outputs are removed from it."""
    from myst_nb.ext.glue import extract_glue_data_cell

    glued = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            glued.update(extract_glue_data_cell(cell))
    return glued


def glue_text(glued, name, text):
    """A ``{glue:text}`key:format``` role as myst-nb shows it, or None for an unknown key."""
    from myst_nb.core.variables import format_plain_text

    key, fmt = text.rsplit(":", 1) if ":" in text else (text, "")
    data = glued.get(key, {}).get("data", {})
    if name == "glue:md" and "text/markdown" in data:
        return data["text/markdown"]
    if "text/plain" not in data:
        return None
    return format_plain_text(data["text/plain"], fmt)


# --- MyST, read by myst-parser -----------------------------------------------------------


def _spanned(rule):
    """``rule``, noting in the first token it adds the (start, end) of the source it read:
    markdown-it keeps no positions for inline tokens."""

    def spanned(state, silent):
        start, count = state.pos, len(state.tokens)
        found = rule(state, silent)
        # The rule's push may first turn the pending text into a token; a link's label
        # tokens, pushed inside the link rule, have their own spans already.
        added = [t for t in state.tokens[count:] if t.type != "text" and "span" not in t.meta]
        if found and added:
            added[0].meta["span"] = (start, state.pos)
        return found

    return spanned


def _parser():
    """myst-parser's parser with the book's extensions, its inline rules noting spans."""
    parser = create_md_parser(MdParserConfig(enable_extensions=EXTENSIONS), RendererHTML)
    rules = parser.inline.ruler
    for name, rule in zip(rules.get_active_rules(), rules.getRules("")):
        rules.at(name, _spanned(rule))
    return parser


_PARSER = _parser()


class _Source:
    """A text being converted: where its lines begin, and how far the search in it got."""

    def __init__(self, text):
        self.text, self.lines, self.cursor = text, text.split("\n"), 0
        self.starts = list(itertools.accumulate((len(line) + 1 for line in self.lines), initial=0))

    def span(self, begin, end, newline=True):
        """The offsets of lines ``begin`` to ``end - 1``, and of the line break after them."""
        return self.starts[begin], min(self.starts[end] - (not newline), len(self.text))

    def find(self, piece, line):
        """Where ``piece`` is, from ``line`` on and after the piece found before; or -1."""
        at = self.text.find(piece, max(self.cursor, self.starts[line]))
        self.cursor = at + len(piece) if at >= 0 else self.cursor
        return at


def _apply(text, edits):
    """``text`` with each ``(start, end, new)`` made, as a list of parts: Markdown, and the
    :class:`Code` and :class:`Fold` parts where ``new`` is a list."""
    parts, prose, at = [], [], 0
    for start, end, new in sorted(edits, key=lambda edit: edit[0]):
        prose.append(text[at:start] + (new if isinstance(new, str) else ""))
        if not isinstance(new, str):
            parts, prose = parts + ["".join(prose), *new], []
        at = end
    return parts + ["".join(prose) + text[at:]]


def render(text, context):
    """MyST ``text`` as a list of Markdown strings, :class:`Code` and :class:`Fold` parts."""
    return _apply(text, list(_edits(_Source(text), _PARSER.parse(text), context)))


def _inline(text, page):
    """One paragraph of MyST (a title, a caption) as Markdown."""
    return "".join(_apply(text, list(_inline_edits(_PARSER.parseInline(text)[0], _Source(text), page))))


def _edits(source, tokens, context):
    """(start, end, new) for what Jupyter would show as MyST; the rest stays as written."""
    for token in tokens:
        if token.type == "inline":
            yield from _inline_edits(token, source, context.page)
        elif token.type in ("myst_target", "myst_line_comment"):
            yield *source.span(*token.map), ""
        elif token.type == "math_block_label":  # the label after the closing $$
            start, end = source.span(token.map[1] - 1, token.map[1], newline=False)
            yield source.text.rindex("$$", start, end) + 2, end, ""
        elif token.type in ("fence", "colon_fence") and _named(token):
            yield *source.span(*token.map, newline=False), _directive_block(token, source, context)


def _named(token):
    """(name, argument) of a fence that opens ``{name} argument``, as myst-parser tells a
    directive; or None."""
    name, *arg = token.info.split(maxsplit=1) or [""]
    return (name[1:-1], "".join(arg).strip()) if name.startswith("{") and name.endswith("}") else None


def _directive_block(token, source, context):
    """A directive's parts; inside a list or a quote, one string indented as it was."""
    content = token.content
    if token.type == "colon_fence" and content.startswith(":::"):
        content = "\n" + content  # a nested fence, not options (as myst-parser reads it)
    name, arg = _named(token)
    # docutils' test directive takes an argument, content and (for myst-parser) any option as written.
    parsed = parse_directive_text(TestDirective, arg, content)
    parts = _directive(name, arg, parsed.options, "\n".join(parsed.body), context)
    if token.level == 0 or not all(isinstance(part, str) for part in parts):
        return parts
    text = "\n\n".join(part.strip("\n") for part in parts if part.strip())
    first = source.lines[token.map[0]]
    prefix = first[:first.index(token.markup)]
    inner = "".join(ch if ch in "> " else " " for ch in prefix)
    lines = [prefix + text.split("\n")[0]] + [(inner + line).rstrip() for line in text.split("\n")[1:]]
    # A blank line on either side, so that the text around is no lazy continuation of a quote.
    before = token.map[0] and source.lines[token.map[0] - 1].strip(" >")
    after = token.map[1] < len(source.lines) and source.lines[token.map[1]].strip(" >")
    return "\n".join([inner.rstrip()] * bool(before) + lines + [inner.rstrip()] * bool(after)) if text else ""


def _directive(name, arg, options, content, context):
    page = context.page
    if name == "literalinclude":
        return [_literalinclude(arg, options, context)]
    if name in CODE_BLOCKS:
        return [_fenced(content, arg or options.get("language", ""))]
    if name == "math":
        return ["$$\n" + content.strip("\n") + "\n$$"]
    if name == "exercise":
        title = page.exercise_title(options.get("label")) or "练习" + (f"（{_inline(arg, page)}）" if arg else "")
        return [f"### {title}"] + render(content, _Context(page, in_exercise=True))
    inner = render(content, context)
    if name in EDITORIAL:
        title = _inline(arg, page)
        return _quoted(inner, title if title.startswith(EDITOR) else EDITOR + (f"：{title}" if title else ""))
    if name == "admonition":
        return _quoted(inner, _inline(arg, page))
    if name in ADMONITIONS:
        return _quoted(inner, ADMONITIONS[name] + (f"：{_inline(arg, page)}" if arg else ""))
    if name in ("solution-start", "solution"):
        title = page.exercise_title(arg)
        return [Fold(f"解答：{title}" if title else "解答")] + inner + ([Fold()] if name == "solution" else [])
    if name == "solution-end":
        return [Fold()]
    if name in ("exercise-end", "bibliography", "toctree", "tableofcontents"):
        return []
    if name in ("figure", "image"):
        url = page.link(arg) or arg
        return [f"![{options.get('alt', '')}]({url})"] + inner
    if name == FIGURE_SLOT:  # "图 21 一步消息传递的信号流", captioned as a drawn figure is
        number, text = re.match(r"(\S+\s*\d+(?:[.-]\d+)*)\s+(.*)", arg, re.S).groups()
        return _quoted([WAITING], EDITOR) + [f"**{number}**　{_inline(text, page)}"]
    if name == "next-section":
        return render(page.next_section() + content, context)
    return inner


def _literalinclude(arg, options, context):
    included = context.page.include(arg, options)
    text = included.text if included.text.endswith("\n") else included.text + "\n"
    runnable_here = context.in_exercise or "runnable" in str(options.get("class", "")).split()
    if runnable_here and included.language in ("python", "python3", "ipython3", "py"):
        return Code(runnable(included.path, text, included.whole_file))
    caption = options.get("caption")
    fenced = _fenced(text, "udiff" if "diff" in options else included.language)
    return f"*{caption}*\n\n{fenced}" if isinstance(caption, str) and caption else fenced


def _fenced(text, language):
    text = text.rstrip("\n")
    ticks = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def _quoted(parts, title):
    """``parts`` as one Markdown block quote headed by ``title`` in bold; a code cell
    among them splits the quote in two."""
    groups = []
    for part in parts:
        if isinstance(part, str) and not part.strip():
            continue
        if isinstance(part, str) and groups and isinstance(groups[-1], str):
            groups[-1] += "\n\n" + part.strip("\n")
        else:
            groups.append(part.strip("\n") if isinstance(part, str) else part)
    if not groups or not isinstance(groups[0], str):
        groups.insert(0, "")
    groups[0] = f"**{title}**" + (f"\n\n{groups[0]}" if groups[0] else "")
    return [_quote(group) if isinstance(group, str) else group for group in groups]


def _quote(text):
    """Every line of ``text`` behind "> ". Display math goes on one line first: Jupyter
    takes the math out before it reads the Markdown, and would keep the "> " inside."""
    source, edits = _Source(text), []
    for token in _PARSER.parse(text):
        if token.type == "math_block" and token.map[1] - token.map[0] > 1:
            first = source.lines[token.map[0]]
            math = " ".join(filter(None, map(str.strip, token.content.split("\n"))))
            edits.append((*source.span(*token.map, newline=False), f"{first[:first.index('$$')]}$$ {math} $$"))
    text = "".join(_apply(text, edits))
    return "\n".join(f"> {line}".rstrip() for line in text.strip("\n").split("\n"))


# --- inline ----------------------------------------------------------------------------


def _inline_edits(token, source, page):
    """Edits for the roles and relative links of an inline token, found in ``source``
    by the spans that :func:`_spanned` noted."""
    for child in token.children:
        if "span" not in child.meta:
            continue
        start, end = child.meta["span"]
        piece = token.content[start:end]
        at = source.find(piece, token.map[0] + token.content.count("\n", 0, start))
        if at < 0:
            continue
        if child.type == "myst_role":
            yield at, at + len(piece), _role(child.meta["name"], child.content, page)
        elif child.type in ("link_open", "image"):
            yield from _relink(piece, at, page)
            if child.type == "link_open":
                source.cursor = at + 1  # the label's own tokens come next


def _role(name, text, page):
    if name == "math":
        return f"${text}$"
    answer = page.role(name, text)
    if answer is not None:
        return answer
    explicit = re.fullmatch(r"(.+?)\s*<(.+)>", text, re.S)
    return explicit[1] if explicit else text


def _relink(piece, at, page):
    """The edit that points the relative target of the link ``piece`` (at ``at``) to the site."""
    opened = piece.rfind("](")
    destination = piece[opened + 2:-1].split() if opened >= 0 and piece.endswith(")") else []
    if not destination or destination[0].startswith(("#", "/", "<")) or urlsplit(destination[0]).scheme:
        return
    url = page.link(destination[0])
    if url is not None:
        begin = at + piece.index(destination[0], opened + 2)
        yield begin, begin + len(destination[0]), url


# --- code the reader runs ----------------------------------------------------------------


def runnable(path, text, whole_file=False):
    """``text`` from the module at ``path`` as a cell that runs outside the repository.

    An excerpt (a ``:pyobject:``, some lines) gets the module's imports in front; relative
    imports are made absolute, and a name a package's ``__init__`` re-exports from a
    private module is imported from the package (``from attnbook import tf``).
    """
    path = Path(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module_name(path)
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    header = f"# 取自配套包的 {'/'.join(module.split('.'))}.py，在这里运行它即可。\n"
    if whole_file:
        lines = text.split("\n")
        for node in reversed(imports):
            lines[node.lineno - 1:node.end_lineno] = [_absolute(node, module, path)]
        return header + "\n".join(lines)
    wanted = "\n".join(_absolute(node, module, path) for node in imports)
    return header + (wanted + "\n\n\n" if wanted else "") + text


def _module_name(path):
    """'attnbook.exercises.buggy' for .../attnbook/exercises/buggy.py (packages have __init__)."""
    parts, folder = [path.stem], path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _absolute(node, module, path):
    """One import statement, with a relative module made absolute."""
    if not isinstance(node, ast.ImportFrom) or not node.level:
        return ast.unparse(node)
    base = module.split(".")[:-node.level]
    target = ".".join(base + ([node.module] if node.module else []))
    package = ".".join(base)
    names = {alias.name for alias in node.names}
    if node.module and node.module.startswith("_") and names <= _reexported(path, node.level, node.module):
        target = package
    return ast.unparse(ast.ImportFrom(module=target, names=node.names, level=0))


def _reexported(path, level, private):
    """Names that the package ``level`` folders up imports from its module ``private``."""
    init = path.parents[level - 1] / "__init__.py"
    if not init.is_file():
        return set()
    tree = ast.parse(init.read_text(encoding="utf-8"))
    return {alias.asname or alias.name for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == private
            for alias in node.names}


def setup(app):
    """Nothing to register: ``notebook_download`` calls :func:`standalone`. Listed among
    the extensions like every module of book/_ext (tests/test_extensions_config.py)."""
    return {"parallel_read_safe": True, "parallel_write_safe": True}
