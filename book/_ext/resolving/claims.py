"""The claims ledger (论断核对表): every verdict is computed from the values this build recorded.

``book/claims.yml`` lists the manuscript's checkable claims, each quoted word for word,
and states for each how it is decided (the check language is documented at the top of
that file and implemented below):

* ``check:`` a predicate on named values that cells of this build recorded with
  ``attnbook.glue`` (myst-nb's glue data). The ledger evaluates it at build time and
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

import ast
import functools
import json
import math
import re
import string
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from book._ext.shared.checkout import UNKNOWN, commit_facts, files_digest
from book._ext.shared.env import stores as env_stores
from book._ext.shared.translators import wrap_html_translators

logger = logging.getLogger(__name__)

TAG_PREFIX = "claim-"
VERDICTS = {"holds": "成立（本次构建实测）", "partly": "部分成立",
            "fails": "不成立（本次构建实测）", "literature": "无法在本书中验证"}
#: The labels of a check that ``construction:`` marks: the code and a definition decide
#: it, the same on every build of this code (a shape, a count, an identity).
BY_CONSTRUCTION = {"holds": "成立（由代码决定）", "fails": "不成立（由代码决定）"}
UNDECIDED = "无法判定（构建失败）"
# The ledger's columns: header text, class of the cell, width (per cent of the table).
COLUMNS = (("编号", "claim-number", 6), ("原稿的论断", "claim-claim", 26),
           ("本次构建的数值", "claim-values-cell", 22), ("判定", "claim-verdict-cell", 26),
           ("依据", "claim-backing", 20))
VALUE_MIME = "application/vnd.attnbook.value+json"  # attnbook.glue.VALUE_MIME, prefix stripped
FILE_PREFIX = "bench_"  # a value glued with one item per results file of book/data/bench/


def load_claims(path):
    """The claims of ``claims.yml``: a list of dicts with ``id``, ``quote`` and either
    ``check`` or ``unverifiable`` (bibtex keys) with ``reason``; optional ``note``."""
    claims = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    ids = [claim["id"] for claim in claims]
    if len(ids) != len(set(ids)):
        raise ValueError(f"claims.yml repeats an id: {sorted(i for i in ids if ids.count(i) > 1)}")
    return claims


# --- the check language ---------------------------------------------------------------


class CheckError(ValueError):
    """A check that cannot decide: it names an unknown value, meets a NaN, or is malformed."""


def near(a, b, tol):
    """``|a - b| <= tol``: the one way a check compares floats for equality."""
    return abs(a - b) <= tol


FUNCTIONS = {"all": all, "any": any, "len": len, "abs": abs, "min": min, "max": max,
             "sum": sum, "zip": zip, "sorted": sorted, "round": round, "sqrt": math.sqrt, "log": math.log,
             "near": near}
_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
    ast.IfExp, ast.Call, ast.Name, ast.Load, ast.Store, ast.Constant, ast.List, ast.Tuple,
    ast.Subscript, ast.Slice, ast.ListComp, ast.GeneratorExp, ast.comprehension,
)


def parse_expression(text):
    """``(code, names)`` for a check expression: restricted Python, no attributes, no
    keywords, no lambdas, calls only to :data:`FUNCTIONS`. ``names`` are the values it
    reads (comprehension variables and functions left out). Raises :class:`CheckError`."""
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError as error:
        raise CheckError(f"not an expression: {text!r} ({error.msg})") from None
    bound = set()
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise CheckError(f"{type(node).__name__} is not allowed in a check: {text!r}")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            raise CheckError(f"a check may only call {sorted(FUNCTIONS)} (no keywords): {text!r}")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise CheckError(f"names starting with _ are not allowed: {text!r}")
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    names = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                and node.id not in bound and node.id not in FUNCTIONS and node.id not in names):
            names.append(node.id)
    return compile(tree, "<check>", "eval"), names


def template_names(template):
    """The value names a reason or values template inserts (``{name}`` or ``{name:.2f}``)."""
    names = []
    for _, field_name, spec, conversion in string.Formatter().parse(str(template)):
        if field_name is None:
            continue
        if not field_name.isidentifier() or conversion or "{" in (spec or ""):
            raise CheckError(f"a template field must be {{name}} or {{name:format}}: {template!r}")
        if field_name not in names:
            names.append(field_name)
    return names


def format_value(value, spec=""):
    """A value as the ledger prints it: lists joined with 、, booleans as 是/否, and the
    format ``shape`` for a list of integers written as a shape ``(2, 8, 8)``."""
    if spec == "shape" and isinstance(value, list) and all(isinstance(v, int) for v in value):
        return "(" + ", ".join(map(str, value)) + ")"
    if isinstance(value, (list, tuple)):
        return "、".join(format_value(v, spec) for v in value) or "无"
    if isinstance(value, bool):
        return "是" if value else "否"
    if spec == "shape":
        spec = ""
    return format(value, spec)


def fill(template, values):
    """``template`` with each ``{name:spec}`` replaced by ``format_value``."""
    out = []
    for literal, field_name, spec, _ in string.Formatter().parse(str(template)):
        out.append(literal)
        if field_name is not None:
            out.append(format_value(values[field_name], spec or ""))
    return "".join(out)


def _has_nan(value):
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    return False


@dataclass
class Verdict:
    """A claim's verdict on this build: ``kind`` is a key of :data:`VERDICTS`."""

    kind: str
    reason: str
    values: str = ""
    names: list = field(default_factory=list)
    tests: str = ""  # "passed" or "failed" when marked tests back the claim, else ""
    basis: str = "measured"  # or "construction": the code decides it, the same on every build
    files: list = field(default_factory=list)  # one line per results file of other hardware

    @property
    def label(self):
        if self.basis == "construction" and self.kind in BY_CONSTRUCTION:
            return BY_CONSTRUCTION[self.kind]
        return VERDICTS[self.kind]


def evaluate(claim, recorded):
    """The :class:`Verdict` of one claim, given ``recorded`` (``{name: value}``, every
    value glued on this build). Raises :class:`CheckError` when the check cannot decide.

    ``check`` has ``holds`` (an expression), optional ``partly`` (tried when ``holds`` is
    false), optional ``let`` (named expressions, in order, that later ones may use),
    ``values`` (a template of the deciding values), ``reason`` (a template for each of
    ``holds``, ``partly`` and ``fails``), and optional ``unmeasured`` (the part of the
    claim no code of this book measures) and ``qualified`` (a part the editor limits
    by definition, not by a measurement). A claim with either is at most 部分成立, and
    its reason ends by naming that part.

    Optional ``files`` reads the results files of other hardware (values glued as
    ``bench_<name>``, one item per file; :func:`file_scopes`): each file gets a line of
    values, and the first whose ``decides`` is true is the one the claim is judged on
    (``judged``, a list of booleans, tells ``let`` which); then ``files.unmeasured`` takes
    the place of ``unmeasured``, since the file measured that part (see :func:`_files`).
    """
    if "check" not in claim:
        if claim.get("unverifiable") or claim.get("unsourced"):
            return Verdict("literature", str(claim.get("reason", "")).strip())
        raise CheckError(f"claim {claim['id']!r} has neither a check nor literature (unverifiable)")
    check = claim["check"]
    if "holds" not in check or "reason" not in check:
        raise CheckError(f"claim {claim['id']!r}: a check needs holds: and reason:")
    kinds = ["holds", "partly", "fails"] if "partly" in check else ["holds", "fails"]
    missing = [kind for kind in kinds if kind not in check["reason"]]
    if missing:
        raise CheckError(f"claim {claim['id']!r}: reason: has no template for {missing}")
    scope = {}

    def read(names, what):
        for name in names:
            if name in scope:
                continue
            if name not in recorded:
                raise CheckError(f"claim {claim['id']!r}: {what} names {name!r}, a value no cell recorded")
            if _has_nan(recorded[name]):
                raise CheckError(f"claim {claim['id']!r}: the recorded value {name!r} is NaN, "
                                 f"so the check cannot decide")
            scope[name] = recorded[name]

    def run(expression, what):
        code, names = parse_expression(expression)
        read(names, what)
        try:
            result = eval(code, {"__builtins__": {}, **FUNCTIONS, **scope})  # noqa: S307 (checked above)
        except Exception as error:  # a check that raises cannot decide
            raise CheckError(f"claim {claim['id']!r}: {what} {expression!r} raised "
                             f"{type(error).__name__}: {error}") from None
        if _has_nan(result):
            raise CheckError(f"claim {claim['id']!r}: {what} {expression!r} is NaN")
        return result

    files = _files(claim, recorded) if "files" in check else []
    scope["judged"] = [file["judged"] for file in files]
    for name, expression in (check.get("let") or {}).items():
        if not str(name).isidentifier() or name in FUNCTIONS or name == "judged":
            raise CheckError(f"claim {claim['id']!r}: let: cannot name {name!r}")
        scope[name] = run(expression, f"let {name}")
    kind = "fails"
    for candidate in kinds[:-1]:
        result = run(check[candidate], candidate)
        if not isinstance(result, bool):
            raise CheckError(f"claim {claim['id']!r}: {candidate} {check[candidate]!r} gave "
                             f"{result!r}, not true or false")
        if result:
            kind = candidate
            break
    shown = check.get("values", "")
    read(template_names(shown), "values")
    reason = check["reason"][kind]
    read(template_names(reason), f"reason.{kind}")
    names = [n for n in scope if n in recorded]
    reason = fill(reason, scope).strip() + "".join(file["reason"] for file in sorted(files, key=lambda f: not f["judged"]))
    for key, heading in (("unmeasured", "本书没有测的部分"), ("qualified", "编者限定的部分")):
        part = str(check.get(key, "")).strip()
        if key == "unmeasured" and any(scope["judged"]):  # judged on a results file of that hardware:
            part = str(check["files"].get("unmeasured", "")).strip()  # what even the file leaves out
        if part:  # a half the book cannot measure, or corrects by definition, caps the verdict
            kind = "partly" if kind == "holds" else kind
            reason = f"{reason}{heading}：{part}"
    construction = str(check.get("construction", "")).strip()
    if construction:
        reason = f"{reason}由代码决定：{construction}"
    return Verdict(kind, reason, fill(shown, scope).strip(), names, files=[file["values"] for file in files],
                   basis="construction" if construction else "measured")


def file_scopes(recorded, claim_id="?"):
    """One ``{name: value}`` per results file: the item of every recorded ``bench_<name>``
    for that file, under ``<name>``. The cost page glues each such value as a list with
    one item per file of ``book/data/bench/``, in the order of ``bench_file``."""
    if FILE_PREFIX + "file" not in recorded:
        raise CheckError(f"claim {claim_id!r}: files: reads results files, but no cell recorded "
                         f"{FILE_PREFIX}file")
    count = len(recorded[FILE_PREFIX + "file"])
    per_file = {name[len(FILE_PREFIX):]: value for name, value in recorded.items() if name.startswith(FILE_PREFIX)}
    uneven = sorted(FILE_PREFIX + name for name, value in per_file.items()
                    if not isinstance(value, list) or len(value) != count)
    if uneven:
        raise CheckError(f"claim {claim_id!r}: {uneven} do not hold one item per results file ({count})")
    return [{name: value[i] for name, value in per_file.items()} for i in range(count)]


def _files(claim, recorded):
    """``[{"judged", "values", "reason"}]``, one per results file, for ``check: files:``.

    ``decides`` (an expression on the file's values) says whether the file may decide
    the claim; the first file that may (in the order of ``bench_file``) is the one the
    claim is judged on, and its sentence is ``judged``; every other file gets
    ``not_judged`` (or, when it may decide too, a sentence naming the file judged on).
    The sentences follow the reason; ``values`` is the file's line under this build's values."""
    spec = claim["check"]["files"]
    missing = [key for key in ("values", "decides", "judged", "not_judged") if key not in spec]
    if missing:
        raise CheckError(f"claim {claim['id']!r}: files: has no {missing}")
    code, names = parse_expression(spec["decides"])
    read = names + [n for key in ("values", "judged", "not_judged") for n in template_names(spec[key])]
    out, first = [], None
    for scope in file_scopes(recorded, claim["id"]):
        unknown = sorted({n for n in read if n not in scope})
        if unknown:
            raise CheckError(f"claim {claim['id']!r}: files: names {unknown}, which no cell recorded as "
                             f"{FILE_PREFIX}<name>")
        if any(_has_nan(scope[n]) for n in read):
            raise CheckError(f"claim {claim['id']!r}: a value of results file {scope.get('file')!r} is NaN")
        try:
            decides = eval(code, {"__builtins__": {}, **FUNCTIONS, **scope})  # noqa: S307 (checked above)
        except Exception as error:  # a check that raises cannot decide
            raise CheckError(f"claim {claim['id']!r}: files.decides raised {type(error).__name__}: {error}") from None
        if not isinstance(decides, bool):
            raise CheckError(f"claim {claim['id']!r}: files.decides gave {decides!r}, not true or false")
        judged = decides and first is None
        first = scope.get("file") if judged else first
        if judged:
            reason = fill(spec["judged"], scope)
        elif decides:
            reason = f"结果文件 {scope.get('file')} 也可以判定本行，本行按排在前面的 {first} 判定。"
        else:
            reason = fill(spec["not_judged"], scope)
        out.append({"judged": judged, "values": fill(spec["values"], scope).strip(), "reason": reason.strip()})
    return out


def evaluate_all(claims, recorded, tests=None):
    """``({claim id: Verdict or None}, [error messages])`` for every claim.

    ``tests`` maps a claim id to ``[(test, outcome)]`` of the marked tests run on this
    build: a failed (or missing) test makes the claim 不成立 and is an error."""
    verdicts, errors = {}, []
    for claim in claims:
        try:
            verdict = evaluate(claim, recorded)
        except CheckError as error:
            verdicts[claim["id"]] = None
            errors.append(str(error))
            continue
        outcomes = (tests or {}).get(claim["id"], [])
        failed = [test for test, outcome in outcomes if outcome != "passed"]
        if failed:
            errors.append(f"claim {claim['id']!r}: the test {failed[0]} did not pass on this build")
            verdict = Verdict("fails", f"测试 {'、'.join(failed)} 在本次构建中没有通过。", verdict.values,
                              verdict.names, "failed")
        elif outcomes:
            verdict.tests = "passed"
        verdicts[claim["id"]] = verdict
    return verdicts, errors


# --- the marked tests, run once per change of what they test -----------------------------

TEST_INPUTS = ("code", "requirements.txt")  # besides the tests folder
KEEP_RESULTS = 3


def tests_key(root, tests_dir, node_ids):
    """A short hash of the test ids, the tests, the package and the Python version."""
    return files_digest(root, [*TEST_INPUTS, Path(tests_dir)], salt=f"{sys.version}|{sorted(node_ids)}")


def parse_junit(text):
    """``{"tests/test_x.py::test_name": outcome}`` from a pytest JUnit XML report; a test
    run with several parameters takes its worst outcome (failed, skipped, passed)."""
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    found = {}
    for case in ElementTree.fromstring(text).iter("testcase"):
        module = next((part for part in case.get("classname", "").split(".") if part.startswith("test_")), None)
        if module is None:
            continue
        test = f"tests/{module}.py::{case.get('name', '').split('[')[0]}"
        outcome = "passed"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        if rank[outcome] >= rank[found.get(test, "passed")]:
            found[test] = outcome
    return found


def run_marked_tests(root, tests_dir, node_ids, results_dir):
    """``{node id: outcome}`` for ``node_ids`` ("tests/test_x.py::test_y"), run with pytest
    in a subprocess, or read from ``results_dir`` when nothing they depend on changed. A
    test that did not run at all (a collection error) counts as failed."""
    if not node_ids:
        return {}
    results_dir = Path(results_dir)
    cached = results_dir / f"{tests_key(root, tests_dir, node_ids)}.json"
    if cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        done = subprocess.run([sys.executable, "-m", "pytest", *sorted(node_ids), "-q", "-p", "no:cacheprovider",
                               "-p", "no:xdist", f"--junitxml={report}"],
                              cwd=root, capture_output=True, text=True, timeout=1800)
        if not report.is_file():  # pytest did not start: say why, every test counts as failed
            logger.warning("claims ledger: the tests that back claims did not run:\n"
                           + (done.stderr or done.stdout)[-2000:], type="claims")
        found = parse_junit(report.read_text(encoding="utf-8")) if report.is_file() else {}
    results = {node: found.get(node, "failed") for node in node_ids}
    results_dir.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(results, indent=1), encoding="utf-8")
    for old in sorted(results_dir.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP_RESULTS:]:
        old.unlink(missing_ok=True)
    return results


# --- what backs a claim besides its check ----------------------------------------------


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


def read_glue_values(path):
    """``{name: value}`` from a myst-nb ``.glue.json``: the raw values ``attnbook.glue``
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


def _glue_file(app, docname):
    folder = Path(app.env.mystnb_config.output_folder) if hasattr(app.env, "mystnb_config") else None
    if folder is None:
        return None
    *parents, last = docname.split("/")
    return folder.joinpath(*parents, f"{last}.glue.json")


class ClaimsCollector(EnvironmentCollector):
    """Per page: the cells tagged ``claim-<id>``, the values glued, and whether the page
    shows verdicts. Kept in ``env.claim_cells``, ``env.claim_values``, ``env.claim_pages``."""

    STORES = ("claim_cells", "claim_values", "claim_pages")

    @staticmethod
    def stores(env):
        return env_stores(env, ClaimsCollector.STORES)

    def clear_doc(self, app, env, docname):
        self.stores(env)
        for store in self.STORES:
            getattr(env, store).pop(docname, None)

    def merge_other(self, app, env, docnames, other):
        self.stores(env)
        self.stores(other)
        for store in self.STORES:
            for docname in docnames:
                if docname in getattr(other, store):
                    getattr(env, store)[docname] = getattr(other, store)[docname]

    def process_doc(self, app, doctree):
        env = self.stores(app.env)
        docname = env.docname
        cells = []
        for cell in doctree.findall(nodes.container):
            if cell.get("nb_element") != "cell_code":
                continue
            for tag in cell.get("cell_metadata", {}).get("tags", []):
                if tag.startswith(TAG_PREFIX):
                    claim_id = tag[len(TAG_PREFIX):]
                    anchor = _unique_anchor(cells, f"{TAG_PREFIX}{claim_id}")
                    cell["ids"].append(anchor)
                    cells.append((claim_id, anchor))
        if cells:
            env.claim_cells[docname] = cells
        glued = getattr(env, "nb_metadata", {}).get(docname, {}).get("glue")
        if glued:
            values = read_glue_values(_glue_file(app, docname))
            if values:
                env.claim_values[docname] = {k: v for k, v in values.items() if k in glued}
        if next(doctree.findall(ledger_slot), None):
            env.claim_pages[docname] = "ledger"
        elif next(doctree.findall(errata_list), None):
            env.claim_pages[docname] = "errata"

    def get_outdated_docs(self, app, env, added, changed, removed):
        """Any page read again may change a value or a backing: the ledger is read again too."""
        self.stores(env)
        return sorted(env.claim_pages) if (added or changed or removed) else []


def _unique_anchor(taken, anchor):
    used = {a for _, a in taken}
    n, candidate = 1, anchor
    while candidate in used:
        n += 1
        candidate = f"{anchor}-{n}"
    return candidate


def recorded_values(env):
    """``({name: value}, [error])`` over every page; a name glued on two pages is an error."""
    ClaimsCollector.stores(env)
    values, where, errors = {}, {}, []
    for docname in sorted(env.claim_values):
        for name, value in env.claim_values[docname].items():
            if name in where:
                errors.append(f"the value {name!r} is glued on both {where[name]} and {docname}")
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
    values, errors = recorded_values(env)
    verdicts, check_errors = evaluate_all(claims, values, _test_outcomes(app))
    # plain dicts: the environment is pickled between builds
    env.claim_verdicts = {k: (None if v is None else asdict(v)) for k, v in verdicts.items()}
    for message in errors + check_errors:
        logger.warning(f"claims ledger: {message}", type="claims")
    known = {claim["id"] for claim in claims}
    for claim_id in sorted(set(backings(app)) - known):
        logger.warning(f"claims ledger: {claim_id!r} is named by a test, cell tag or editor's note "
                       f"but is not in {app.config.claims_file}", type="claims")


def _test_outcomes(app):
    """``{claim id: [(node id, outcome)]}`` for the marked tests, run on this build."""
    if not app.config.claims_run_tests:
        return {}
    tests_dir = Path(app.env.srcdir) / app.config.claims_tests
    marked = {claim_id: [f"{file}::{name}" for file, name, _ in found]
              for claim_id, found in test_backings(tests_dir).items()}
    node_ids = sorted({node for nodes_ in marked.values() for node in nodes_})
    if not node_ids:
        return {}
    logger.info(f"claims ledger: running the {len(node_ids)} tests that back claims", nonl=False)
    results = run_marked_tests(app.env.srcdir, tests_dir, node_ids, Path(app.outdir).parent / ".claims-tests")
    return {claim_id: [(node, results[node]) for node in nodes_] for claim_id, nodes_ in marked.items()}


# --- the ledger -----------------------------------------------------------------------


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
        for number, claim in enumerate(load_claims(path), start=1):
            body += _row([
                nodes.Text(str(number)),
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
        if text:
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


def _wrap_translators(app):
    wrap_html_translators(app, LedgerMarkupMixin, "Ledger")


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
        for ancestor in _ancestors(text):
            if isinstance(ancestor, (nodes.raw, nodes.math, nodes.FixedTextElement)):
                break
            code = code or isinstance(ancestor, nodes.literal)
        else:
            pieces = break_points(str(text), code)
            if len(pieces) < 2:
                continue
            out = []
            for i, piece in enumerate(pieces):
                if i:
                    out.append(nodes.raw("", "<wbr>", format="html"))
                out.append(nodes.Text(piece))
            index = parent.index(text)
            parent[index:index + 1] = out


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


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
    build = nodes.paragraph("", "", classes=["claim-values"])
    build += nodes.strong("", "本次构建：")
    build += nodes.Text(text)
    box += build
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
            item += _ref(app, fromdocname, target, f"claim-{claim['id']}", f"“{claim['quote']}”")
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
                item += _ref(app, fromdocname, docname, note["id"], note["title"])
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
        items.append(_ref(app, fromdocname, docname, note["id"], f"编者注（{kind}）：{note['title']}"))
    for docname, anchor in backing.get("cell", []):
        items.append(_ref(app, fromdocname, docname, anchor, f"{_page_name(app.env, docname)}中的单元格"))
    repo = app.config.html_theme_options.get("repository_url", "").rstrip("/")
    revision = _source_revision(app.srcdir)
    tests = backing.get("test", [])
    if tests:
        outcome = {"passed": "通过", "failed": "未通过"}.get(verdict_tests, "未运行")
        items.append(nodes.Text(f"测试（{outcome}）："))
    for file, name, line in tests:
        label = nodes.literal(text=f"{file}::{name}")
        if repo:
            ref = nodes.reference("", "", refuri=f"{repo}/blob/{revision}/{file}#L{line}")
            ref += label
            label = ref
        items.append(label)
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


def _page_name(env, docname):
    """正文 for the author's page, else the title without its number: 《成本账，实测》."""
    if getattr(env, "editorial_docs", {}).get(docname) == "blocks":
        return "正文"
    from attnbook.exercises.catalog import SECTION  # the one place the section number is written

    return "《" + re.sub(rf"^{re.escape(SECTION)}\s*(的延伸：)?", "", env.titles[docname].astext()) + "》"


def _ref(app, fromdocname, docname, anchor, text):
    ref = nodes.reference("", "", internal=True,
                          refuri=app.builder.get_relative_uri(fromdocname, docname) + "#" + anchor)
    ref += nodes.Text(text)
    return ref


def setup(app):
    app.add_config_value("claims_file", "book/claims.yml", "env", types=[str])
    app.add_config_value("claims_tests", "tests", "env", types=[str])
    app.add_config_value("claims_run_tests", True, "env", types=[bool])
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.add_directive("claims-errata", ClaimsErrataDirective)
    app.add_node(ledger_slot)
    app.add_node(errata_list)
    app.add_env_collector(ClaimsCollector)
    app.connect("env-check-consistency", _check_consistency)
    app.connect("doctree-resolved", _fill)
    app.connect("builder-inited", _wrap_translators, priority=650)  # after pydata's and images.py's
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
