"""Where `make book` puts the built book, and how the tests read it.

Shared by the book, site and browser tests (pytest puts this folder on ``sys.path``).
Page lists are computed when tests are collected, so they work without a build too:
the tests that need one then fail through the ``book`` marker (see conftest.py).
"""

import json
import re
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
EXECUTED = BUILD / "jupyter_execute"
# Section 4.5's page: the tests of what that page shows (its figures, formulas, views) name it.
# Tests that hold every section to its manuscript read the section list (tests/section_texts.py).
ATTENTION = "book/ch04/attention"
GLOSSARY = "book/glossary"

# Cells tagged so print numbers measured on the building machine, and say so.
MEASURED = "measured-at-build"


def front_matter(md):
    """The YAML front matter of a MyST page, as text ('' if none)."""
    text = Path(md).read_text(encoding="utf-8")
    return text.split("\n---", 1)[0] if text.startswith("---") else ""


def executed_pages():
    """Pages with jupytext front matter, i.e. the ones the build executes ('book/…', no suffix)."""
    return [md.relative_to(ROOT).with_suffix("").as_posix()
            for md in sorted((ROOT / "book").rglob("*.md"))
            if "drafts" not in md.parts and "kernelspec:" in front_matter(md)]


def chapter_pages():
    """Every page listed under a chapter's part of the toc (``第 N 章``): the section pages
    and the pages under them, in toc order ('book/…', no suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = []

    def walk(entries):
        for entry in entries or []:
            pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        if re.fullmatch(r"第 \d+ 章", part.get("caption", "")):
            walk(part.get("chapters"))
    return pages


def html_pages(include_404=True):
    """Every HTML page of the site, relative to _build/html, assets and sources left out."""
    skip = ("_static", "_sources", "_images", "_downloads", "jupyter_execute")
    pages = [p.relative_to(HTML).as_posix() for p in sorted(HTML.rglob("*.html"))
             if not set(p.relative_to(HTML).parts[:-1]) & set(skip)]
    return [p for p in pages if include_404 or p != "404.html"]


def search_index(site=HTML):
    """The data of a built site's searchindex.js (``Search.setIndex({...})``)."""
    text = (Path(site) / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def soup(page):
    """The parsed HTML of a built page: 'book/ch04/attention' or 'search.html'."""
    name = page if page.endswith(".html") else f"{page}.html"
    return BeautifulSoup((HTML / name).read_text(encoding="utf-8"), "html.parser")


def text_outputs(nb, only_reproducible=False):
    """Every stream and text/plain output of a notebook, cell by cell.

    With ``only_reproducible``, cells measured at build time are left out: the rest is
    what a rerun must reproduce exactly.
    """
    outputs = []
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type != "code" or (only_reproducible and MEASURED in tags):
            continue
        outputs.append([o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])])
    return outputs


def glossary_entries():
    """(term, definition) of every entry of the built glossary, aliases included."""
    page = soup(GLOSSARY)
    for link in page.select("dl.glossary > dt > a.headerlink"):
        link.decompose()
    return [(dt.get_text(strip=True), dt.find_next_sibling("dd").get_text(" ", strip=True))
            for dt in page.select("dl.glossary > dt")]


def clean(text):
    """Whitespace collapsed and heading marks dropped, for comparing visible text."""
    return re.sub(r"\s+", " ", text.replace("#", "")).strip()
