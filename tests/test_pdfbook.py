"""Unit tests of tools/pdfbook, the PDF's assembly, on a tiny made-up site (no build)."""

import pytest

from buildfiles import ROOT
from tools.pdfbook import assemble, contents, document, exercises, toc

PAGE = """<html><head><link rel="stylesheet" href="../_static/a.css?v=1"><script src="../_static/m.js"></script>
<script>DOCUMENTATION_OPTIONS.pagename = '{name}';</script><script>window.X = 1;</script></head>
<body><div class="voice-switch">只看原文</div><article class="bd-article"><section id="top">
<h1>{title}<a class="headerlink" href="#top">#</a></h1>
<p id="p1">见 <a class="reference internal" href="b.html#sec-x">B 的一节</a>、<a href="#p1">本段</a>、
<a href="../genindex.html">索引</a>和 <a href="https://example.org/">外链</a>。</p>
<img src="../_images/fig.png"><svg><style>*{{stroke-linejoin:round}}</style><clipPath id="clip"></clipPath></svg>
<section id="sec-x"><h2>小节</h2>{body}</section></section></article></body></html>"""
EXERCISE = """<div class="exercise admonition" id="ex-a"><p class="admonition-title">练习 4.5.1</p></div>
<div class="solution dropdown admonition"><p class="admonition-title">解答 练习 4.5.1</p></div>
<div class="exercise admonition" id="ex-b"><p class="admonition-title">练习 4.5.2</p></div>"""


@pytest.fixture
def site(tmp_path):
    (tmp_path / "toc.yml").write_text(
        "format: jb-book\nroot: book/a\nparts:\n  - caption: 第 4 章\n    chapters:\n"
        "      - file: book/b\n        sections:\n          - file: book/c.md\n", encoding="utf-8")
    (tmp_path / "book").mkdir()
    for name, title, body in [("a", "前言", ""), ("b", "正文", ""), ("c", "练习", EXERCISE)]:
        (tmp_path / "book" / f"{name}.html").write_text(PAGE.format(name=name, title=title, body=body), encoding="utf-8")
    return tmp_path


def sections(site):
    book = assemble.Book(site, toc.entries(site / "toc.yml"))
    return book, {entry.docname or entry.caption: (section, title) for entry, section, title in book.sections()}


def test_toc_levels_follow_parts_chapters_and_sections():
    levels = [(e.docname or e.caption, e.level) for e in toc.entries(ROOT / "_toc.yml")]
    assert levels[:4] == [("book/index", 1), ("第 4 章", 1), ("book/ch04/attention", 2), ("book/ch04/mechanism", 3)]
    assert ("book/glossary", 2) in levels


def test_headings_follow_the_toc(site):
    _, found = sections(site)
    assert [found[k][0].find(["h1", "h2", "h3"]).name for k in ("book/a", "第 4 章", "book/b", "book/c")] == \
        ["h1", "h1", "h2", "h3"]
    assert found["book/c"][0].select_one("#sec-x, [id$='--sec-x']").find("h4")
    assert found["book/b"][1] == "正文"


def test_ids_are_prefixed_and_links_stay_inside_the_document(site):
    _, found = sections(site)
    page = found["book/b"][0]
    assert page["id"] == "book-b" and page.select_one("#book-b--p1")
    hrefs = [a.get("href") for a in page.find_all("a")]
    assert hrefs == ["#book-b--sec-x", "#book-b--p1", "https://example.org/"]  # 索引 is text now
    assert "索引" in page.get_text() and page.select_one("svg clipPath")["id"] == "clip"
    assert page.find("img")["src"] == "_images/fig.png"


def test_screen_only_controls_go_and_assets_are_gathered_once(site):
    book, found = sections(site)
    assert not found["book/a"][0].select(".headerlink, .voice-switch")
    assert book.assets.stylesheets == ["_static/a.css?v=1"]
    assert book.assets.scripts == [("src", "_static/m.js"), ("inline", "window.X = 1;")]
    assert book.assets.styles == [] and found["book/a"][0].select_one("svg style")  # a figure keeps its own


def test_solutions_move_after_the_last_exercise(site):
    _, found = sections(site)
    page = found["book/c"][0]
    boxes = [box["class"][0] for box in page.select("div.exercise, div.solution")]
    assert boxes == ["exercise", "exercise", "solution"]
    closing = page.select_one("section.pdf-solutions")
    assert closing.find(["h2", "h3", "h4"]).get_text() == exercises.HEADING
    assert "dropdown" not in page.select_one("div.solution")["class"]


def test_site_urls_resolve_against_the_page():
    assert assemble.site_url("../../_images/x.png?v=2", "book/ch04/attention.html") == "_images/x.png?v=2"
    assert assemble.site_url("https://a.b/c.png", "book/x.html") == "https://a.b/c.png"
    assert assemble.site_url("data:image/png;base64,AA", "book/x.html") == "data:image/png;base64,AA"


def test_contents_page_has_a_number_slot_for_each_line():
    html = contents.section([("book-a", "前言", 1), ("part-第-4-章", "第 4 章", 1)])
    assert html.count(contents.PLACEHOLDER) == 2 and 'href="#book-a"' in html


def test_document_prints_the_light_theme_and_the_editors_layer_after_the_sites_styles(site):
    book, found = sections(site)
    html = document.render("书名", book.assets, [str(section) for section, _ in found.values()])
    opening = html.split("<head>", 1)[0]
    assert 'data-theme="light"' in opening and 'data-voice="lesson"' in opening
    assert html.index('href="_static/a.css?v=1"') < html.index("@page") < html.index('src="_static/m.js"')


def test_the_colophon_names_the_same_exceptions_as_the_preface():
    """Every number comes from code that ran, except those the preface lists: the
    colophon must not promise more than the site's preface does."""
    from tools.pdfbook import colophon

    text = colophon.section([])
    preface = (ROOT / "book" / "index.md").read_text(encoding="utf-8")
    for exception in ("手写的小算例", "结果文件里的数", "论断所依据的测试结果也可能沿用上一次运行",
                      "构建沿用执行缓存里上一次运行的输出"):
        assert exception in preface, exception
        assert exception in text, exception
