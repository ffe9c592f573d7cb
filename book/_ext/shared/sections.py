"""The book's sections: one list, derived from ``manuscript/`` and ``_toc.yml``.

A section is a manuscript ``manuscript/<N>-<name>.txt`` whose page, ``book/ch<NN>/<name>.md``
(``NN`` the chapter, two digits), is listed in the table of contents. The manuscript gives
the number, the title and the figure numbers it prints; the toc gives the pages that
belong to it (the section page and the pages listed under it). Nothing else lists the
sections: ``make page SECTION=N`` writes the page and lists it, and everything that
names a section (the build's numbering, claims, search terms, preface and PDF cover, the
tests) reads :func:`sections`.
"""

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml

from book._ext.shared import manuscript

ROOT = Path(__file__).resolve().parents[3]
MANUSCRIPTS = "manuscript"
TOC = "_toc.yml"
CONFIG = "_config.yml"


def number_key(number):
    """``"4.10"`` -> ``(4, 10)``: sections sort by their numbers, not as text."""
    return tuple(int(part) for part in number.split("."))


@dataclass(frozen=True)
class Section:
    """One section of the book: its manuscript, its page and the pages listed under it."""

    number: str
    slug: str
    manuscript: Path
    companions: tuple = ()
    text: manuscript.Manuscript = field(default=None, repr=False, compare=False)

    @property
    def chapter(self):
        return int(self.number.split(".")[0])

    @property
    def page(self):
        """The section page's docname: ``book/ch04/attention``."""
        return page_of(self.number, self.slug)

    @property
    def label(self):
        """The page's label, ``sec-attention``."""
        return f"sec-{self.slug}"

    @property
    def title(self):
        return self.text.title

    @property
    def heading(self):
        """``4.5 注意力机制：让张量互相打分``: the page's title."""
        return f"{self.number} {self.title}"

    @property
    def subject(self):
        """What the section is about, as its title names it first: 注意力机制."""
        return self.title.split("：", 1)[0]

    @property
    def figures(self):
        """``{number: caption}`` of the figures its manuscript prints."""
        return self.text.figures

    @property
    def pages(self):
        """Its page and the pages under it, in toc order."""
        return (self.page, *self.companions)


def page_of(number, slug):
    return f"book/ch{int(number.split('.')[0]):02d}/{slug}"


def manuscript_files(root=ROOT):
    """``{number: path}`` of every manuscript file; two files for one number is an error."""
    found = {}
    for path in sorted((Path(root) / MANUSCRIPTS).glob("*.txt")):
        match = manuscript.FILE_NAME.match(path.name)
        if not match:
            raise manuscript.ManuscriptError(f"{path}: 原稿文件名应当是“节号-英文名.txt”，例如 4.5-attention.txt")
        if match["number"] in found:
            raise manuscript.ManuscriptError(f"第 {match['number']} 节有两份原稿：{found[match['number']].name} 与 {path.name}")
        found[match["number"]] = path
    return found


def toc_tree(root=ROOT):
    """``{docname: [docnames listed under it]}`` for every page of ``_toc.yml``, in order."""
    tree = {}

    def walk(entries, parent):
        for entry in entries or []:
            if "file" in entry:
                doc = str(Path(entry["file"]).with_suffix("")).replace("\\", "/")
                tree.setdefault(parent, []).append(doc)
                tree.setdefault(doc, [])
                walk(entry.get("sections"), doc)
            walk(entry.get("chapters"), parent)
            walk(entry.get("parts"), parent)

    data = yaml.safe_load((Path(root) / TOC).read_text(encoding="utf-8"))
    tree[data["root"]] = []
    walk(data.get("chapters"), data["root"])
    walk(data.get("parts"), data["root"])
    return tree


def _descendants(tree, doc):
    for child in tree.get(doc, []):
        yield child
        yield from _descendants(tree, child)


class Book:
    """The sections of the book at ``root``, and the manuscripts not in it yet."""

    def __init__(self, root=ROOT):
        self.root = Path(root)

    @cached_property
    def files(self):
        return manuscript_files(self.root) if (self.root / MANUSCRIPTS).is_dir() else {}

    @cached_property
    def tree(self):
        return toc_tree(self.root)

    @cached_property
    def sections(self):
        """Every section, by number: a manuscript whose page is in the toc."""
        if not self.files:
            return ()
        listed = []
        for number in sorted(self.files, key=number_key):
            path = self.files[number]
            slug = manuscript.FILE_NAME.match(path.name)["slug"]
            if page_of(number, slug) in self.tree:
                listed.append(Section(number, slug, path.relative_to(self.root),
                                      tuple(_descendants(self.tree, page_of(number, slug))),
                                      manuscript.read(path)))
        return tuple(listed)

    @property
    def unlisted(self):
        """Manuscripts whose page is not in the toc yet (``make page`` not run)."""
        listed = {section.number for section in self.sections}
        return {n: path for n, path in self.files.items() if n not in listed}

    def file(self, number):
        """The manuscript file of section ``number``, or a clear error."""
        if number not in self.files:
            raise manuscript.ManuscriptError(f"没有第 {number} 节的原稿：{MANUSCRIPTS}/ 里没有 {number}-*.txt")
        return self.files[number]

    def section(self, number):
        for section in self.sections:
            if section.number == number:
                return section
        raise KeyError(f"第 {number} 节不在本书里（{TOC} 没有列出它的页面）")

    @cached_property
    def by_page(self):
        """``{docname: Section}`` for every section page and the pages under it."""
        return {page: section for section in self.sections for page in section.pages}

    def of(self, docname):
        """The section a page belongs to, or None (the preface, the appendices)."""
        return self.by_page.get(docname)

    @cached_property
    def name(self):
        """The printed book's name: ``_config.yml``'s ``title``."""
        return yaml.safe_load((self.root / CONFIG).read_text(encoding="utf-8"))["title"]

    @property
    def title(self):
        """The site's title: the section's title while the book has one, else the book's name."""
        return self.sections[0].title if len(self.sections) == 1 else self.name

    @property
    def byline(self):
        """The line under the title: ``TensorFlow 深度学习教程 · 第 4.5 节``."""
        return f"{self.name} · 第 {numbers(self.sections)} 节" if self.sections else self.name


def numbers(sections):
    """``4.5``, ``4.5、4.6``: the numbers of ``sections`` as a sentence writes them."""
    return "、".join(section.number for section in sections)


def next_sentence(book, docname):
    """Where the reader of the section page ``docname`` goes next, as a MyST sentence: the next
    section the site has (a link to its page), or that the site has no next one and which it has."""
    section = book.of(docname)
    later = book.sections[book.sections.index(section) + 1:] if section else ()
    if later:
        return f"本站的下一节是《{{ref}}`{later[0].label}`》。"
    return f"下一节不在本站：这个网站只收录第 {numbers(book.sections)} 节。"


def for_app(app):
    """The :class:`Book` of a Sphinx application's source folder, read once per build."""
    if getattr(app, "book_sections", None) is None:
        app.book_sections = Book(app.srcdir)
    return app.book_sections
