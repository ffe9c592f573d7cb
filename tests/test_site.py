"""Checks of the built site as a product (no browser): exercises, downloads, offline
assets, Chinese interface, glossary-driven search, references, 404 and API pages.

The real-browser checks are in test_browser.py; these read the files in _build/.
"""

import base64
import re

import nbformat
import pytest

from section_texts import SECTIONS
from buildfiles import BUILD, EXECUTED, HTML, glossary_entries, html_pages, search_index, soup

pytestmark = pytest.mark.book

EXERCISES = "book/ch04/exercises"
STARTER = "book/ch04/exercises-starter"


def check_cells(page):
    """(source, output text) of every executed cell that calls check(...) or check_by_name(...)."""
    nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    return [(cell.source, "".join(o.get("text") or o.get("data", {}).get("text/plain", "")
                                  for o in cell.outputs))
            for cell in nb.cells if cell.cell_type == "code" and re.search(r"\bcheck(_by_name)?\(", cell.source)]


def checked_ids(text):
    """The exercise ids that check("4.5.2", …) and check_by_name(solutions.name) calls check."""
    from attnbook.exercises.catalog import exercise_named

    return re.findall(r'check\("([\d.]+)"', text) + [
        exercise_named(name).id for name in re.findall(r"check_by_name\(solutions\.(\w+)\)", text)]


def check_id(source):
    (exercise_id,) = checked_ids(source)
    return exercise_id


# --- exercises -------------------------------------------------------------------------


def test_exercise_numbers_are_the_checker_ids():
    """练习 4.5.N on the page is the id of the exercise its solution's check cell checks."""
    from attnbook.exercises import EXERCISES as REGISTRY

    page = soup(f"{EXERCISES}.html")
    numbers = [re.search(r"练习 (4\.5\.\d+)", box.select_one(".admonition-title").get_text()).group(1)
               for box in page.select("div.exercise")]
    assert numbers == [f"4.5.{n}" for n in range(1, len(numbers) + 1)]
    assert len(numbers) >= 10
    checked = []
    for box in page.select("div.solution"):
        number = re.search(r"练习 (4\.5\.\d+)", box.select_one(".admonition-title").get_text()).group(1)
        calls = checked_ids(box.get_text())
        assert calls in ([], [number]), (number, calls)
        checked += calls
    assert sorted(checked) == sorted(REGISTRY), "every checker has exactly one solution in the book"


def test_every_solution_in_the_book_passes_its_checker():
    cells = check_cells(EXERCISES)
    assert len(cells) >= 10
    for source, output in cells:
        assert re.search(rf"练习 {re.escape(check_id(source))}“.+”：通过", output), (source, output)


def test_solutions_are_collapsed():
    page = soup(f"{EXERCISES}.html")
    solutions = page.select("div.solution")
    assert solutions and all("dropdown" in box["class"] for box in solutions)


def test_starter_notebook_stubs_are_reported_unfinished_not_a_traceback():
    from attnbook.exercises import EXERCISES as REGISTRY, UNFINISHED

    cells = check_cells(STARTER)
    assert [check_id(source) for source, _ in cells] == list(REGISTRY)
    for source, output in cells:
        lines = output.strip().splitlines()
        assert lines[0].endswith(f"：{UNFINISHED}") and len(lines) == 2, (source, output)
        assert lines[1].startswith("  提示：") and "单元格第 " in lines[1] and "Traceback" not in output


@pytest.mark.parametrize("page", [EXERCISES, STARTER, "book/ch04/attention"])
def test_page_offers_ipynb_and_md_downloads(page):
    links = {a["href"].rsplit("/_sources/", 1)[-1] for a in soup(f"{page}.html").select("a[href*='_sources/']")}
    for suffix in (".ipynb", ".md"):
        assert f"{page}{suffix}" in links, (suffix, links)
        assert (HTML / "_sources" / f"{page}{suffix}").is_file()
    nb = nbformat.read(HTML / "_sources" / f"{page}.ipynb", as_version=4)
    assert nb.cells[0].get("id") == "attnbook-versions"  # added by book/_ext/writing/notebook_download.py
    assert nb.cells[1].cell_type == "markdown" or "import attnbook" in nb.cells[1].source


@pytest.mark.parametrize("page", ["book/ch04/mechanism", "book/ch04/cost", EXERCISES])
def test_downloaded_notebook_keeps_the_hidden_cells_that_make_its_numbers(page):
    """The page hides the cells that glue its values (remove-cell); the .ipynb a reader
    downloads still has every code cell the build ran, so a rerun recomputes them."""
    ran = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    offered = nbformat.read(HTML / "_sources" / f"{page}.ipynb", as_version=4)
    sources = [cell.source.strip() for cell in offered.cells if cell.cell_type == "code"]
    hidden = [cell.source.strip() for cell in ran.cells if cell.cell_type == "code"
              and "remove-cell" in cell.get("metadata", {}).get("tags", [])]
    assert any("glue(" in source for source in hidden), page
    missing = [source[:80] for source in hidden if source not in sources]
    assert not missing, missing


# --- offline and Chinese throughout --------------------------------------------------------


@pytest.mark.parametrize("page", html_pages())
def test_page_loads_no_remote_script_style_or_font(page):
    tags = soup(page).select("script[src], link[href], img[src], iframe[src]")
    remote = [t.get("src") or t.get("href") for t in tags
              if re.match(r"(https?:)?//", t.get("src") or t.get("href"))
              and not (t.name == "link" and t.get("rel") in (["canonical"], ["alternate"]))]
    assert not remote, remote


# --- math made at build time ----------------------------------------------------------------


@pytest.mark.parametrize("page", html_pages())
def test_page_loads_no_math_engine_or_icon_script(page):
    scripts = [s["src"] for s in soup(page).select("script[src]")]
    assert not [s for s in scripts if re.search(r"mathjax|katex|fontawesome", s, re.I)], scripts
    assert not soup(page).select('link[rel=preload][href*="fontawesome"]')


@pytest.mark.parametrize("page", html_pages())
def test_formulas_are_mathml_with_their_tex(page):
    html = soup(page)
    for box in html.select("span.math, div.math"):
        (math,) = box.find_all("math", recursive=False)
        assert (math.get("display") == "block") == (box.name == "div"), box
        assert math.get("alttext", "").strip(), box  # the TeX, for copying and assistive tools
    assert not re.search(r"\\\(|\\\[", html.get_text()), "MathJax delimiters left in the page"


def test_entry_page_redirects_with_the_sites_icon():
    """The root index.html carries the icon inline: else the browser asks for /favicon.ico
    (a 404) or the linked icon (cut off by the redirect) as the redirect races it."""
    html = soup("index.html")
    assert html.html and html.html.get("lang") == "zh-CN", "index.html is not a whole Chinese page"
    refresh = html.find("meta", attrs={"http-equiv": "Refresh"})
    assert refresh and refresh["content"] == "0; url=book/index.html", refresh
    icon = html.find("link", rel="icon")
    svg = (HTML / "_static" / "favicon.svg").read_bytes()
    assert icon and icon["href"] == "data:image/svg+xml;base64," + base64.b64encode(svg).decode(), icon
    assert html.find("a", href="book/index.html")


@pytest.mark.parametrize("page", [p for p in html_pages() if p != "index.html"])  # a redirect
def test_interface_is_chinese(page):
    html = soup(page)
    assert html.html["lang"] == "zh-CN"
    english = {"Toggle primary sidebar", "Toggle secondary sidebar", "Color mode", "Link to this heading",
               "Search this book...", "Click to show", "Back to top", "Print to PDF", "Download this page"}
    attributes = {v for t in html.find_all(True) for k, v in t.attrs.items()
                  if k in ("title", "aria-label", "placeholder") and isinstance(v, str)}
    assert not english & (attributes | {s.strip() for s in html.find_all(string=True)})
    assert "列印" not in html.get_text()  # Taiwanese wording in the theme's zh_CN catalog


def test_copyright_is_set():
    footer = soup("book/ch04/attention.html").select_one("footer.bd-footer-content")
    assert "© 版权所有 2026，本书作者与贡献者。" in footer.get_text(" ", strip=True)


# --- glossary, search dictionary, references ------------------------------------------------


def test_glossary_gives_english_name_and_identifier():
    entries = glossary_entries()
    assert len(entries) >= 15
    for term, definition in entries:
        assert re.match(r"英文 [A-Za-z]", definition), (term, definition)
        assert "标识符" in definition, (term, definition)


def test_jieba_dictionary_is_the_glossary_and_the_sections_terms():
    from book._ext.config.search_terms import section_terms

    words = [line.split()[0] for line in
             (BUILD / ".doctrees" / "jieba_userdict.txt").read_text(encoding="utf-8").splitlines()]
    glossary = [term for term, _ in glossary_entries()]
    assert words == list(dict.fromkeys(glossary + section_terms(SECTIONS)))


def test_search_index_keeps_glossary_terms_whole():
    data = search_index()
    section = data["docnames"].index("book/ch04/attention")
    for term in ["注意力机制", "缩放点积", "多头注意力", "交叉注意力", "自注意力", "掩码", "位置编码"]:
        found = set()
        for table in ("terms", "titleterms"):
            docs = data[table].get(term, [])
            found |= {docs} if isinstance(docs, int) else set(docs)
        assert section in found, f"{term} is not indexed whole for the section page"


def test_single_character_terms_are_found_by_their_english_name_as_the_glossary_says():
    """Sphinx's Chinese index drops one-character words; the glossary sends readers to
    the English name instead, which must then be in the index (stemmed: value → valu)."""
    data = search_index()
    glossary = data["docnames"].index("book/glossary")
    assert "单字词条搜不到，请搜英文 key、value" in soup("book/glossary").get_text()
    for term, stem in (("键", "key"), ("值", "valu")):
        assert term not in data["terms"], f"{term} is indexed after all: the glossary's note is wrong"
        docs = data["terms"][stem]
        assert glossary in ({docs} if isinstance(docs, int) else set(docs))


@pytest.mark.parametrize("section", SECTIONS, ids=[s.number for s in SECTIONS])
def test_search_index_keeps_each_sections_subject_and_headings_whole(section):
    """A reader who types a section's subject (注意力机制; 图神经网络 for a later one) or a
    heading's phrase finds that section's page."""
    from book._ext.config.search_terms import section_terms

    data = search_index()
    page = data["docnames"].index(section.page)
    missing = []
    for term in section_terms([section]):
        found = set()
        for table in ("terms", "titleterms"):
            docs = data[table].get(term, [])
            found |= {docs} if isinstance(docs, int) else set(docs)
        if page not in found:
            missing.append(term)
    assert not missing, f"not indexed whole for {section.page}: {missing}"


def test_bibliography_lists_the_cited_works():
    entries = soup("book/references.html").select("div.citation-list > div.citation")
    text = " ".join(entry.get_text(" ", strip=True) for entry in entries)
    for author, year in [("Vaswani", "2017"), ("Bahdanau", "2015"), ("Katharopoulos", "2020"),
                         ("Beltagy", "2020"), ("Child", "2019"), ("Dao", "2022")]:
        assert re.search(rf"{author}.*?{year}", text), author
    cited = "".join((HTML / p).read_text(encoding="utf-8") for p in html_pages() if p != "book/references.html")
    for entry in entries:
        assert f'references.html#{entry["id"]}"' in cited, f"{entry.get_text()[:40]} is never cited"


# --- 404 and API pages -----------------------------------------------------------------------


def test_404_page_is_chinese_with_absolute_links():
    page = soup("404.html")
    assert "页面不存在" in page.get_text()
    hrefs = [link["href"] for link in page.select("link[rel=stylesheet]")]
    assert hrefs and all(h.startswith("/attention-book/_static/") for h in hrefs)
    assert page.select_one('a[href="/attention-book/index.html"]')


def test_api_page_is_generated_from_docstrings():
    import attnbook
    from attnbook import exercises

    page = soup("book/api.html")
    for name in ["attnbook.MiniMultiHeadAttention", "attnbook.scaled_dot_product_attention",
                 "attnbook.padding_mask", "attnbook.exercises.check", "attnbook.cost.peak_memory"]:
        entry = page.find(id=name)
        assert entry is not None, name
    signatures = {dt["id"]: dt.get_text(" ", strip=True) for dt in page.select("dl.py.class > dt[id]")}
    assert "(*args, **kwargs)" not in " ".join(signatures.values()), signatures   # Keras's Layer.__new__
    assert "( d_model , num_heads" in signatures["attnbook.MiniMultiHeadAttention"], signatures
    for documented in (attnbook.scaled_dot_product_attention, exercises.check):
        summary = documented.__doc__.strip().splitlines()[0]
        summary = re.sub(r":\w+:`([^`]*)`", r"\1", summary).replace("``", "").replace("'", "’")
        assert summary in page.get_text(), summary


def test_no_prose_has_a_space_after_full_width_punctuation():
    """A value folded in claims.yml after 「；」 renders as 「； 线性」; a bold lead in a
    docstring as 「。 检查器」. Code and its outputs keep Python's spacing."""
    stray = []
    for page in html_pages():
        article = soup(page).select_one("article")
        for code in article.select("pre, .cell_output, .highlight, script, style") if article else ():
            code.decompose()
        stray += [(page, m) for m in re.findall(r".{0,12}[；，。：、）] \S.{0,8}", article.get_text() if article else "")]
    assert not stray, stray
