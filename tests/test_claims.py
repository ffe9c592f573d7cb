"""The claims ledger's sources agree, checked without a build.

book/claims.yml quotes the manuscript; tests, cells and editor's corrections name the
claims they back (book/_ext/claims.py finds them the same way at build time). A claim
with no backing, or a backing that names no claim, fails here before any build.
"""

import re

import pytest

import manuscript
from buildfiles import ROOT, load_extension

claims_ext = load_extension("claims")
CLAIMS = claims_ext.load_claims(ROOT / "book" / "claims.yml")
IDS = {claim["id"] for claim in CLAIMS}
PAGES = sorted((ROOT / "book").rglob("*.md"))


def cell_tags():
    """``{claim id: [page]}`` for every code cell tag ``claim-<id>`` in the book's pages."""
    found = {}
    for page in PAGES:
        for tags in re.findall(r"^:?tags: \[(.*?)\]", page.read_text(encoding="utf-8"), re.M):
            for tag in (t.strip() for t in tags.split(",")):
                if tag.startswith(claims_ext.TAG_PREFIX):
                    found.setdefault(tag[len(claims_ext.TAG_PREFIX):], []).append(page.name)
    return found


def corrections():
    return {claim_id for page in PAGES
            for claim_id in re.findall(r"^:correction: (\S+)", page.read_text(encoding="utf-8"), re.M)}


def test_at_least_twenty_claims():
    assert len(CLAIMS) >= 20


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim["id"])
def test_quote_is_the_manuscripts_word_for_word(claim):
    assert claim["quote"] in manuscript.text(), claim["quote"]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim["id"])
def test_every_claim_has_a_backing(claim):
    backing = {"test": claims_ext.test_backings(ROOT / "tests").get(claim["id"]),
               "cell": cell_tags().get(claim["id"]),
               "correction": claim["id"] in corrections(),
               "literature": claim.get("unverifiable")}
    assert claims_ext.status_of(backing), f"claim {claim['id']!r} has no test, cell, correction or literature"


def test_every_backing_names_a_claim():
    named = set(claims_ext.test_backings(ROOT / "tests")) | set(cell_tags()) | corrections()
    assert named - IDS == set(), "tests, cell tags or corrections name claims not in claims.yml"


def test_cited_literature_is_in_the_bibliography():
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    cited = {key for claim in CLAIMS for key in claim.get("unverifiable", [])}
    assert cited <= keys, cited - keys


def test_the_scan_finds_a_marked_test(tmp_path):
    """The backing scan itself can fail: it sees a marker, and only a marker."""
    (tmp_path / "test_x.py").write_text(
        'import pytest\n\n@pytest.mark.claim("a")\ndef test_a():\n    pass\n\n'
        '@pytest.mark.slow\ndef test_b():\n    pass\n', encoding="utf-8")
    assert claims_ext.test_backings(tmp_path) == {"a": [("tests/test_x.py", "test_a", 4)]}
    assert claims_ext.status_of({}) is None
