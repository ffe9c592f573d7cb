"""The JavaScript twin of the package's math (book/_ext/static/twin.js), run in Chromium against
the package on every fixture of tests/twin_fixtures.py, and mutated.

The page's own copy of the twin is the one tested: it must be the file's text, compacted
(book/_ext/resolving/figures.py drops indentation and comment lines) and inlined.
Each fixture is one sample of MiniMultiHeadAttention (projections given as data, head
split, scaled dot product, masked softmax, head merge, output projection), with masks
that include fully masked rows, several head counts and divisors. The twin's weights and
outputs must be within 1e-6 of the package's float64 results and within 1e-5 of its
float32 ones. Then each of a few plausible mistakes is put into the twin's source; each
must make the comparison fail, or the test would not be able to catch it.

The measured differences go to test-artifacts/browser/twin.json.
"""

from __future__ import annotations

import json

import pytest

from browsing import ARTIFACTS
from book._ext.resolving.figures import compact_js
from book._ext.shared.scripts import STATIC
from twin_fixtures import twin_cases

pytestmark = pytest.mark.browser

TWIN = STATIC / "twin.js"
MECHANISM = "book/ch04/mechanism"
TOL_FLOAT64, TOL_FLOAT32 = 1e-6, 1e-5
MUTATIONS = {  # name: (the twin's text, the mistake put in its place)
    "scale by d_k, not its square root": ("Math.sqrt(q.cols)", "q.cols"),
    "masked weights kept": ("!mask || mask[row + j] ? Math.exp(s.data[row + j] - top) : 0",
                            "Math.exp(s.data[row + j] - top)"),
    "a fully masked row left to NaN": ("if (top === -Infinity) continue; // fully masked: zeros", ""),
    "heads split interleaved": ("x.data[i * x.cols + h * depth + j]", "x.data[i * x.cols + j * heads + h]"),
}

# Runs the twin (window.AttnbookTwin) on every case; the largest differences per case.
COMPARE_JS = """(cases) => {
    const T = window.AttnbookTwin;
    const M = (rows) => T.matrix(rows.length, rows[0].length, Float64Array.from(rows.flat()));
    const worst = (got, want) => got.reduce((m, v, i) => (Math.abs(v - want[i]) <= m ? m : Math.abs(v - want[i])), 0);
    return cases.map((c) => {
        try {
            const p = {};
            for (const [k, v] of Object.entries(c.params)) p[k] = Array.isArray(v[0]) ? M(v) : Float64Array.from(v);
            const mask = c.mask ? Uint8Array.from(c.mask.flat()) : null;
            const divisor = c.divisor === 'depth' ? undefined : () => c.divisor;
            const r = T.multiHead(M(c.x), c.context ? M(c.context) : null, p, c.heads, mask, divisor);
            const weights = r.weights.flatMap((w) => [...w.data]), output = [...r.output.data];
            const diff = (ref) => Math.max(worst(weights, c[ref].weights.flat(2)), worst(output, c[ref].output.flat()));
            return {name: c.name, float64: diff('float64'), float32: diff('float32'),
                    nan: weights.some(Number.isNaN) || output.some(Number.isNaN),
                    heads: r.weights.length};
        } catch (e) {
            return {name: c.name, error: String(e)};
        }
    });
}"""


def failing(results, n_cases):
    """The cases where the twin is not the package (an error, NaN or a difference too large)."""
    if len(results) != n_cases:
        return [f"{len(results)} results for {n_cases} cases"]
    return [r for r in results if "error" in r or r["nan"] or not r["float64"] <= TOL_FLOAT64
            or not r["float32"] <= TOL_FLOAT32]


def test_twin_matches_the_package_and_a_mutated_twin_does_not(server, watch):
    cases = twin_cases()
    kinds = {c["mask_kind"] for c in cases}
    assert len(cases) >= 10 and {"padding", "causal", "random", "empty", None} <= kinds, kinds
    assert {c["heads"] for c in cases} >= {1, 2, 4, 8} and any(c["divisor"] != "depth" for c in cases)
    assert any(c["mask"] and not any(row) for c in cases if c["mask"] for row in c["mask"]), \
        "no fixture has a fully masked row"

    w = watch()
    w.open(server.url + f"{MECHANISM}.html")  # the page of the explorable figures
    source = compact_js(TWIN.read_text(encoding="utf-8"))
    inlined = w.page.evaluate("() => [...document.scripts].map((s) => s.textContent)")
    assert source in inlined, "the page does not carry book/_ext/static/twin.js (compacted) as it is"

    results = w.page.evaluate(COMPARE_JS, cases)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = {"cases": len(cases), "max_float64": max(r.get("float64", float("inf")) for r in results),
              "max_float32": max(r.get("float32", float("inf")) for r in results), "results": results}
    assert not failing(results, len(cases)), failing(results, len(cases))

    caught = {}
    for name, (right, wrong) in MUTATIONS.items():
        assert source.count(right) == 1, f"mutation {name!r}: {right!r} is not in twin.js once"
        w.page.evaluate("(src) => { (0, eval)(src); }", source.replace(right, wrong))
        caught[name] = [r["name"] for r in failing(w.page.evaluate(COMPARE_JS, cases), len(cases))]
    w.page.evaluate("(src) => { (0, eval)(src); }", source)
    assert not failing(w.page.evaluate(COMPARE_JS, cases), len(cases)), "the twin, put back, fails"
    report["mutations_caught_by"] = caught
    (ARTIFACTS / "twin.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    assert all(caught.values()), f"mutations no fixture catches: {[n for n, c in caught.items() if not c]}"
    assert not w.problems(), w.problems()
