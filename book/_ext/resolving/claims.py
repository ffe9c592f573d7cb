"""The claims ledger (论断核对表): every verdict is computed from the values this build recorded.

``book/claims.yml`` lists the manuscript's checkable claims, each quoted word for word,
and states for each how it is decided (the check language is documented at the top of
that file and implemented in ``book._ext.shared.claim_checks``; the marked tests run in
``book._ext.shared.claim_tests``; this module collects, renders and warns):

* ``check:`` a predicate on named values that cells of this build recorded with
  ``attnbook.pages.glue`` (myst-nb's glue data). The ledger evaluates it at build time and
  shows the values, a one-line reason and the verdict: 成立（本次构建实测）, 部分成立 or
  不成立（本次构建实测）;
* ``files:`` under ``check:``, the numbers of the results files that
  ``python -m attnbook.bench`` wrote on other hardware (committed under
  ``book/data/bench/``, read by the cost page): shown on the row apart from this build's,
  each after its provenance; a claim may be judged on such a file only where the claim
  says the file decides it (for parallel hardware: a GPU or TPU device kind), and the
  reason then names the file;
* ``unverifiable:`` bibtex keys, for a claim no code in this book can measure:
  无法在本书中验证, with the literature and the reason; ``unsourced: true`` instead,
  for such a claim no literature the book found discusses.

The verdict never comes from a tag. What else backs a claim is listed beside it: the
code cells tagged ``claim-<id>`` (they get the HTML id ``claim-<id>``), the tests marked
``@pytest.mark.claim("<id>")``, and the editor's notes marked ``:correction: <id>`` or
``:qualifies: <id>`` (editorial.py). The marked tests run during the build, once per
change of the code and tests (their results are kept in ``_build/.claims-tests``): a
claim whose test fails on this build is 不成立 whatever its check says, and the build
fails.

The build fails (a warning under ``-W``) when a check names a value no cell recorded,
when a recorded value it uses is NaN, when it does not evaluate to true or false, when a
claim has neither a check nor literature, or when a tag, marker or note names no claim.

``:::{claims-ledger}`` renders the table; ``:::{claims-errata}`` lists every claim whose
verdict is not 成立, for the 编者注与勘误 page. tests/test_claims.py tests the evaluator.

The table is written so that it reads at any width (its CSS is the section "The claims
ledger" of book.css; tests/test_ledger_browser.py looks at it). It sits in a
``claims-ledger-wrap`` container, which a wide screen widens into the margin right of the
text (not sphinx-book-theme's ``full-width`` class: the theme's script for that expects a
contents sidebar, which the page has none of, and throws). Each header cell has
``scope="col"`` and each body cell a ``data-label`` with its column's header text, which a
phone shows above the cell when each row becomes a card; the HTML translator in use is
wrapped at ``builder-inited`` to write the two, as images.py does. Every name in code
(``tests/test_x.py::test_y``, a path) gets a ``<wbr>`` after each ``/``, ``::`` and ``_``
and before each ``.``, so that it wraps only there (code quoted as text, after ``(`` and
``,`` too: :func:`break_points`).
"""

import functools
import json
import re
from dataclasses import asdict
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from book._ext.shared.checkout import UNKNOWN, commit_facts
from book._ext.shared.claim_checks import Verdict, claim_sections, evaluate_all, load_claims
from book._ext.shared.claim_tests import MarkedTests, test_backings
from book._ext.shared.env import PageStores
from book._ext.shared.nodes import ancestors, internal_ref
from book._ext.shared.sections import for_app
from book._ext.shared.translators import wrap_html_translators

logger = logging.getLogger(__name__)

TAG_PREFIX = "claim-"
UNDECIDED = "无法判定（构建失败）"
# The ledger's columns: header text, class of the cell, width (per cent of the table).
COLUMNS = (("编号", "claim-number", 6), ("原稿的论断", "claim-claim", 26),
           ("本次构建的数值", "claim-values-cell", 22), ("判定", "claim-verdict-cell", 26),
           ("依据", "claim-backing", 20))
VALUE_MIME = "application/vnd.attnbook.value+json"  # attnbook.pages.glue.VALUE_MIME, prefix stripped


def read_glue_values(path):
    """``{name: value}`` from a myst-nb ``.glue.json``: the raw values ``attnbook.pages.glue``
    stored as JSON (non-finite floats were stored as the strings "nan", "inf", "-inf")."""
    path = Path(path)
    if not path.is_file():
        return {}
    values = {}
    for name, output in json.loads(path.read_text(encoding="utf-8")).items():
        data = output.get("data", {})
        stored = data.get(VALUE_MIME, data.get("application/json"))
        if isinstance(stored, dict) and "value" in stored:
            values[name] = _finite_back(stored["value"])
    return values


def _finite_back(value):
    if isinstance(value, list):
        return [_finite_back(v) for v in value]
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return value


# --- collecting cells, glued values and the pages that show verdicts -------------------


class ledger_slot(nodes.General, nodes.Element):
    """Where a claim's verdict, values or backing go once every page is read."""


class errata_list(nodes.General, nodes.Element):
    """Placeholder for the claims whose verdict is not 成立, filled once every page is read."""


class ClaimsCollector(PageStores):
    """Per page: the cells tagged ``claim-<id>``, the values glued, and whether the page
    shows verdicts. Kept in ``env.claim_cells``, ``env.claim_values``, ``env.claim_pages``.
    Any page read again may change a value or a backing: the ledger is read again too."""

    STORES = ("claim_cells", "claim_values", "claim_pages")
    REREAD = "claim_pages"

    def process_doc(self, app, doctree):
        env = self.stores(app.env)
        docname = env.docname
        cells = []
        for cell in doctree.findall(nodes.container):
            if cell.get("nb_element") != "cell_code":
                continue
            for tag in cell.get("cell_metadata", {}).get("tags", []):
                if tag.startswith(TAG_PREFIX):
                    claim_id, anchor, n = tag[len(TAG_PREFIX):], tag, 1
                    while anchor in {a for _, a in cells}:
                        n += 1
                        anchor = f"{tag}-{n}"
                    cell["ids"].append(anchor)
                    cells.append((claim_id, anchor))
        if cells:
            env.claim_cells[docname] = cells
        glued = getattr(env, "nb_metadata", {}).get(docname, {}).get("glue")
        if glued:
            values = read_glue_values(Path(app.env.mystnb_config.output_folder, f"{docname}.glue.json"))
            if values:
                env.claim_values[docname] = {k: v for k, v in values.items() if k in glued}
        if next(doctree.findall(ledger_slot), None):
            env.claim_pages[docname] = "ledger"
        elif next(doctree.findall(errata_list), None):
            env.claim_pages[docname] = "errata"


def recorded_values(env):
    """``({name: value}, [(error, page)])`` over every page; a name glued on two pages is an error."""
    ClaimsCollector.stores(env)
    values, where, errors = {}, {}, []
    for docname in sorted(env.claim_values):
        for name, value in env.claim_values[docname].items():
            if name in where:
                errors.append((f"the value {name!r} is glued on both {where[name]} and {docname}", docname))
            values[name], where[name] = value, docname
    return values, errors


def _claims_path(app):
    return Path(app.env.srcdir) / app.config.claims_file


def _check_consistency(app, env):
    """Evaluate every claim once all pages are read; a check that cannot decide fails the build."""
    path = _claims_path(app)
    env.claim_verdicts = {}
    if not path.is_file():
        return
    claims = load_claims(path)
    sections = for_app(app).sections
    for message in claim_sections(claims, sections)[1] if sections else ():
        logger.warning(f"claims ledger: {message}", type="claims", location=_claim_location(path, message))
    values, errors = recorded_values(env)
    verdicts, check_errors = evaluate_all(claims, values, _test_outcomes(app))
    # plain dicts: the environment is pickled between builds
    env.claim_verdicts = {k: (None if v is None else asdict(v)) for k, v in verdicts.items()}
    for message, docname in errors:
        logger.warning(f"claims ledger: {message}", type="claims", location=(docname, None))
    for message in check_errors:
        logger.warning(f"claims ledger: {message}", type="claims", location=_claim_location(path, message))
    known = {claim["id"] for claim in claims}
    found = backings(app)
    for claim_id in sorted(set(found) - known):
        logger.warning(f"claims ledger: {claim_id!r} is named by a test, cell tag or editor's note "
                       f"but is not in {app.config.claims_file}", type="claims",
                       location=_backing_location(env, found[claim_id]))


def _claim_location(path, message):
    """``"book/claims.yml:line"`` of the claim a check error names (``claim 'id': …``)."""
    named = re.match(r"claim '([^']+)'", message)
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next((i for i, text in enumerate(lines, 1) if named and text.strip() == f"- id: {named.group(1)}"), 0)
    return f"{path}:{line}" if line else str(path)


def _backing_location(env, backing):
    """Where a claim id that claims.yml lacks is named: the test's file and line, or the page."""
    if backing.get("test"):
        test_file, _, line = backing["test"][0]
        return f"{Path(env.srcdir) / test_file}:{line}"
    docname = (backing.get("cell") or backing.get("note"))[0][0]
    return (docname, None)


_RUNS = {}  # id(app): the MarkedTests started for this build


def _start_tests(app, env, docnames):
    """Once the pages have run (execution.py, priority 500), start the marked tests: they
    run while Sphinx reads the pages, and :func:`_test_outcomes` waits for them."""
    if docnames and app.config.claims_run_tests:
        _marked_tests(app)


def _marked_tests(app):
    """This build's :class:`MarkedTests`, started on the first call."""
    if id(app) not in _RUNS:
        tests_dir = Path(app.env.srcdir) / app.config.claims_tests
        node_ids = {f"{file}::{name}" for found in test_backings(tests_dir).values() for file, name, _ in found}
        _RUNS[id(app)] = MarkedTests(app.env.srcdir, tests_dir, node_ids, Path(app.outdir).parent / ".claims-tests")
        if _RUNS[id(app)].proc is not None:
            logger.info(f"claims ledger: running the {len(node_ids)} tests that back claims", nonl=False)
    return _RUNS[id(app)]


def _stop_tests(app, exception):
    run = _RUNS.pop(id(app), None)
    if run is not None:
        run.stop()


def _test_outcomes(app):
    """``{claim id: [(node id, outcome)]}`` for the marked tests, run on this build."""
    if not app.config.claims_run_tests:
        return {}
    results = _marked_tests(app).results()
    return {claim_id: [(f"{file}::{name}", results[f"{file}::{name}"]) for file, name, _ in found]
            for claim_id, found in test_backings(Path(app.env.srcdir) / app.config.claims_tests).items()}


# --- the ledger -----------------------------------------------------------------------


def numbered(claims, sections):
    """``[(number, claim)]`` in the sections' order, then the order of claims.yml: 1, 2, …
    while the book has one section, 4.5-1, 4.6-1, … once it has several."""
    owners = claim_sections(claims, sections)[0]
    order = [s.number for s in sections]
    rows, counts = [], {}
    for claim in sorted(claims, key=lambda c: order.index(owners[c["id"]]) if c["id"] in owners else len(order)):
        section = owners.get(claim["id"], "")
        counts[section] = counts.get(section, 0) + 1
        rows.append((str(counts[section]) if len(sections) <= 1 else f"{section}-{counts[section]}", claim))
    return rows


class ClaimsLedgerDirective(SphinxDirective):
    def run(self):
        config = self.env.config
        path = Path(self.env.srcdir) / config.claims_file
        self.env.note_dependency(str(path))
        for test_file in sorted((Path(self.env.srcdir) / config.claims_tests).glob("test_*.py")):
            self.env.note_dependency(str(test_file))
        table = nodes.table(classes=["claims-ledger", "colwidths-given"])
        group = nodes.tgroup(cols=len(COLUMNS))
        table += group
        for _, _, width in COLUMNS:
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row([nodes.Text(title) for title, _, _ in COLUMNS], head=True)
        group += head
        body = nodes.tbody()
        for number, claim in numbered(load_claims(path), for_app(self.env.app).sections):
            body += _row([
                nodes.Text(number),
                self._claim_cell(claim),
                ledger_slot(claim_id=claim["id"], part="values"),
                ledger_slot(claim_id=claim["id"], part="verdict"),
                self._backing_cell(claim),
            ], ids=[f"claim-{claim['id']}"])
        group += body
        return [nodes.container("", table, classes=["claims-ledger-wrap"])]  # book.css widens it

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
            cell += self._parse("文献：" + "；".join(f"{{cite:p}}`{key}`" for key in keys))
        elif claim.get("unsourced"):
            cell += self._parse("文献：本书没有找到讨论这句话的文献。")
        return cell

    def _parse(self, text):
        box = nodes.container()
        self.state.nested_parse(StringList([str(text).strip()]), self.content_offset, box)
        return box


class ClaimsErrataDirective(SphinxDirective):
    """The claims whose verdict on this build is not 成立, for the errata page."""

    def run(self):
        self.env.note_dependency(str(Path(self.env.srcdir) / self.env.config.claims_file))
        return [errata_list()]


def _row(cells, ids=(), head=False):
    """A row of the ledger: a header cell gets ``scope="col"``, a body cell its column's
    header text as ``data-label`` (LedgerMarkupMixin writes both), and each its column's class."""
    row = nodes.row(ids=list(ids))
    for content, (title, cls, _) in zip(cells, COLUMNS):
        entry = nodes.entry(classes=[cls])
        entry[LEDGER_ATTRIBUTES["scope" if head else "data-label"]] = "col" if head else title
        entry += content if isinstance(content, nodes.Element) else nodes.paragraph("", "", content)
        row += entry
    return row


# HTML attribute: the name of the entry node's attribute that holds it
LEDGER_ATTRIBUTES = {"scope": "ledger_scope", "data-label": "ledger_label"}


class LedgerMarkupMixin:
    """Writes a ledger cell's ``scope`` or ``data-label`` into its ``<th>`` or ``<td>``:
    docutils writes a cell's classes and ids only."""

    def visit_entry(self, node):
        super().visit_entry(node)
        extra = {html: node[attribute] for html, attribute in LEDGER_ATTRIBUTES.items() if node.get(attribute)}
        if not extra:
            return
        index = next(i for i in range(len(self.body) - 1, -1, -1) if self.body[i].startswith(("<td", "<th")))
        attributes = "".join(f' {name}="{self.attval(value)}"' for name, value in extra.items())
        self.body[index] = re.sub(r"(/?>)(\s*)$", rf"{attributes}\1\2", self.body[index], count=1)


# Where a name in code may wrap: after / and :: and _, before a dot (not at either end).
# In other text, only inside a run of 16 or more characters of ASCII without a space
# (code quoted as text: ``tf.matmul(wq(dec_state),``), and there after ( and , too.
_SEPARATOR = re.compile(r"(?<=/)(?=.)|(?<=::)(?=.)|(?<=[^\W_]_)(?=[^\W_])|(?<=\w)(?=\.\w)")
_SEPARATOR_IN_TEXT = re.compile(_SEPARATOR.pattern + r"|(?<=[(,])(?=.)")
_CODE_IN_TEXT = re.compile(r"[!-~]{16,}")


def break_points(text, code=True):
    """``text`` cut where a line may break: ``tests/test_x.py`` -> ``["tests/", "test_", "x", ".py"]``;
    with ``code=False`` only its long runs of ASCII are cut."""
    if code:
        return [piece for piece in _SEPARATOR.split(text) if piece]
    pieces, end = [""], 0
    for run in _CODE_IN_TEXT.finditer(text):
        cut = [piece for piece in _SEPARATOR_IN_TEXT.split(run.group(0)) if piece]
        pieces[-1] += text[end:run.start()] + cut[0]
        pieces += cut[1:]
        end = run.end()
    pieces[-1] += text[end:]
    return [piece for piece in pieces if piece]


def _add_break_points(table):
    """Every text of ``table`` again, with a ``<wbr>`` at each :func:`break_points` cut
    (formulas and raw HTML left alone)."""
    for text in list(table.findall(nodes.Text)):
        parent, code = text.parent, False
        for ancestor in ancestors(text):
            if isinstance(ancestor, (nodes.raw, nodes.math, nodes.FixedTextElement)):
                break
            code = code or isinstance(ancestor, nodes.literal)
        else:
            pieces = break_points(str(text), code)
            if len(pieces) < 2:
                continue
            out = [nodes.Text(pieces[0])]
            for piece in pieces[1:]:
                out += [nodes.raw("", "<wbr>", format="html"), nodes.Text(piece)]
            index = parent.index(text)
            parent[index:index + 1] = out


def backings(app):
    """``{claim id: {"test": [...], "cell": [...], "note": [...]}}``: what is linked beside
    each verdict (none of it decides the verdict)."""
    env = ClaimsCollector.stores(app.env)
    found = {}
    for claim_id, tests in test_backings(Path(env.srcdir) / app.config.claims_tests).items():
        found.setdefault(claim_id, {})["test"] = tests
    for docname, cells in env.claim_cells.items():
        for claim_id, anchor in cells:
            found.setdefault(claim_id, {}).setdefault("cell", []).append((docname, anchor))
    for docname, notes in getattr(env, "editorial_notes", {}).items():
        for note in notes:
            for claim_id in re.split(r"[\s,]+", note.get("claim", "").strip()):
                if claim_id:
                    found.setdefault(claim_id, {}).setdefault("note", []).append((docname, note))
    return found


def _verdicts(app):
    if not hasattr(app.env, "claim_verdicts"):
        _check_consistency(app, app.env)
    return {k: (None if v is None else Verdict(**v)) for k, v in app.env.claim_verdicts.items()}


def _fill(app, doctree, fromdocname):
    slots = list(doctree.findall(ledger_slot))
    lists = list(doctree.findall(errata_list))
    if not slots and not lists:
        return
    verdicts, found = _verdicts(app), backings(app)
    for slot in slots:
        verdict = verdicts.get(slot["claim_id"])
        backing = found.get(slot["claim_id"], {})
        if slot["part"] == "values":
            text = verdict.values if verdict and verdict.values else "—"
            if text == "—" and isinstance(slot.parent, nodes.entry):
                slot.parent["classes"].append("claim-no-values")  # a phone leaves the cell out
            slot.replace_self(_values_box(text, verdict.files if verdict else []))
        elif slot["part"] == "verdict":
            slot.replace_self(_verdict_box(verdict))
        else:
            slot.replace_self(_links(app, fromdocname, backing, verdict.tests if verdict else ""))
    for placeholder in lists:
        placeholder.replace_self(_errata(app, fromdocname, verdicts, found))
    for table in doctree.findall(nodes.table):
        if "claims-ledger" in table["classes"]:
            _add_break_points(table)


def _values_box(text, files):
    """This build's values; under them, apart and each after its provenance, every results file's."""
    if not files:
        return nodes.paragraph("", text, classes=["claim-values"])
    box = nodes.container(classes=["claim-values-sources"])
    box += nodes.paragraph("", "", nodes.strong("", "本次构建："), nodes.Text(text), classes=["claim-values"])
    for line in files:
        box += nodes.paragraph("", line, classes=["claim-values", "claim-file-values"])
    return box


def _verdict_box(verdict):
    box = nodes.container(classes=["claim-verdict"])
    if verdict is None:
        box += nodes.paragraph("", UNDECIDED, classes=["claim-status", "claim-undecided"])
        return box
    box += nodes.paragraph("", verdict.label, classes=["claim-status", f"claim-{verdict.kind}"])
    if verdict.reason:
        box += nodes.paragraph("", verdict.reason, classes=["claim-reason"])
    return box


def _errata(app, fromdocname, verdicts, found):
    """A bullet list: each claim not borne out (or not measurable) with its verdict, its
    reason, a link to its ledger row and to the editor's notes on it."""
    listing = nodes.bullet_list(classes=["claims-errata"])
    target = _ledger_doc(app.env)
    for claim in load_claims(_claims_path(app)):
        verdict = verdicts.get(claim["id"])
        if verdict is not None and verdict.kind == "holds":
            continue
        item = nodes.paragraph()
        if target:
            item += internal_ref(app, fromdocname, target, f"claim-{claim['id']}", f"“{claim['quote']}”")
        else:
            item += nodes.Text(f"“{claim['quote']}”")
        item += nodes.Text(f"：{verdict.label if verdict else UNDECIDED}。")
        if verdict and verdict.reason:
            item += nodes.Text(verdict.reason)
        notes = found.get(claim["id"], {}).get("note", [])
        if notes:
            item += nodes.Text("（编者注：")
            for i, (docname, note) in enumerate(notes):
                if i:
                    item += nodes.Text("；")
                item += internal_ref(app, fromdocname, docname, note["id"], note["title"])
            item += nodes.Text("）")
        listing += nodes.list_item("", item)
    return listing if len(listing) else nodes.paragraph(text="（本次构建里每一句论断都成立。）")


def _ledger_doc(env):
    """The page that holds the ledger table, or None."""
    return next((doc for doc, kind in sorted(env.claim_pages.items()) if kind == "ledger"), None)


def _links(app, fromdocname, backing, verdict_tests=""):
    box = nodes.inline()
    items = []
    for docname, note in backing.get("note", []):
        kind = {"correction": "更正", "qualifies": "限定", "checks": "核对"}[note.get("kind") or "qualifies"]
        items.append(internal_ref(app, fromdocname, docname, note["id"], f"编者注（{kind}）：{note['title']}"))
    for docname, anchor in backing.get("cell", []):
        items.append(internal_ref(app, fromdocname, docname, anchor, f"{_page_name(app, docname)}中的单元格"))
    repo = app.config.html_theme_options.get("repository_url", "").rstrip("/")
    revision = _source_revision(app.srcdir)
    tests = backing.get("test", [])
    if tests:
        outcome = {"passed": "通过", "failed": "未通过"}.get(verdict_tests, "未运行")
        items.append(nodes.Text(f"测试（{outcome}）："))
    for file, name, line in tests:
        label = nodes.literal(text=f"{file}::{name}")
        items.append(nodes.reference("", "", label, refuri=f"{repo}/blob/{revision}/{file}#L{line}") if repo else label)
    for i, item in enumerate(items):
        if i and not (isinstance(items[i - 1], nodes.Text) and str(items[i - 1]).endswith("：")):
            box += nodes.Text("；")
        box += item
    return box


@functools.cache
def _source_revision(srcdir):
    """The commit the book is built from, so a test's line link shows the code that ran;
    ``main`` when the checkout has uncommitted changes or no git."""
    commit, _ = commit_facts(Path(srcdir))
    return "main" if commit == UNKNOWN or commit.endswith("-dirty") else commit


def _page_name(app, docname):
    """正文 for a section page (第 4.6 节正文 once the book has several), else the title
    without its section number: 《成本账，实测》."""
    book = for_app(app)
    section = book.of(docname)
    if section and docname == section.page:
        return "正文" if len(book.sections) == 1 else f"第 {section.number} 节正文"
    return "《" + re.sub(r"^\d+(\.\d+)+\s*(的延伸：)?", "", app.env.titles[docname].astext()) + "》"


def setup(app):
    app.add_config_value("claims_file", "book/claims.yml", "env", types=[str])
    app.add_config_value("claims_tests", "tests", "env", types=[str])
    app.add_config_value("claims_run_tests", True, "env", types=[bool])
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.add_directive("claims-errata", ClaimsErrataDirective)
    app.add_node(ledger_slot)
    app.add_node(errata_list)
    app.add_env_collector(ClaimsCollector)
    app.connect("env-before-read-docs", _start_tests, priority=600)
    app.connect("env-check-consistency", _check_consistency)
    app.connect("build-finished", _stop_tests)
    app.connect("doctree-resolved", _fill)
    # After pydata-sphinx-theme's wrapper (500) and images.py's (600).
    app.connect("builder-inited", wrap_html_translators(LedgerMarkupMixin, "Ledger"), priority=650)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
