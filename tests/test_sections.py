"""The section list (book/_ext/shared/sections.py) and what reads it, on small books in a temporary folder.

A section is a manuscript whose page the toc lists. From that one list come: the numbers of
the editor's figures, tables, listings and exercises (by section), the manuscripts' printed
figure numbers, the section a claim belongs to, the search terms kept whole, the site's
title and byline, the preface's words and a section page's closing pointer.
"""

import shutil

import pytest

from book._ext.config.search_terms import section_terms
from book._ext.config.section_list import substitutions
from book._ext.reading.numbering import labels_by_section
from book._ext.shared import manuscript
from book._ext.shared.claim_checks import claim_sections
from book._ext.shared.sections import Book, next_sentence, number_key
from buildfiles import ROOT
from tools.page import toc

GRAPHS = ROOT / "tests" / "manuscripts" / "4.6-graphs.txt"
TOC = """format: jb-book
root: book/index
parts:
  - caption: 第 4 章
    chapters:
      - file: book/ch04/attention
        sections:
          - file: book/ch04/mechanism
  - caption: 附录
    chapters:
      - file: book/glossary
"""


@pytest.fixture
def book(tmp_path):
    """4.5 listed with one companion page, and the test manuscript 4.6 not yet listed."""
    (tmp_path / "manuscript").mkdir()
    shutil.copy(ROOT / "manuscript" / "4.5-attention.txt", tmp_path / "manuscript")
    shutil.copy(GRAPHS, tmp_path / "manuscript")
    shutil.copy(ROOT / "_config.yml", tmp_path)
    (tmp_path / "_toc.yml").write_text(TOC, encoding="utf-8")
    return tmp_path


def with_graphs(root):
    """The book at ``root`` once 4.6's page is listed (as `make page` lists it)."""
    path = root / "_toc.yml"
    path.write_text(toc.add(path.read_text(encoding="utf-8"), "book/ch04/graphs", "4.6",
                            {"book/ch04/attention": "4.5"}.get), encoding="utf-8")
    return Book(root)


def test_the_books_sections_are_derived_from_the_manuscripts_and_the_toc():
    (section,) = Book(ROOT).sections
    assert (section.number, section.page, section.label) == ("4.5", "book/ch04/attention", "sec-attention")
    assert (section.title, section.subject) == ("注意力机制：让张量互相打分", "注意力机制")
    assert section.figures == {20: "注意力打分的信号流"}
    assert "book/ch04/exercises" in section.companions


def test_a_manuscript_is_a_section_once_its_page_is_listed(book):
    assert [s.number for s in Book(book).sections] == ["4.5"]
    assert list(Book(book).unlisted) == ["4.6"]
    listed = with_graphs(book)
    assert [s.number for s in listed.sections] == ["4.5", "4.6"] and not listed.unlisted
    assert listed.of("book/ch04/mechanism").number == "4.5"
    assert listed.of("book/ch04/graphs").number == "4.6"
    assert listed.of("book/glossary") is None


def test_two_manuscripts_for_one_number_is_an_error(book):
    shutil.copy(GRAPHS, book / "manuscript" / "4.6-other.txt")
    with pytest.raises(manuscript.ManuscriptError, match="两份原稿"):
        Book(book).sections


def test_sections_sort_by_number_not_as_text():
    assert sorted(["4.10", "4.9", "10.1"], key=number_key) == ["4.9", "4.10", "10.1"]


def test_the_title_and_byline_name_the_sections(book):
    one = Book(book)
    assert (one.title, one.byline) == ("注意力机制：让张量互相打分", "TensorFlow 深度学习教程 · 第 4.5 节")
    two = with_graphs(book)
    assert (two.title, two.byline) == ("TensorFlow 深度学习教程", "TensorFlow 深度学习教程 · 第 4.5、4.6 节")


def test_the_prefaces_words_follow_the_section_list(book):
    assert substitutions(Book(book)) == {
        "section_numbers": "4.5", "sections_named": "第 4.5 节“注意力机制：让张量互相打分”",
        "section_pages": "《{ref}`sec-attention`》", "first_section": "《{ref}`sec-attention`》"}
    two = substitutions(with_graphs(book))
    assert two["section_numbers"] == "4.5、4.6"
    assert two["sections_named"] == "第 4.5 节“注意力机制：让张量互相打分”与第 4.6 节“图上的消息传递：让邻居互相汇报”"
    assert two["section_pages"] == "《{ref}`sec-attention`》、《{ref}`sec-graphs`》"


def test_the_closing_pointer_follows_the_section_list(book):
    assert next_sentence(Book(book), "book/ch04/attention") == "下一节不在本站：这个网站只收录第 4.5 节。"
    two = with_graphs(book)
    assert next_sentence(two, "book/ch04/attention") == "本站的下一节是《{ref}`sec-graphs`》。"
    assert next_sentence(two, "book/ch04/graphs") == "下一节不在本站：这个网站只收录第 4.5、4.6 节。"


def test_numbers_are_counted_within_each_section(book):
    """Sphinx numbers book-wide; the book counts again by section, and a manuscript's figure
    (its caption one of the manuscript's figure lines, on the section page) keeps its print number."""
    two = with_graphs(book)
    sphinx = {
        "book/ch04/attention": {"figure": {"fig-flow": (1,), "fig-fruit": (2,)}, "table": {"t": (1,)}},
        "book/ch04/mechanism": {"figure": {"fig-m": (3,)}, "exercise": {"ex-a": (1,), "ex-b": (2,)}},
        "book/ch04/graphs": {"figure": {"fig-21": (4,), "fig-g": (5,)}, "table": {"t2": (2,)},
                             "exercise": {"ex-c": (3,)}},
        "book/glossary": {"figure": {"fig-x": (6,)}},
    }
    captions = {"book/ch04/attention": {"fig-flow": "注意力打分的信号流", "fig-fruit": "水果摊"},
                "book/ch04/mechanism": {"fig-m": "注意力打分的信号流"},  # not the section page: the editor's
                "book/ch04/graphs": {"fig-21": "一步消息传递的信号流", "fig-g": "另一张"}}
    labels = labels_by_section(two, sphinx, captions)
    assert labels["book/ch04/attention", "figure", "fig-flow"] == ("图 20",)
    assert labels["book/ch04/attention", "figure", "fig-fruit"] == ("编者图 4.5-1",)
    assert labels["book/ch04/mechanism", "figure", "fig-m"] == ("编者图 4.5-2",)
    assert labels["book/ch04/graphs", "figure", "fig-21"] == ("图 21",)
    assert labels["book/ch04/graphs", "figure", "fig-g"] == ("编者图 4.6-1",)
    assert labels["book/ch04/graphs", "table", "t2"] == ("编者表 4.6-1",)
    assert labels["book/ch04/mechanism", "exercise", "ex-b"] == (4, 5, 2)
    assert labels["book/ch04/graphs", "exercise", "ex-c"] == (4, 6, 1)
    assert labels["book/glossary", "figure", "fig-x"] == ("编者图 1",)


def test_a_claim_belongs_to_the_section_whose_manuscript_quotes_it(book):
    sections = with_graphs(book).sections
    claims = [{"id": "a", "quote": "一百万对的打分表"}, {"id": "b", "quote": "归一化让汇报变成平均"},
              {"id": "c", "quote": "作者删掉的一句"}, {"id": "d", "quote": "下节", "section": "4.6"},
              {"id": "e", "quote": "本节要点回顾"}, {"id": "f", "quote": "一百万对", "section": "4.6"}]
    owners, errors = claim_sections(claims, sections)
    assert owners == {"a": "4.5", "b": "4.6", "d": "4.6"}
    assert [e.split(":")[0] for e in errors] == ["claim 'c'", "claim 'e'", "claim 'f'"]
    assert "no section's manuscript" in errors[0] and "4.5, 4.6" in errors[1]


def test_each_sections_subject_and_headings_are_search_terms(book):
    terms = section_terms(with_graphs(book).sections)
    for term in ("注意力机制", "让张量互相打分", "手写一个多头注意力层", "顺序传递", "本节要点回顾",
                 "图上的消息传递", "让邻居互相汇报", "一步消息传递"):
        assert term in terms, term
    assert all(len(term) >= 2 and "：" not in term and "“" not in term for term in terms)
