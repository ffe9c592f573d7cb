"""The claims ledger (论断核对表), built from what backs each claim, so it cannot drift.

``book/claims.yml`` lists the manuscript's checkable claims, each quoted word for word.
What backs a claim is found where it lives:

* tests: a test function decorated ``@pytest.mark.claim("<id>")`` in ``tests/*.py``,
  read from the source without running it -> 由测试断言;
* cells: a code cell tagged ``claim-<id>`` on any page; the cell gets the HTML id
  ``claim-<id>`` so the ledger can link to it -> 由单元格计算;
* corrections: an editor's note ``:::{editorial}`` with ``:correction: <id>``
  (editorial.py) -> 编者更正;
* literature: ``unverifiable: [bibtex keys]`` in claims.yml -> 无法在本书中验证.

``:::{claims-ledger}`` renders the table: the quotes, notes and citations when the page
is read, the status and the links once every page is read. A claim with no backing, or
a tag, marker or correction that names no claim, is a build warning (an error under
``-W``). tests/test_claims.py checks the same without a build.
"""

import ast
import re
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

TAG_PREFIX = "claim-"
STATUS = {"correction": "编者更正", "cell": "由单元格计算", "test": "由测试断言", "literature": "无法在本书中验证"}


def load_claims(path):
    """The claims of ``claims.yml``: a list of dicts with ``id``, ``quote`` and optional
    ``unverifiable`` (bibtex keys) and ``note``."""
    claims = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    ids = [claim["id"] for claim in claims]
    if len(ids) != len(set(ids)):
        raise ValueError(f"claims.yml repeats an id: {sorted(i for i in ids if ids.count(i) > 1)}")
    return claims


def test_backings(tests_dir):
    """``{claim id: [(file, test name, line)]}`` for every ``@pytest.mark.claim("id")``."""
    found = {}
    for path in sorted(Path(tests_dir).glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for claim_id in _claim_marks(node):
                found.setdefault(claim_id, []).append((f"tests/{path.name}", node.name, node.lineno))
    return found


def _claim_marks(function):
    for decorator in function.decorator_list:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "claim" and decorator.args
                and isinstance(decorator.args[0], ast.Constant)):
            yield decorator.args[0].value


def status_of(backing):
    """The ledger status of a claim from what backs it (a dict of lists), or None."""
    for kind in ("correction", "cell", "test", "literature"):
        if backing.get(kind):
            return STATUS[kind]
    return None


# --- collecting the cells ---------------------------------------------------------------


def _store(env):
    if not hasattr(env, "claim_cells"):
        env.claim_cells = {}  # docname -> [(claim id, anchor)]
        env.claims_ledger_docs = set()
    return env.claim_cells


def _collect_cells(app, doctree):
    cells = _store(app.env)
    cells.pop(app.env.docname, None)
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code":
            continue
        for tag in cell.get("cell_metadata", {}).get("tags", []):
            if tag.startswith(TAG_PREFIX):
                claim_id = tag[len(TAG_PREFIX):]
                anchor = _unique_anchor(cells.get(app.env.docname, []), f"{TAG_PREFIX}{claim_id}")
                cell["ids"].append(anchor)
                cells.setdefault(app.env.docname, []).append((claim_id, anchor))


def _unique_anchor(taken, anchor):
    used = {a for _, a in taken}
    n, candidate = 1, anchor
    while candidate in used:
        n += 1
        candidate = f"{anchor}-{n}"
    return candidate


# --- the ledger -----------------------------------------------------------------------


class ledger_slot(nodes.General, nodes.Element):
    """Where a claim's status or backing goes once every page is read."""


class ClaimsLedgerDirective(SphinxDirective):
    def run(self):
        config = self.env.config
        _store(self.env)
        self.env.claims_ledger_docs.add(self.env.docname)
        path = Path(self.env.srcdir) / config.claims_file
        self.env.note_dependency(str(path))
        for test_file in sorted((Path(self.env.srcdir) / config.claims_tests).glob("test_*.py")):
            self.env.note_dependency(str(test_file))
        table = nodes.table(classes=["claims-ledger", "colwidths-given"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (6, 44, 12, 38):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row([nodes.Text(t) for t in ("编号", "原稿的论断", "状态", "依据")])
        group += head
        body = nodes.tbody()
        for number, claim in enumerate(load_claims(path), start=1):
            body += _row([
                nodes.Text(str(number)),
                self._claim_cell(claim),
                ledger_slot(claim_id=claim["id"], part="status"),
                self._backing_cell(claim),
            ], ids=[f"claim-{claim['id']}"])
        group += body
        return [table]

    def _claim_cell(self, claim):
        cell = nodes.container()
        cell += nodes.paragraph("", f"“{claim['quote']}”", classes=["claim-quote"])
        if claim.get("note"):
            note = self._parse(claim["note"])
            note["classes"].append("claim-note")
            cell += note
        return cell

    def _backing_cell(self, claim):
        cell = nodes.inline()
        cell += ledger_slot(claim_id=claim["id"], part="backing")
        keys = claim.get("unverifiable", [])
        if keys:
            cell += self._parse("文献：" + "；".join(f"{{cite:t}}`{key}`" for key in keys))
        return cell

    def _parse(self, text):
        box = nodes.container()
        if text:
            self.state.nested_parse(StringList([text]), self.content_offset, box)
        return box


def _row(cells, ids=()):
    row = nodes.row(ids=list(ids))
    for content in cells:
        entry = nodes.entry()
        entry += content if isinstance(content, nodes.Element) else nodes.paragraph("", "", content)
        row += entry
    return row


def backings(app):
    """``{claim id: {"test": [...], "cell": [...], "correction": [...], "literature": [...]}}``."""
    env = app.env
    found = {}
    for claim in load_claims(Path(env.srcdir) / app.config.claims_file):
        found[claim["id"]] = {"literature": claim.get("unverifiable", [])}
    for claim_id, tests in test_backings(Path(env.srcdir) / app.config.claims_tests).items():
        found.setdefault(claim_id, {})["test"] = tests
    for docname, cells in _store(env).items():
        for claim_id, anchor in cells:
            found.setdefault(claim_id, {}).setdefault("cell", []).append((docname, anchor))
    for docname, notes in getattr(env, "editorial_notes", {}).items():
        for node_id, title, correction in notes:
            if correction:
                found.setdefault(correction, {}).setdefault("correction", []).append((docname, node_id, title))
    return found


def _fill_ledger(app, doctree, fromdocname):
    slots = list(doctree.findall(ledger_slot))
    if not slots:
        return
    found = backings(app)
    known = {claim["id"] for claim in load_claims(Path(app.env.srcdir) / app.config.claims_file)}
    for claim_id in sorted(set(found) - known):
        logger.warning(f"claims ledger: {claim_id!r} is named by a test, cell tag or correction "
                       f"but is not in {app.config.claims_file}", type="claims")
    for slot in slots:
        backing = found[slot["claim_id"]]
        if slot["part"] == "status":
            status = status_of(backing)
            if status is None:
                logger.warning(f"claims ledger: claim {slot['claim_id']!r} has no backing", type="claims")
            slot.replace_self(nodes.Text(status or "（没有依据）"))
        else:
            slot.replace_self(_links(app, fromdocname, backing))


def _links(app, fromdocname, backing):
    box = nodes.inline()
    items = []
    for docname, node_id, title in backing.get("correction", []):
        items.append(_ref(app, fromdocname, docname, node_id, f"编者注：{title}"))
    for docname, anchor in backing.get("cell", []):
        items.append(_ref(app, fromdocname, docname, anchor, f"{_page_name(app.env, docname)}中的单元格"))
    repo = app.config.html_theme_options.get("repository_url", "").rstrip("/")
    for file, name, line in backing.get("test", []):
        label = nodes.literal(text=f"{file}::{name}")
        if repo:
            ref = nodes.reference("", "", refuri=f"{repo}/blob/main/{file}#L{line}")
            ref += label
            label = ref
        items.append(label)
    for i, item in enumerate(items):
        if i:
            box += nodes.Text("；")
        box += item
    return box


def _page_name(env, docname):
    """正文 for the author's page, else the title without its number: 《成本账，实测》."""
    if getattr(env, "editorial_docs", {}).get(docname) == "blocks":
        return "正文"
    return "《" + re.sub(r"^4\.5\s*(的延伸：)?", "", env.titles[docname].astext()) + "》"


def _ref(app, fromdocname, docname, anchor, text):
    ref = nodes.reference("", "", internal=True,
                          refuri=app.builder.get_relative_uri(fromdocname, docname) + "#" + anchor)
    ref += nodes.Text(text)
    return ref


def _outdated(app, env, added, changed, removed):
    """Any page read again may change what backs a claim: the ledger is read again too."""
    _store(env)
    return sorted(env.claims_ledger_docs) if (added or changed or removed) else []


def _purge(app, env, docname):
    _store(env).pop(docname, None)
    env.claims_ledger_docs.discard(docname)


def _merge(app, env, docnames, other):
    _store(other)
    for docname in docnames:
        if docname in _store(other):
            _store(env)[docname] = _store(other)[docname]
    env.claims_ledger_docs |= other.claims_ledger_docs & set(docnames)


def setup(app):
    app.add_config_value("claims_file", "book/claims.yml", "env", types=[str])
    app.add_config_value("claims_tests", "tests", "env", types=[str])
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.add_node(ledger_slot)
    app.connect("doctree-read", _collect_cells)
    app.connect("doctree-resolved", _fill_ledger)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
