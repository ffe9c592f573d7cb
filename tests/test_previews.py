"""Named glossary anchors, the editor's terms linked, and link previews (hover, focus, Esc).

book/_ext/resolving/glossary_links.py names each glossary anchor after the term's English name and
links the first use of each term in the editor's prose; book/_ext/after/previews.py puts into
each page (as JSON) a preview of every term, section, figure, table, equation, citation, API
object and exercise its links point to, and previews.js shows them. Read from the build:
the anchors, where the links are (never in the author's text), and that every preview
names a target that exists and holds no id and no link. In Chromium: hover shows the
preview and it stays while the pointer moves onto it; leaving, Esc and blur hide it;
keyboard focus shows it; it passes axe in both themes; it is never printed; and nothing
is fetched from another host.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from book._ext.after import previews
from book._ext.resolving import glossary_links
from buildfiles import HTML, ROOT, ATTENTION, glossary_entries, html_pages, soup

GLOSSARY = "book/glossary"
DESKTOP = {"width": 1280, "height": 900}
NAMED = re.compile(r"^term-[a-z0-9]+(?:-[a-z0-9]+)*$")


# --- the extensions' own logic (no build needed) -----------------------------------------

GLOSSARY_MD = """# 术语表

```{glossary}
查询
  英文 query；标识符 `query`。

缩放点积注意力
缩放点积
  英文 scaled dot-product attention；标识符 `x`。

编码器-解码器
  英文 encoder–decoder；标识符 `y`。
```
"""


def test_glossary_anchors_come_from_the_english_names():
    assert glossary_links.glossary_anchors(GLOSSARY_MD) == {
        "查询": "term-query",
        "缩放点积注意力": "term-scaled-dot-product-attention",
        "缩放点积": "term-scaled-dot-product-attention-short",
        "编码器-解码器": "term-encoder-decoder",
    }


def test_a_term_without_an_english_name_is_an_error():
    with pytest.raises(ValueError, match="no English name"):
        glossary_links.glossary_anchors("```{glossary}\n查询\n  标识符 `query`。\n```\n")


@pytest.mark.parametrize("kind,markup", [
    ("term", '<dl class="glossary"><dt id="term-key">键<a class="headerlink" href="#term-key">#</a></dt>'
             '<dd><p>英文 key。</p></dd></dl>'),
    ("section", '<section id="s"><h2>标题<a class="headerlink" href="#s">#</a></h2><p>第一段。</p><p>第二段。</p></section>'),
    ("section", '<section id="s"><span id="sec-label"></span><h2>标题</h2><p>第一段。</p></section>'),
    ("figure", '<figure id="f"><svg role="img"></svg><figcaption><p>图 1 说明</p></figcaption></figure>'),
    ("table", '<table id="t"><caption><span>编者表 4.5-1</span> 对照</caption><tr><td>1</td></tr></table>'),
    ("equation", '<div class="math notranslate" id="equation-e"><math><mi>x</mi></math></div>'),
    ("citation", '<div class="citation" id="c" role="listitem"><span class="label">[V17]</span><p>Vaswani.</p></div>'),
])
def test_preview_of_each_kind(kind, markup):
    page = BeautifulSoup(markup, "html.parser")
    el = page.select("[id]")[-1]
    got, preview = previews.preview_of(el)
    assert got == kind
    copy = BeautifulSoup(preview, "html.parser")
    assert copy.get_text(strip=True), f"empty {kind} preview"
    assert not copy.select("[id], a, .headerlink"), f"{kind} preview keeps an id or a link: {preview}"
    if kind == "section":
        assert "第一段" in preview and "第二段" not in preview
    if kind == "equation":
        assert copy.find("math") is not None


# --- the build ----------------------------------------------------------------------------

CONTENT_PAGES = [p for p in html_pages(include_404=False) if p.startswith("book/")] or ["<no build>"]


@pytest.mark.book
def test_glossary_anchors_are_named_not_numbered():
    page = soup(GLOSSARY)
    ids = {dt.get_text(strip=True).rstrip("#"): dt.get("id") for dt in page.select("dl.glossary > dt")}
    assert len(ids) == len(glossary_entries()) >= 20
    bad = {term: i for term, i in ids.items() if not (i and NAMED.match(i))}
    assert not bad, f"glossary anchors that are not named: {bad}"
    assert ids["查询"] == "term-query" and ids["缩放点积"] == "term-scaled-dot-product-attention-short"
    assert len(set(ids.values())) == len(ids), "two terms share an anchor"


@pytest.mark.book
@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_term_links_sit_in_the_editors_prose_once_per_term(page):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    s = soup(page)
    anchors = {dt["id"] for dt in soup(GLOSSARY).select("dl.glossary > dt[id]")}
    links = s.select("a.glossary-term-link")
    editorial_page = s.select_one(".editorial-page") is not None or s.select_one(".voice-switch") is None
    problems = []
    for a in links:
        target = a["href"].split("#")[-1]
        if target not in anchors:
            problems.append(f"{a.get_text()} links to #{target}, which the glossary lacks")
        if not editorial_page and a.find_parent(class_="editorial") is None:
            problems.append(f"{a.get_text()} is linked in the author's text: {a.find_parent('p')}")
        if a.find_parent(["blockquote", "h1", "h2", "h3", "code", "pre", "figcaption"]):
            problems.append(f"{a.get_text()} is linked inside a quote, a heading, code or a caption")
    terms = [a.get_text() for a in links]
    twice = sorted({t for t in terms if terms.count(t) > 1})
    if twice:
        problems.append(f"terms linked more than once: {twice}")
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


@pytest.mark.book
def test_the_section_page_links_terms_in_its_editorial_blocks():
    s = soup(ATTENTION)
    links = s.select("a.glossary-term-link")
    assert len(links) >= 8, f"only {len(links)} terms linked on {ATTENTION}"
    assert all(a.find_parent(class_="editorial") for a in links)
    assert not s.select(".editorial-title a.glossary-term-link")


def stored_previews(page_soup):
    """{address: {'kind', 'html'}} of a page's previews, or None when it has none."""
    store = page_soup.select_one("script#attnbook-previews")
    return None if store is None else json.loads(store.string)


@pytest.mark.book
@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_every_preview_names_an_existing_target(page):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    s = soup(page)
    items = stored_previews(s)
    if items is None:
        assert not s.select("article a.glossary-term-link"), f"{page} links terms but has no previews"
        return
    assert items, f"{page}: an empty set of previews"
    bad = []
    for key, item in items.items():
        path, _, fragment = key.partition("#")
        target = HTML / path
        if not target.is_file() or (fragment and f'id="{fragment}"' not in target.read_text(encoding="utf-8")):
            bad.append(f"{key}: no such target")
        copy = BeautifulSoup(item["html"], "html.parser")
        if copy.select("[id], a"):
            bad.append(f"{key}: the copy keeps an id or a link")
        if not copy.get_text(strip=True):
            bad.append(f"{key}: empty")
    assert not bad, f"{page}:\n  " + "\n  ".join(bad)


@pytest.mark.book
def test_previews_cover_terms_sections_figures_and_citations():
    kinds = set()
    for page in CONTENT_PAGES:
        kinds |= {item["kind"] for item in (stored_previews(soup(page)) or {}).values()}
    assert {"term", "section", "figure", "citation"} <= kinds, kinds


# --- in the browser --------------------------------------------------------------------------

TIP = "#attnbook-preview"
TIP_JS = """() => { const t = document.querySelector('#attnbook-preview');
    return t && !t.hidden ? {kind: t.dataset.kind, text: t.textContent.trim(),
                             display: getComputedStyle(t).display} : null; }"""


@pytest.fixture
def section(server, watch):
    w = watch(viewport=DESKTOP, color_scheme="light")
    w.open(server.url + f"{ATTENTION}.html")
    return w


def definition_of(term):
    return dict(glossary_entries())[term]


@pytest.mark.browser
def test_hover_shows_the_term_and_it_stays_on_the_preview(section):
    w = section
    link = w.page.locator("a.glossary-term-link").first
    term = link.inner_text()
    link.scroll_into_view_if_needed()
    link.hover()
    w.page.wait_for_selector(TIP, state="visible")
    tip = w.page.evaluate(TIP_JS)
    squeeze = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    assert tip["kind"] == "term" and squeeze(definition_of(term)) in squeeze(tip["text"]), tip
    assert link.get_attribute("aria-describedby") == "attnbook-preview"
    box = w.page.locator(TIP).bounding_box()
    w.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    w.page.wait_for_timeout(500)
    assert w.page.evaluate(TIP_JS) is not None, "the preview went away while the pointer was on it"
    w.page.mouse.move(5, 5)
    w.page.wait_for_selector(TIP, state="hidden")
    assert link.get_attribute("aria-describedby") is None
    assert not w.problems() and not w.off_host, (w.problems(), w.off_host)


@pytest.mark.browser
def test_focus_shows_a_preview_and_esc_or_blur_hides_it(section):
    w = section
    kinds = {}
    for selector, kind in [("a.glossary-term-link", "term"), ("a .std-numref", "figure"),
                           ('a[href*="references.html#"]', "citation"), ("a .std-ref", "section")]:
        link = w.page.locator(f"article {selector}").first
        link.evaluate("(el) => (el.closest('a') || el).focus()")
        w.page.wait_for_selector(TIP, state="visible")
        kinds[kind] = w.page.evaluate(TIP_JS)["kind"]
        w.page.keyboard.press("Escape")
        assert w.page.evaluate(TIP_JS) is None, f"Esc did not close the {kind} preview"
        assert w.page.evaluate("() => document.activeElement.tagName") == "A", "Esc moved the focus"
    assert kinds == {k: k for k in kinds}, kinds
    w.page.locator("article a.glossary-term-link").first.focus()
    w.page.wait_for_selector(TIP, state="visible")
    w.page.keyboard.press("Tab")
    assert w.page.evaluate(TIP_JS) is None or w.page.evaluate(
        "() => document.activeElement.getAttribute('aria-describedby')") == "attnbook-preview", \
        "the preview of the link left behind stays"
    assert not w.problems() and not w.off_host, (w.problems(), w.off_host)


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_open_preview_passes_axe_and_is_not_printed(theme, server, watch):
    from test_a11y import ANIMATIONS_DONE_JS, WCAG_TAGS, axe_source, report

    w = watch(viewport=DESKTOP, color_scheme=theme)
    w.page.add_init_script(axe_source())
    w.open(server.url + f"{ATTENTION}.html")
    w.page.locator('article a[href*="references.html#"]').first.focus()
    w.page.wait_for_selector(TIP, state="visible")
    w.page.wait_for_function(ANIMATIONS_DONE_JS)
    found = w.page.evaluate("""async (tags) => (await axe.run('#attnbook-preview',
        {runOnly: {type: 'tag', values: tags}})).violations.map((v) => ({id: v.id, impact: v.impact,
        help: v.help, nodes: v.nodes.map((n) => ({target: n.target.join(' '), html: n.html,
        summary: n.failureSummary}))}))""", WCAG_TAGS)
    assert not found, "\n".join(report(found, ATTENTION, f"preview open, {theme}"))
    w.page.emulate_media(media="print")
    assert w.page.evaluate(TIP_JS)["display"] == "none", "the preview would be printed"


def test_the_printed_book_hides_previews():
    css = (ROOT / "tools" / "pdfbook" / "print.css").read_text(encoding="utf-8")
    assert re.search(r"\.attnbook-preview[^{]*\{[^}]*display:\s*none", css), "print.css does not hide previews"
