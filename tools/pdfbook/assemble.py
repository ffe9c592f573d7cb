"""One HTML document from the built pages of the site, ready to print.

Nothing here depends on how a page draws its figures or math: the article of each
page is taken as it was built (``<img>`` or inline ``<svg>``, TeX for a script to
typeset or MathML), with the stylesheets and scripts the pages load, so the browser
renders it as it renders the site. What changes for paper:

* each page becomes a ``<section>`` whose id is the page's slug, and every id in it is
  prefixed with that slug, so ids stay unique and links between pages become links
  inside the document; links to files that are not pages of the book keep their text;
* headings are re-levelled to follow ``_toc.yml`` (see toc.py), so the PDF outline
  has the book's parts, chapters and sections;
* relative URLs of images and other resources are made relative to the site's root,
  where the document is served;
* what only works on screen goes: heading anchors (#), the view switch;
  ``<details>`` are opened, and collapsed dropdowns are opened too.
"""

import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from bs4 import BeautifulSoup

from . import exercises

# A hidden input's 显示代码/隐藏代码 toggle goes; the <details> is opened, its code printed.
SCREEN_ONLY = "a.headerlink, .voice-switch, .web-only, details.hide > summary"
HEADING = re.compile(r"^h[1-6]$")
URL_ATTRS = ("src", "poster", "data")  # href is handled separately


@dataclass
class Assets:
    """The stylesheets, style elements and scripts of the pages, each once, in order."""

    stylesheets: list = field(default_factory=list)
    styles: list = field(default_factory=list)
    scripts: list = field(default_factory=list)  # ("src", url) or ("inline", text)

    def add(self, soup, page_path):
        """Add what ``soup`` (a page) loads outside its article; the article keeps its own."""
        for tag in soup.select("link[rel~=stylesheet], style, script"):
            if tag.find_parent("article"):
                continue
            if tag.name == "link":
                _append_once(self.stylesheets, site_url(tag["href"], page_path))
            elif tag.name == "style":
                _append_once(self.styles, tag.get_text())
            elif tag.get("src"):
                _append_once(self.scripts, ("src", site_url(tag["src"], page_path)))
            elif "pagename" not in tag.get_text():  # telling the theme which page this is: moot here
                _append_once(self.scripts, ("inline", tag.get_text()))


def _append_once(items, item):
    if item not in items:
        items.append(item)


def slug(docname):
    return docname.replace("/", "-")


def page_path(docname):
    return f"{docname}.html"


def site_url(url, page):
    """A URL found in the page at ``page`` ("book/ch04/attention.html"), relative to the root."""
    split = urlsplit(url)
    if split.scheme or split.netloc or url.startswith(("#", "data:")) or not split.path:
        return url
    path = posixpath.normpath(posixpath.join(posixpath.dirname(page), split.path))
    return urlunsplit(("", "", path, split.query, split.fragment))


class Book:
    """The pages of the book (toc order) and what it takes to link between them."""

    def __init__(self, html_dir, entries):
        self.html_dir = html_dir
        self.entries = entries
        self.docnames = {e.docname for e in entries if not e.is_part}
        self.assets = Assets()

    def soup(self, docname):
        text = (self.html_dir / page_path(docname)).read_text(encoding="utf-8")
        return BeautifulSoup(text, "html.parser")

    def sections(self):
        """Each entry of the table of contents as a ``<section>`` (a Tag), with its title."""
        out = []
        for entry in self.entries:
            if entry.is_part:
                out.append((entry, part_section(entry), entry.caption))
                continue
            page = self.soup(entry.docname)
            self.assets.add(page, page_path(entry.docname))
            section = self.page_section(page, entry)
            out.append((entry, section, page_title(section)))
        return out

    def page_section(self, page, entry):
        article = page.select_one("article.bd-article") or page.select_one("[role=main]")
        if article is None:
            raise ValueError(f"{page_path(entry.docname)}: no article element in the built page")
        section = BeautifulSoup("", "html.parser").new_tag(
            "section", attrs={"class": "pdf-page", "id": slug(entry.docname)})
        for child in list(article.children):
            section.append(child.extract())
        for tag in section.select(SCREEN_ONLY):
            tag.decompose()
        open_collapsed(section)
        exercises.move_solutions(section)
        relevel(section, entry.level)
        self.localize(section, entry.docname)
        return section

    def localize(self, section, docname):
        """Prefix ids with the page's slug and point every URL at the document or the root."""
        prefix = slug(docname)
        for tag in section.find_all(id=True):
            if not tag.find_parent("svg") and tag is not section:
                tag["id"] = f"{prefix}--{tag['id']}"
        for tag in section.find_all(href=True):
            if tag.name == "a":
                self.link(tag, docname)
        for attr in URL_ATTRS:
            for tag in section.find_all(attrs={attr: True}):
                tag[attr] = site_url(tag[attr], page_path(docname))

    def link(self, anchor, docname):
        href = anchor["href"]
        split = urlsplit(href)
        if split.scheme or split.netloc or href.startswith("mailto:"):
            return
        target = docname if not split.path else site_url(split.path, page_path(docname)).removesuffix(".html")
        if target not in self.docnames:
            anchor.unwrap()  # a file of the site, not a page of the book: keep the text
            return
        anchor["href"] = f"#{slug(target)}--{split.fragment}" if split.fragment else f"#{slug(target)}"


def part_section(entry):
    soup = BeautifulSoup("", "html.parser")
    section = soup.new_tag("section", attrs={"class": "pdf-part", "id": "part-" + "-".join(entry.caption.split())})
    section.append(soup.new_tag("h1", string=entry.caption))
    return section


def page_title(section):
    heading = section.find(HEADING)
    return heading.get_text(" ", strip=True) if heading else ""


def open_collapsed(section):
    for details in section.find_all("details"):
        details["open"] = ""
    for box in section.select(".dropdown, .toggle"):
        box["class"] = [c for c in box["class"] if c not in ("dropdown", "toggle")]


def relevel(section, level):
    """Shift every heading so that the page's h1 sits at ``level`` (h6 at most)."""
    for heading in section.find_all(HEADING):
        heading.name = f"h{min(6, int(heading.name[1]) + level - 1)}"
