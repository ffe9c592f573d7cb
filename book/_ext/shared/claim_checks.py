"""The ledger's check language: a claim of ``book/claims.yml``, evaluated on the values a build recorded.

A check is restricted Python over recorded values (``parse_expression``: no attributes,
no keywords, calls only to :data:`FUNCTIONS`); templates insert values with
``{name:format}`` (``fill``). :func:`evaluate` gives a claim's :class:`Verdict`, or
raises :class:`CheckError` when the check cannot decide. The language is documented at
the top of ``book/claims.yml``; ``book._ext.resolving.claims`` renders the verdicts.
"""

import ast
import math
import string
from dataclasses import dataclass, field
from pathlib import Path

import yaml

VERDICTS = {"holds": "成立（本次构建实测）", "partly": "部分成立",
            "fails": "不成立（本次构建实测）", "literature": "无法在本书中验证"}
#: The labels of a check that ``construction:`` marks: the code and a definition decide
#: it, the same on every build of this code (a shape, a count, an identity).
BY_CONSTRUCTION = {"holds": "成立（由代码决定）", "fails": "不成立（由代码决定）"}
FILE_PREFIX = "bench_"  # a value glued with one item per results file of book/data/bench/


def load_claims(path):
    """The claims of ``claims.yml``: a list of dicts with ``id``, ``quote`` and either
    ``check`` or ``unverifiable`` (bibtex keys) with ``reason``; optional ``note``."""
    claims = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    ids = [claim["id"] for claim in claims]
    if len(ids) != len(set(ids)):
        raise ValueError(f"claims.yml repeats an id: {sorted(i for i in ids if ids.count(i) > 1)}")
    return claims


def claim_sections(claims, sections):
    """``({claim id: section number}, [errors])``: each claim belongs to the section whose
    manuscript holds its quote word for word (``section:`` names it where several do). A
    claim that no section's manuscript quotes, or that names a section which does not, is an
    error that names the claim."""
    found, errors = {}, []
    for claim in claims:
        holders = [s.number for s in sections if claim["quote"] in s.text.source]
        named = str(claim["section"]) if "section" in claim else None
        if named is not None and named not in holders:
            errors.append(f"claim {claim['id']!r}: section {named}'s manuscript does not have its quote "
                          f"「{claim['quote']}」")
        elif named is None and len(holders) != 1:
            errors.append(f"claim {claim['id']!r}: its quote 「{claim['quote']}」 is in "
                          + (f"the manuscripts of {', '.join(holders)}: say which with section:" if holders
                             else "no section's manuscript: the author revised it, so quote the new words"))
        else:
            found[claim["id"]] = named or holders[0]
    return found, errors


# --- the check language ---------------------------------------------------------------


class CheckError(ValueError):
    """A check that cannot decide: it names an unknown value, meets a NaN, or is malformed."""


def near(a, b, tol):
    """``|a - b| <= tol``: the one way a check compares floats for equality."""
    return abs(a - b) <= tol


FUNCTIONS = {"all": all, "any": any, "len": len, "abs": abs, "min": min, "max": max,
             "sum": sum, "zip": zip, "sorted": sorted, "round": round, "sqrt": math.sqrt, "log": math.log,
             "near": near, "join": lambda sep, items: sep.join(map(str, items))}
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
    if isinstance(value, float) and spec.startswith("."):
        spec = "z" + spec  # -0.004 prints as 0.00, not -0.00
    return format(value, "" if spec == "shape" else spec)


def fill(template, values):
    """``template`` with each ``{name:spec}`` replaced by ``format_value``."""
    return "".join(literal + ("" if field_name is None else format_value(values[field_name], spec or ""))
                   for literal, field_name, spec, _ in string.Formatter().parse(str(template)))


def _eval(code, scope, claim_id, what):
    """The value of the compiled check ``code`` over ``scope``; a check that raises cannot decide."""
    try:
        return eval(code, {"__builtins__": {}, **FUNCTIONS, **scope})  # noqa: S307 (checked by parse_expression)
    except Exception as error:  # noqa: BLE001
        raise CheckError(f"claim {claim_id!r}: {what} raised {type(error).__name__}: {error}") from None


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
        result = _eval(code, scope, claim["id"], f"{what} {expression!r}")
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
    if claim.get("guard"):
        barred = "或".join(f"“{VERDICTS[k]}”" for k in ("holds", "partly", "fails") if k not in guard_kinds(claim))
        reason = f"{reason}构建守着这一行：页面上有说同一件事的句子，本行判为{barred}时构建失败，这一版网站不会发布。"
    required = str((check.get("files") or {}).get("required", "")).strip()
    if required and not any(scope["judged"]):  # only a file of that hardware can decide this claim
        read(template_names(required), "files.required")
        kind, reason = "literature", f"{fill(required, scope).strip()}本次构建的数只描述构建机器：{reason}"
    return Verdict(kind, reason, fill(shown, scope).strip(), names, files=[file["values"] for file in files],
                   basis="construction" if construction else "measured")


def guard_kinds(claim):
    """The verdicts (keys of :data:`VERDICTS`) a claim with ``guard:`` may have on a
    published build; ``guard:`` lists them, and :func:`evaluate_all` fails any other."""
    kinds = claim.get("guard") or []
    if not isinstance(kinds, list) or not kinds or set(kinds) - {"holds", "partly", "fails"}:
        raise CheckError(f"claim {claim['id']!r}: guard: must list some of holds, partly, fails; got {kinds!r}")
    return kinds


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
        decides = _eval(code, scope, claim["id"], "files.decides")
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
    build: a failed (or missing) test makes the claim 不成立 and is an error. So is a
    verdict that a claim's ``guard:`` bars: the pages say what the claim says, so a build
    whose own check of it comes out otherwise must not be published."""
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
        if claim.get("guard") and verdict.kind not in guard_kinds(claim):
            errors.append(f"claim {claim['id']!r}: this build's check gives {VERDICTS[verdict.kind]}, which "
                          f"its guard: {claim['guard']} bars (a page says what this row checks)")
        verdicts[claim["id"]] = verdict
    return verdicts, errors
