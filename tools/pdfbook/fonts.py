"""The print's Chinese fonts as TrueType subsets, so the PDF embeds them as real fonts.

Skia, Chromium's PDF backend, embeds a font with TrueType outlines (``glyf``) as a
named CID TrueType subset, but it cannot embed one with CFF outlines, which the Noto
CJK fonts of fonts-noto-cjk have: it draws each of their glyphs as a Type 3
procedure, in hundreds of nameless fonts. So before printing, every Noto CJK face that
print.css uses (Song for prose, Hei for headings, the CJK monospace for code, each in
its regular and bold weight) is cut down to the characters of the document, and its
cubic outlines are turned into quadratic ones (cu2qu, as in fontTools' otf2ttf
snippet). The printer serves the subsets as web fonts and an ``@font-face`` block
names them (``Noto Serif CJK SC Print`` and so on) for print.css. The fonts are
licensed under the SIL Open Font License, which allows embedding.

The faces are found as Chromium finds them, with fontconfig, each weight matched to
the nearest face installed. Converting takes a few seconds a face, so the subsets are
kept in ``_build/pdf/fonts``, keyed by the characters, the font file and this module.
The colour emoji font is a bitmap font: Skia draws its glyphs as images in Type 3
fonts whatever is done here, so it is left alone.
"""

import hashlib
import html
import io
import re
import string
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import fontTools
from fontTools.pens.cu2quPen import Cu2QuPen
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.subset import Options, Subsetter
from fontTools.ttLib import TTFont, newTable

# The families print.css asks for, and the name each one's subset gets.
FAMILIES = {name: f"{name} Print" for name in ("Noto Serif CJK SC", "Noto Sans CJK SC", "Noto Sans Mono CJK SC")}
WEIGHTS = {400: "regular", 700: "bold"}  # CSS font-weight: fontconfig's name for it
URL_DIR = "_print-fonts"
MAX_ERR = 1.0  # font units a quadratic outline may stray from the cubic one (otf2ttf's)
# Drawn by the browser itself, not written in the document: list markers, hyphens, ellipsis.
GENERATED = "•◦▪‐–—…"
_CSS_CONTENT = re.compile(r"content\s*:\s*([^;}]*)")
_CSS_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|\\(.)")


@dataclass(frozen=True)
class Face:
    """One installed font face (``file``, ``index`` in a collection) as a print family's weight."""

    family: str
    weight: int
    file: Path
    index: int

    @property
    def name(self):
        return f"{self.family.replace(' ', '')}-{self.weight}"

    @property
    def url(self):
        return f"{URL_DIR}/{self.name}.ttf"


def faces():
    """The print's faces: each family and weight, where fontconfig finds the family.

    A weight whose nearest face is the one already found for a lighter weight is left
    out, so the browser emboldens it as it would the installed font."""
    found = []
    for installed, family in FAMILIES.items():
        seen = set()
        for weight, fc_weight in WEIGHTS.items():
            match = _fc_match(installed, fc_weight)
            if match and match not in seen:
                seen.add(match)
                found.append(Face(family, weight, *match))
        if not seen:
            raise SystemExit(f"make pdf needs the font {installed!r}: apt-get install fonts-noto-cjk")
    return found


def _fc_match(family, weight):
    """(file, index) of the face fontconfig gives for ``family`` at ``weight``, or None."""
    out = subprocess.run(["fc-match", "-f", "%{family}\t%{file}\t%{index}", f"{family}:weight={weight}"],
                         capture_output=True, text=True, check=False).stdout
    if out.count("\t") != 2:
        return None
    families, file, index = out.split("\t")
    return (Path(file), int(index)) if family in families.split(",") else None


def characters(html_texts, css_texts):
    """Every character the print can show: the text of the HTML (entities decoded), the
    strings of CSS ``content``, printable ASCII (page numbers, the contents' digits) and
    what the browser draws itself."""
    chars = set(string.printable) | set(GENERATED)
    for text in html_texts:
        chars |= set(html.unescape(text))
    for css in css_texts:
        for value in _CSS_CONTENT.findall(css):
            for double, single in _CSS_STRING.findall(value):
                chars |= set(_CSS_ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else m[2], double or single))
    # Spaces too (U+3000 lines up Chinese text in outputs); icon fonts' private codes go.
    return "".join(sorted(c for c in chars if unicodedata.category(c) != "Co"))


def subsets(found, chars, cache):
    """{face: TrueType font bytes} for ``chars``, converted or taken from ``cache`` (a folder)."""
    cache.mkdir(parents=True, exist_ok=True)
    return {face: _cached(face, chars, cache) for face in found}


def _cached(face, chars, cache):
    stat = face.file.stat()
    key = hashlib.sha256("\0".join([chars, str(face.file), str(face.index), str(stat.st_size),
                                    str(stat.st_mtime_ns), fontTools.version]).encode("utf-8"))
    key.update(Path(__file__).read_bytes())
    path = cache / f"{face.name}-{key.hexdigest()[:16]}.ttf"
    if not path.is_file():
        for stale in cache.glob(f"{face.name}-*.ttf"):
            stale.unlink()
        partial = path.with_suffix(".part")
        partial.write_bytes(truetype_subset(face.file, face.index, chars))
        partial.replace(path)
    return path.read_bytes()


def truetype_subset(file, index, chars):
    """The face ``index`` of ``file`` (CFF outlines) with only what ``chars`` need, as TrueType."""
    font = TTFont(file, fontNumber=index, lazy=True)
    font.getGlyphOrder()
    outlines = font.getGlyphSet()  # the CFF outlines, kept to draw once the glyphs are chosen
    for table in ("CFF ", "VORG"):  # nothing to subset in them, and slow to: they go
        if table in font:
            del font[table]
    options = Options(layout_features=["*"], name_IDs=["*"], name_languages=["*"], notdef_outline=True)
    subsetter = Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    _add_glyf(font, outlines)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def _add_glyf(font, outlines):
    """Give ``font`` quadratic (``glyf``) outlines, drawn from the cubic ``outlines``."""
    order, hmtx = font.getGlyphOrder(), font["hmtx"]
    glyf = font["glyf"] = newTable("glyf")
    font["loca"] = newTable("loca")
    glyf.glyphOrder, glyf.glyphs = order, {}
    for name in order:
        pen = TTGlyphPen(None)
        outlines[name].draw(Cu2QuPen(pen, MAX_ERR, reverse_direction=True))
        glyph = glyf.glyphs[name] = pen.glyph()
        glyph.recalcBounds(glyf)
        hmtx[name] = (hmtx[name][0], getattr(glyph, "xMin", 0))  # TrueType: left side bearing = xMin
    _truetype_tables(font)


def _truetype_tables(font):
    """The tables that differ between a CFF font and a TrueType one (no instructions here)."""
    maxp = font["maxp"] = newTable("maxp")
    maxp.tableVersion, maxp.numGlyphs, maxp.maxZones = 0x00010000, len(font.getGlyphOrder()), 1
    for field in ("maxTwilightPoints", "maxStorage", "maxFunctionDefs", "maxInstructionDefs",
                  "maxStackElements", "maxSizeOfInstructions", "maxComponentElements"):
        setattr(maxp, field, 0)  # the rest is counted when the font is saved
    font["post"].formatType = 3.0  # no glyph names: the PDF has no use for them
    font.sfntVersion = "\0\1\0\0"


def css(found):
    """The ``@font-face`` rules that name the subsets for print.css."""
    return "".join(f'@font-face {{ font-family: "{face.family}"; font-weight: {face.weight}; '
                   f'font-style: normal; src: url("/{face.url}") format("truetype"); }}\n' for face in found)
