"""Previews of what a link points to, shown on hover and on keyboard focus, built offline.

A reader meets 键, 编者图 4.5-3, 4.5 的延伸 or (Vaswani et al., 2017) in a sentence and wants
to know what it is without leaving the sentence. Once every page is written
(``build-finished``), this reads the site's pages and, for each link in a page's article
that points at one of these, puts a copy of the target into that page:

=============  ==============================================================
glossary term  the term and its definition
section        the section's title and first paragraph
figure         the figure's caption (its number included)
table          the table's caption
equation       the equation itself (MathML)
citation       the bibliography entry
API object     the signature and the first paragraph of its docstring
exercise       the exercise's title and first paragraph
=============  ==============================================================

The copies go into one JSON ``<script type="application/json" id="attnbook-previews">`` at
the end of the page (data: never rendered, read or printed, and no ``<math>`` of it counts
as a formula of the page), each under the target's address relative to the site's root; ``previews.js``, inlined after it, shows the one for a link on hover or on
focus, and hides it on Esc, on moving away or on blur (WCAG 1.4.13: the pointer may move
onto the preview, and it stays). Nothing is fetched, at build time or in the browser: a
page carries the previews of its own links. Copies lose their ids and their links, so an
id is never doubled and a preview holds nothing to Tab to.
"""

import html
import json
import posixpath
from pathlib import Path

from bs4 import BeautifulSoup

from book._ext.shared.scripts import script

SCRIPT = script("previews.js")
MARK = '<script type="application/json" id="attnbook-previews">'
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]


def _clean(fragment):
    """A copy of ``fragment`` (a tag) as HTML with no ids, no links and no permalinks."""
    copy = BeautifulSoup(str(fragment), "html.parser")
    for tag in copy.select(".headerlink, script, .editorial-label, .copybtn"):
        tag.decompose()
    for tag in copy.find_all(True):
        for attr in ("id", "href", "tabindex", "title", "aria-describedby"):
            tag.attrs.pop(attr, None)
        if tag.get("role") == "listitem":  # a citation, out of its list
            del tag["role"]
        if tag.name == "a":
            tag.name = "span"
    return str(copy).strip()


def _first_paragraph(tag):
    """The first paragraph with text of ``tag`` itself (not of a subsection); labels skipped."""
    for p in tag.find_all("p"):
        if "editorial-title" in (p.get("class") or []) or not p.get_text(strip=True):
            continue
        if tag.name == "section" and p.find_parent("section") is not tag:
            continue
        return _clean(p)
    return ""


def _title(tag):
    """The text of a section's heading, without its permalink."""
    heading = tag.find(_HEADINGS)
    if heading is None:
        return ""
    return html.escape(BeautifulSoup(_clean(heading), "html.parser").get_text().strip())


def preview_of(el):
    """(kind, HTML) for the element a link points to, or None when it gets no preview."""
    classes = set(el.get("class") or [])
    if el.name == "span" and not el.contents and el.parent is not None and el.parent.name == "section":
        return preview_of(el.parent)  # a label's id, which docutils writes as an empty span
    if el.name == "dt" and el.find_parent("dl", class_="glossary"):
        dd = el.find_next_sibling("dd")
        return "term", f'<p class="attnbook-preview-title">{_clean(el)}</p>' + (_clean(dd) if dd else "")
    if el.name == "dt" and "sig" in classes:
        dd = el.find_next_sibling("dd")
        return "api", f'<p class="attnbook-preview-title">{_clean(el)}</p>' + (_first_paragraph(dd) if dd else "")
    if el.name == "section":
        return "section", f'<p class="attnbook-preview-title">{_title(el)}</p>' + _first_paragraph(el)
    if el.name == "figure":
        caption = el.find("figcaption")
        return ("figure", _clean(caption)) if caption else None
    if el.name == "table" or el.find("table", recursive=False):
        table = el if el.name == "table" else el.find("table")
        caption = table.find("caption")
        return ("table", _clean(caption)) if caption else None
    if "math" in classes and el.find("math"):
        return "equation", _clean(el.find("math"))
    if "citation" in classes:
        return "citation", _clean(el)
    if "exercise" in classes or "admonition" in classes:
        title = el.find(class_="admonition-title")
        body = el.find(class_="admonition-body") or el
        return "exercise", (f'<p class="attnbook-preview-title">{_clean(title)}</p>' if title else "") + _first_paragraph(body)
    return None


def _targets(pages):
    """{'book/glossary.html#term-query': (kind, HTML)} over every page of the site."""
    targets = {}
    for name, page in pages.items():
        article = page.select_one("article.bd-article") or page
        first = article.find("section")
        if first is not None and (found := preview_of(first)):
            targets[name] = found  # a link to the page itself
        for el in article.select("[id]"):
            found = preview_of(el)
            if found and found[1]:
                targets[f"{name}#{el['id']}"] = found
    return targets


def _links(name, page):
    """The site-relative addresses the links of a page's article point to."""
    article = page.select_one("article.bd-article")
    if article is None:
        return set()
    out = set()
    for a in article.select("a.reference.internal[href]"):
        if a.find_parent(class_=["toctree-wrapper", "editor-notes"]):
            continue
        path, _, fragment = a["href"].partition("#")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(name), path)) if path else name
        out.add(f"{target}#{fragment}" if fragment else target)
    return out


def _write_previews(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    files = {app.builder.get_target_uri(doc): out / app.builder.get_outfilename(doc)
             for doc in app.env.found_docs}
    files = {name: path for name, path in files.items() if path.is_file()}
    texts = {name: path.read_text(encoding="utf-8") for name, path in files.items()}
    pages = {name: BeautifulSoup(text, "html.parser") for name, text in texts.items()}
    targets = _targets(pages)
    for name, page in pages.items():
        wanted = sorted(key for key in _links(name, page) if key in targets and key != name)
        text = texts[name]
        if not wanted or MARK in text:
            continue
        data = json.dumps({key: {"kind": targets[key][0], "html": targets[key][1]} for key in wanted},
                          ensure_ascii=False).replace("<", "\\u003c")  # never a tag, nor </script>
        block = f"{MARK}{data}</script>\n<script>{SCRIPT}</script>\n"
        files[name].write_text(text.replace("</body>", block + "</body>", 1), encoding="utf-8")


def setup(app):
    # Before offline.py's entry page (400) and webfonts.py's subsets (500), which read the pages.
    app.connect("build-finished", _write_previews, priority=300)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
