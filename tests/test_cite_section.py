"""「引用本节」: every page cites itself in GB/T 7714 and BibTeX, with edition and commit.

The citation is made by book/_ext/writing/cite_section.py and shown under the article by
book/_templates/cite-section.html. Read from the build: each page of the book has both
forms, naming its own title and address, the package's version (code/pyproject.toml)
and a commit of this repository. In Chromium: 复制 puts the text on the clipboard, with
the reader's date in place of [引用日期], and says so to a screen reader.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from datetime import datetime, timezone

import pytest

from book._ext.shared.checkout import site_url
from book._ext.writing import cite_section as cite
from buildfiles import ROOT, ATTENTION, html_pages, soup

EDITION = tomllib.loads((ROOT / "code" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
PAGES = [p for p in html_pages(include_404=False) if p.startswith("book/")] or ["<no build>"]


def test_site_url_is_the_pages_address_of_the_repository():
    assert site_url("https://github.com/Attention-Book/attention-book") == \
        "https://attention-book.github.io/attention-book/"
    assert site_url("https://example.org/x") == ""


def test_citations_carry_title_edition_commit_and_address():
    got = cite.citations(authors="作者", part="4.5 注意力", book="书", edition="0.2.0", commit="abc123def456",
                         date="2026-12-01", url="https://x.github.io/r/book/a.html", pagename="book/ch04/a")
    assert got["gbt"] == ("作者. 4.5 注意力[EB/OL]//作者. 书. 0.2.0 版（提交 abc123def456）. "
                          "(2026-12-01)[引用日期]. https://x.github.io/r/book/a.html.")
    bib = got["bibtex"]
    assert bib.startswith("@misc{attnbook-book-ch04-a,") and bib.endswith("}")
    assert bib.count("{") == bib.count("}"), bib
    for field in ("title        = {4.5 注意力}", "version      = {0.2.0}", "year         = {2026}",
                  "url          = {https://x.github.io/r/book/a.html}", "abc123def456"):
        assert field in bib, field


def _is_commit(sha):
    sha = sha.removesuffix("-dirty")
    return subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=ROOT).returncode == 0


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_every_page_cites_itself(page):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    s = soup(page)
    gbt, bib = s.select_one("#cite-gbt"), s.select_one("#cite-bibtex")
    assert gbt and bib, f"{page} has no 引用本节 block"
    title = s.select_one("article.bd-article h1").get_text().replace("#", "").strip()
    gbt, bib = gbt.get_text(), bib.get_text()
    assert f". {title}[EB/OL]//" in gbt, gbt
    assert f"{EDITION} 版（提交 " in gbt and f"version      = {{{EDITION}}}" in bib
    commit = re.search(r"提交 ([0-9a-f]{12}(?:-dirty)?)）", gbt)
    assert commit and _is_commit(commit.group(1)), f"no commit of this repository in {gbt!r}"
    assert commit.group(1) in bib
    assert gbt.rstrip(".").endswith(f"/attention-book/{page}"), gbt
    assert f"/attention-book/{page}}}" in bib


@pytest.mark.browser
def test_copy_puts_the_citation_on_the_clipboard(server, watch):
    w = watch(viewport={"width": 1280, "height": 900})
    w.context.grant_permissions(["clipboard-read", "clipboard-write"])
    w.open(server.url + f"{ATTENTION}.html")
    w.page.locator("#cite-section > summary").click()
    today = datetime.now(timezone.utc).date().isoformat()  # the page uses UTC too
    for key, label in (("gbt", "GB/T 7714"), ("bibtex", "BibTeX")):
        w.page.get_by_role("button", name=f"复制 {label}").click()
        status = w.page.locator(".cite-section-status")
        status.filter(has_text=label).wait_for()
        copied = w.page.evaluate("() => navigator.clipboard.readText()")
        shown = w.page.locator(f"#cite-{key}").text_content()
        assert copied == shown.replace("引用日期", today) and today in copied, copied
    assert not w.problems() and not w.off_host, (w.problems(), w.off_host)
