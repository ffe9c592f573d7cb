"""Checks of the printed book, _build/pdf/attention-book.pdf, read back with poppler.

The PDF is made by `make pdf` (tools/pdf.py) from the built site. These tests read the
PDF itself: its text (pdftotext), the position of every word on every page
(pdftotext -bbox), its fonts (pdffonts), its outline (pypdf) and two pages rendered to
PNG (pdftoppm), which go to test-artifacts/pdf/ for a person to look at.

Without poppler-utils these tests are skipped locally, and fail when CI is set.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import unicodedata
from functools import cache
from html import unescape

import pytest
import yaml
from PIL import Image
from pypdf import PdfReader

import section_texts
from buildfiles import BUILD, HTML, ROOT, soup

pytestmark = pytest.mark.pdf

PDF = BUILD / "pdf" / "attention-book.pdf"
ARTIFACTS = ROOT / "test-artifacts" / "pdf"
MM = 72 / 25.4  # PDF points per millimetre
SIDE_MARGIN_MM = 20  # print.css: @page margin, left and right
FOOT_MM = 22  # print.css: @page bottom margin, where the page number is
BODY_PT = 10.5  # print.css: the prose's font size
EDITORIAL_VIOLET = (0x6D, 0x28, 0xD9)  # book.css: --editorial-color
SECTION_TITLE = "4.5 注意力机制：让张量互相打分"


def tool(name):
    path = shutil.which(name)
    if path is None:
        message = f"{name} not installed: apt-get install poppler-utils"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set, so the PDF tests must run, not skip)", pytrace=False)
        pytest.skip(f"{message}; the PDF tests run on CI")
    return path


@pytest.fixture(scope="module", autouse=True)
def _needs_pdf():
    if not PDF.is_file():
        pytest.fail("No _build/pdf/attention-book.pdf: run `make pdf` (or `make test`, which prints it first).")


def pdftotext(*args, first=None):
    pages = ["-f", str(first), "-l", str(first)] if first else []
    return subprocess.run([tool("pdftotext"), "-enc", "UTF-8", *args, *pages, str(PDF), "-"],
                          capture_output=True, text=True, check=True).stdout


@cache
def pages_text():
    """The text of each page above its foot, so without the page number."""
    width, height = PdfReader(PDF).pages[0].mediabox.upper_right
    body = ["-x", "0", "-y", "0", "-W", str(int(width)), "-H", str(int(float(height) - FOOT_MM * MM))]
    return pdftotext(*body).split("\f")[:-1]


def squeezed(text):
    """Text compared with the manuscript and the site: NFKC, no whitespace, quote marks or
    hyphens (pdftotext joins a word hyphenated at the end of a line)."""
    return section_texts.normalize(unicodedata.normalize("NFKC", text)).replace("-", "")


@cache
def book_text():
    return squeezed("".join(pages_text()))


@cache
def book_text_in_drawing_order():
    """The text in the order it was drawn (pdftotext -raw): a wrapped code or output line
    reads back whole even where its continuations line up like a column of their own."""
    return squeezed(pdftotext("-raw"))


@cache
def outline():
    """(depth, title, 1-based page) of every outline entry, in order."""
    reader = PdfReader(PDF)
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, re.sub(r"\s+", " ", item.title).strip(), reader.get_destination_page_number(item) + 1))

    walk(reader.outline, 0)
    return out


def toc_pages():
    """(docname, depth in _toc.yml: 0 root or chapter outside a part, 1 chapter, 2 section)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = [(toc["root"], 0)]

    def walk(items, depth):
        for item in items:
            found.append((item["file"], depth))
            walk(item.get("sections", []), depth + 1)

    for part in toc.get("parts", []):
        walk(part.get("chapters", []), 1 if part.get("caption") else 0)
    return found


def page_title(docname):
    heading = soup(docname).select_one("article h1")
    for link in heading.select("a.headerlink"):
        link.decompose()
    return re.sub(r"\s+", " ", heading.get_text(" ", strip=True))


def first_page_with(text):
    target = squeezed(text)
    return next(i + 1 for i, page in enumerate(pages_text()) if target in squeezed(page))


def render(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    stem = ARTIFACTS / name
    subprocess.run([tool("pdftoppm"), "-png", "-r", "100", "-singlefile", "-f", str(page), "-l", str(page),
                    str(PDF), str(stem)], check=True)
    return stem.with_suffix(".png")


# --- text -------------------------------------------------------------------------------


def test_manuscript_prose_is_in_the_text():
    sentences = [squeezed(s) for section in section_texts.SECTIONS for s in section_texts.prose_sentences(section)]
    missing = [s for s in sentences if s not in book_text()]
    coverage = 1 - len(missing) / len(sentences)
    print(f"manuscript prose sentences found in the PDF text: {coverage:.1%} of {len(sentences)}")
    assert len(sentences) > 20
    assert coverage >= 0.95, f"{coverage:.1%} found; missing:\n" + "\n".join(missing[:20])


def test_text_is_simplified_chinese_and_selectable():
    text = "".join(pages_text())
    assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 20_000
    assert "注意力机制" in text and "機制" not in text  # simplified forms, extracted as text


def test_math_is_typeset_not_raw_tex():
    text = "".join(pages_text())
    raw = re.findall(r"\\(?:frac|sqrt|mathrm|text|left|right|begin|cdot|top|\(|\[)|\$\$", text)
    assert not raw, raw[:10]
    assert soup("book/ch04/attention").select(".math, math"), "the section has math; the test would be empty"


# --- figures, code, editorial marks, exercises -------------------------------------------


def site_figures():
    """(number, [caption text between formulas]) of every numbered figure and table of the book."""
    found = []
    for docname, _ in toc_pages():
        for number in soup(docname).select("figure .caption-number, table caption .caption-number"):
            caption, label = number.find_parent(["figcaption", "caption"]), number.get_text(" ", strip=True)
            for tag in caption.select("a.headerlink, .caption-number"):
                tag.decompose()
            for math in caption.select(".math, math"):
                math.replace_with("\0")
            found.append((label, [squeezed(t) for t in caption.get_text().split("\0") if squeezed(t)]))
    return found


def test_every_figure_number_and_caption_of_the_site_is_printed():
    figures = site_figures()
    assert ("图 20" in [n for n, _ in figures]) and any(n.startswith("编者图 4.5-") for n, _ in figures)
    missing = [(n, [t for t in texts if t not in book_text()]) for n, texts in figures
               if squeezed(n) not in book_text() or any(t not in book_text() for t in texts)]
    assert not missing, missing


def site_code_lines():
    """Every non-blank line of every code block and text output on the pages of the book,
    as the PDF carries them: in the default view, the checking layer left out."""
    lines = []
    for docname, _ in toc_pages():
        for pre in soup(docname).select("article pre"):
            if pre.find_parent(class_="editorial-check"):
                continue
            lines += [squeezed(line) for line in unescape(pre.get_text()).splitlines() if squeezed(line)]
    return lines


def test_every_code_line_is_printed_whole():
    lines = site_code_lines()
    missing = [line for line in lines if line not in book_text() and line not in book_text_in_drawing_order()]
    assert len(lines) > 500
    # A wrapped line that also breaks across two pages reads back with the page number
    # inside it; a handful of those are allowed, a cut line is not.
    assert len(missing) <= len(lines) // 200, missing[:20]


@cache
def word_boxes():
    """(page, page width, page height, xMin, xMax, yMin, word) for every word of the PDF."""
    boxes = []
    pages = re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', pdftotext("-bbox"), re.S)
    for number, (width, height, body) in enumerate(pages, start=1):
        for x_min, y_min, x_max, word in re.findall(
                r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">(.*?)</word>', body):
            boxes.append((number, float(width), float(height), float(x_min), float(x_max), float(y_min), unescape(word)))
    return boxes


def test_no_text_runs_past_the_margins():
    """Every word on every page, code lines included, lies inside the text column."""
    boxes = word_boxes()
    assert len(boxes) > 5_000
    left, tolerance = SIDE_MARGIN_MM * MM, 2 * MM
    outside = [(page, round(x_max - (width - left), 1), word) for page, width, _, x_min, x_max, _, word in boxes
               if x_max > width - left + tolerance or x_min < left - tolerance]
    assert not outside, f"words past the margin (page, points past the column, word): {outside[:20]}"


def test_pages_are_printed_at_full_size():
    """Chromium silently shrinks the whole book when anything is too wide for the page,
    and then no word passes the margin; the prose's size shows it. A Chinese character
    is 1 em wide, so the prose's characters are as wide as print.css's body size."""
    widths = [(x_max - x_min) / len(word) for _, _, _, x_min, x_max, _, word in word_boxes()
              if len(word) >= 6 and re.fullmatch(r"[\u4e00-\u9fff]+", word)]
    assert len(widths) > 50
    assert abs(statistics.median(widths) - BODY_PT) < 0.2, f"prose printed at {statistics.median(widths):.2f} pt"


def test_editorial_labels_are_printed():
    labels = sum(len(soup(d).select(".editorial-label")) for d, _ in toc_pages())
    assert "".join(pages_text()).count("编者") >= labels > 20


def test_solutions_follow_all_the_exercises():
    start = dict((title, page) for _, title, page in outline())[page_title("book/ch04/exercises")]
    text = squeezed("".join(pages_text()[start - 1:]))
    numbers = [n.get_text(strip=True) for n in soup("book/ch04/exercises").select("div.exercise .caption-number")]
    last_question = text.index(squeezed(numbers[-1]))
    closing = text.index("练习解答")
    assert last_question < closing
    solutions = re.findall(r"解答练习(4\.5\.\d+)", text)
    assert solutions and all(text.index(f"解答练习{n}") > closing for n in solutions)
    assert len(solutions) == len(soup("book/ch04/exercises").select("div.solution"))


# --- fonts, structure -----------------------------------------------------------------------


def test_every_font_is_embedded():
    out = subprocess.run([tool("pdffonts"), str(PDF)], capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines()[2:] if line.strip()]
    not_embedded = [row for row in rows if row.split()[-5] != "yes"]
    assert rows and not not_embedded, not_embedded


@cache
def pdffonts():
    """pdffonts' table: a dict per font, keyed by the column names (name, type, emb, uni, ...)."""
    lines = subprocess.run([tool("pdffonts"), str(PDF)], capture_output=True, text=True, check=True).stdout.splitlines()
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    spans[-1] = (spans[-1][0], None)
    columns = [lines[0][a:b].strip() for a, b in spans]
    return [{c: line[a:b].strip() for c, (a, b) in zip(columns, spans)} for line in lines[2:] if line.strip()]


def cjk_by_font(page):
    """{(PostScript name without the subset tag, PDF font type): the CJK characters drawn
    with that font} on ``page`` (1-based), read with pypdf."""
    found = {}

    def visit(text, cm, tm, font, size):
        chars = "".join(re.findall(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", text))
        if chars:
            key = font_key(font)
            found[key] = found.get(key, "") + chars

    PdfReader(PDF).pages[page - 1].extract_text(visitor_text=visit)
    return found


def font_key(font):
    if font is None:
        return ("?", "?")
    if font.get("/Subtype") == "/Type0":
        font = font["/DescendantFonts"][0].get_object()  # the CIDFont: CIDFontType2 is TrueType
    name = font.get("/BaseFont") or font.get("/FontDescriptor", {}).get("/FontName", "")
    return (str(name).lstrip("/").split("+")[-1], str(font["/Subtype"]).lstrip("/"))


# print.css: prose (and its bold), captions and page numbers, headings, code.
NOTO_CJK_FACES = {"NotoSerifCJKsc-Regular", "NotoSerifCJKsc-Bold", "NotoSansCJKsc-Regular", "NotoSansCJKsc-Bold",
                  "NotoSansMonoCJKsc-Regular"}


def test_chinese_is_set_in_embedded_noto_cjk_truetype_fonts():
    """Skia cannot embed the installed Noto CJK fonts (CFF outlines) and draws their glyphs
    as nameless Type 3 fonts; the print uses TrueType subsets of them (tools/pdfbook/fonts.py),
    which the PDF embeds as CID TrueType fonts that keep their names."""
    cjk = {row["name"].split("+")[-1]: row for row in pdffonts() if "CJK" in row["name"]}
    assert NOTO_CJK_FACES <= set(cjk), sorted(cjk)
    wrong = [row for row in cjk.values() if (row["type"], row["emb"], row["uni"]) != ("CID TrueType", "yes", "yes")]
    assert not wrong, wrong
    # The section's first page: the title in bold Hei, the prose in Song, all of it in those fonts.
    drawn = cjk_by_font(dict((t, p) for _, t, p in outline())[SECTION_TITLE])
    assert all(name in cjk and kind == "CIDFontType2" for name, kind in drawn), sorted(drawn)
    assert SECTION_TITLE.split(" ", 1)[1] in drawn[("NotoSansCJKsc-Bold", "CIDFontType2")]
    assert max(drawn, key=lambda key: len(drawn[key])) == ("NotoSerifCJKsc-Regular", "CIDFontType2")


def type3_fonts():
    """{object number: (FontDescriptor's FontName, [glyph procedures])} of every Type 3 font
    the pages use, in their own resources or in those of the forms they draw."""
    found, seen = {}, set()

    def walk(resources):
        resources = resources.get_object() if resources else {}
        for ref in list(resources.get("/Font", {}).values()) + list(resources.get("/XObject", {}).values()):
            if ref.idnum in seen:
                continue
            seen.add(ref.idnum)
            obj = ref.get_object()
            if obj.get("/Subtype") == "/Type3":
                procs = [p.get_object().get_data().decode("latin-1") for p in obj["/CharProcs"].values()]
                found[ref.idnum] = (str(obj["/FontDescriptor"]["/FontName"]).split("+")[-1], procs)
            if obj.get("/Subtype") in ("/Type3", "/Form"):
                walk(obj.get("/Resources"))

    for page in PdfReader(PDF).pages:
        walk(page.get("/Resources"))
    return found


def test_no_type3_font_but_the_colour_emoji():
    """A Type 3 font is what Skia makes of a font it cannot embed. Only the colour emoji
    (💡, ⚠️) may be one: Noto Color Emoji has bitmaps (CBDT), no outlines, so Skia draws
    each emoji as an image in a Type 3 font, whatever the print does. Every glyph of such
    a font must be an image, or nothing (.notdef): no outline drawn as a procedure."""
    fonts = type3_fonts()
    assert len(fonts) == sum(row["type"] == "Type 3" for row in pdffonts())
    others = sorted({name for name, _ in fonts.values() if name != "NotoColorEmoji"})
    assert not others, f"Type 3 fonts other than the colour emoji: {others}"
    drawn = [proc for _, procs in fonts.values() for proc in procs if proc.split("\n", 1)[1].strip()]
    outlines = [proc for proc in drawn if not re.fullmatch(r"[^\n]*d[01]\n[-\d. ]+cm\n/\w+ Do\n?", proc)]
    assert not outlines, outlines[:3]


def test_outline_follows_the_table_of_contents():
    entries = outline()
    depth_of = {}
    for depth, title, _ in entries:
        depth_of.setdefault(title, depth)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        assert depth_of.get(part["caption"]) == 0, part["caption"]
    for docname, depth in toc_pages():
        assert depth_of.get(page_title(docname)) == depth, (docname, page_title(docname), depth_of)
    order = [page_title(d) for d, _ in toc_pages()]
    assert [t for _, t, _ in entries if t in order] == order


def test_contents_page_gives_each_page_its_page_number():
    contents = pdftotext("-layout", first=first_page_with("目录"))
    numbers = {squeezed(m[0]): int(m[1]) for m in re.findall(r"^\s*(\S.*?)\s+(\d+)\s*$", contents, re.M)}
    pages = {title: page for _, title, page in outline()}
    for docname, _ in toc_pages():
        title = page_title(docname)
        assert numbers.get(squeezed(title)) == pages[title], (title, numbers, pages[title])


def test_pages_are_numbered_at_the_foot():
    pages = len(pages_text())
    feet = {page: word for page, _, height, _, _, y_min, word in word_boxes() if y_min > height - FOOT_MM * MM}
    assert pages > 20
    assert all(feet.get(n) == str(n) for n in range(2, pages + 1)), feet  # the cover has none


def test_colophon_gives_build_machine_commit_and_version():
    import tomllib

    version = tomllib.loads((ROOT / "code" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    colophon = squeezed(pages_text()[first_page_with("版本说明") - 1])
    for pattern in [r"代码执行\d{8}\d\d:\d\dUTC", r"PDF生成\d{8}\d\d:\d\dUTC", rf"机器{os.cpu_count()}个CPU核",
                    r"TensorFlow\d+\.\d+", r"源码提交[0-9a-f]{12}",
                    rf"attnbook{re.escape(version)}"]:
        assert re.search(pattern, colophon), (pattern, colophon)


def test_the_pdf_and_the_offline_zip_come_from_the_sites_build():
    """The preface says the PDF and the zip are the site's build: the colophon names the
    commit the site's pages cite, and the zip holds the site's pages byte for byte."""
    import zipfile

    cited = re.search(r"提交 ([0-9a-f]{12}(-dirty)?)", soup("book/ch04/attention").get_text())
    colophon = squeezed(pages_text()[first_page_with("版本说明") - 1])
    printed = f"{cited.group(1)[:12]}（工作区另有未提交的改动）" if cited.group(2) else cited.group(1)
    assert squeezed(f"源码提交{printed}") in colophon, (cited.group(1), colophon)
    with zipfile.ZipFile(BUILD / "attention-book-html.zip") as zipped:
        for page in ("book/claims.html", "book/ch04/cost.html", "book/ch04/attention.html"):
            name = next(n for n in zipped.namelist() if n.endswith(page))
            assert zipped.read(name) == (HTML / page).read_bytes(), page


def test_site_offers_the_pdf():
    assert (HTML / PDF.name).read_bytes() == PDF.read_bytes(), "make pdf copies the PDF next to the site"
    for docname, _ in toc_pages():
        page = soup(docname)
        links = [a["href"] for a in page.select("a[href$='attention-book.pdf']")]
        assert links, docname
        depth = docname.count("/")
        assert links[0] == "../" * depth + PDF.name, (docname, links)


# --- two pages, looked at -------------------------------------------------------------------


def violet_share(png):
    """The share of pixels in the editor's violet (the rule and the 「编者」 label)."""
    image = Image.open(png).convert("RGB")
    pixels = list(image.get_flattened_data())
    near = sum(1 for r, g, b in pixels if abs(r - EDITORIAL_VIOLET[0]) + abs(g - EDITORIAL_VIOLET[1])
               + abs(b - EDITORIAL_VIOLET[2]) < 60)
    return near / len(pixels)


def test_section_first_page_shows_the_authors_box_and_the_editors_mark():
    page = dict((t, p) for _, t, p in outline())[SECTION_TITLE]
    png = render(page, "section-first-page")
    assert "本节摘要" in pages_text()[page - 1]
    assert violet_share(png) > 0.0005, "the editor's violet rule and label are printed"


def test_heat_map_page_is_rendered_in_colour():
    page = first_page_with("编者图 4.5-1")
    png = render(page, "heat-map-page")
    image = Image.open(png).convert("RGB")
    colourful = sum(1 for r, g, b in image.get_flattened_data() if max(r, g, b) - min(r, g, b) > 80)
    assert colourful / (image.width * image.height) > 0.02, "the heat map is drawn on the page"
