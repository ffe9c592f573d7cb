"""Math rendered when the book is built, as MathML: no math engine runs in the browser.

Chromium, Firefox and Safari lay out MathML Core natively, so a formula written in TeX
(``$…$``, ``$$…$$``, ``{math}``) is converted once, here, by ``latex2mathml``, and the
page carries the result. Formulas stay text: a reader can select and copy them, and a
screen reader reads them as mathematics. The TeX travels along in the ``alttext``
attribute, as on Wikipedia: in an attribute, not an ``<annotation>``, because Sphinx's
search builds its result summaries from the pages' text content, annotations included.

``latex2mathml`` writes MathML 3; a few of its habits are outside MathML Core and are
rewritten here:

* ``\\operatorname{softmax}`` comes out as ``<mo>softmax</mo>``; it becomes one upright
  identifier followed by the invisible function application, ``<mi>softmax</mi><mo>⁡</mo>``.
* ``\\mathrm{elu}`` comes out as three one-letter identifiers; they become ``<mi>elu</mi>``.
* Named spaces (``negativethinmathspace``) are not Core; positive ones become ems,
  negative ones (``\\!``) are dropped.

A formula in a section title also reaches places that show no markup: Sphinx's search
index keeps titles as text, and the search page shows them as result titles. There the
formula is replaced by a plain-text form (``\\sqrt{d_k}`` becomes ``√d_k``) once the page
is resolved; the page itself and its table of contents still get MathML.

Anything the converter does not understand would reach the page as raw TeX (an unknown
command becomes ``<mi>\\foo</mi>``) or as markup no browser lays out; such a formula is a
build warning, so ``-W`` fails the build instead. The glyphs come from a math font that
webfonts.py subsets at the end of the build to the characters these formulas use.
"""

from html import unescape
from xml.etree import ElementTree as ET

from docutils import nodes
from latex2mathml.converter import convert_to_element
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

from book._ext.shared.nodes import ancestors

logger = logging.getLogger(__name__)

# The elements of MathML Core (https://www.w3.org/TR/mathml-core/#mathml-elements).
CORE = {"math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "ms", "msub", "msup", "msubsup",
        "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mfrac",
        "msqrt", "mroot", "mstyle", "merror", "mpadded", "mphantom", "mtable", "mtr", "mtd",
        "semantics", "annotation", "annotation-xml", "maction"}
SCRIPTED = {"msub", "msup", "msubsup", "munder", "mover", "munderover"}
NAMED_SPACES = {"veryverythinmathspace": 1, "verythinmathspace": 2, "thinmathspace": 3,
                "mediummathspace": 4, "thickmathspace": 5, "verythickmathspace": 6,
                "veryverythickmathspace": 7}  # in 18ths of an em
FUNCTION_APPLICATION = "\u2061"


class UnsupportedTeX(ValueError):
    """The TeX converts to something a browser would not show as the formula."""


def tex_to_mathml(tex: str, display: bool = False) -> str:
    """One formula as a ``<math>`` element in MathML Core; raises UnsupportedTeX."""
    math = convert_to_element(tex.strip(), display="block" if display else "inline")
    for element in math.iter():
        if element.text == "&":  # an alignment tab; a literal \& arrives as "&#x00026;"
            raise UnsupportedTeX("alignment (&) is not supported")
        for attr in ("text", "tail"):
            value = getattr(element, attr)
            if value:
                setattr(element, attr, unescape(value))  # latex2mathml writes "&#x00028;"
    _rewrite(math)
    _check(math, tex)
    del math.attrib["xmlns"]  # the HTML parser puts <math> in the MathML namespace
    if not display:
        del math.attrib["display"]
    math.set("alttext", tex.strip())
    return ET.tostring(math, encoding="unicode", short_empty_elements=True)


def _rewrite(math):
    parents = {child: parent for parent in math.iter() for child in parent}
    for element in list(math.iter()):
        if element.tag == "mo" and len(element.text or "") > 1 and element.text.isalpha():
            _as_function_name(element, parents)
        elif element.tag == "mspace" and element.get("width", "").endswith("mathspace"):
            width = element.get("width")
            if width.startswith("negative"):
                parents[element].remove(element)
            else:
                element.set("width", f"{NAMED_SPACES[width] / 18:.4f}em")
    for parent in list(math.iter()):
        _merge_upright_letters(parent)


def _as_function_name(mo, parents):
    """<mo>softmax</mo> -> <mi>softmax</mi><mo>⁡</mo> (after the scripts, if any)."""
    mo.tag = "mi"
    mo.attrib.clear()
    anchor, parent = mo, parents[mo]
    if parent.tag in SCRIPTED and list(parent)[0] is mo:
        anchor, parent = parent, parents[parent]
    apply = ET.Element("mo")
    apply.text = FUNCTION_APPLICATION
    parent.insert(list(parent).index(anchor) + 1, apply)


def _merge_upright_letters(parent):
    """Runs of <mi mathvariant="normal">x</mi> (from \\mathrm{…}) become one <mi>."""
    run = []
    for child in [*parent, None]:
        if (child is not None and child.tag == "mi" and child.get("mathvariant") == "normal"
                and not (child.tail or "").strip()):
            run.append(child)
            continue
        if len(run) > 1:
            run[0].text = "".join(c.text or "" for c in run)
            del run[0].attrib["mathvariant"]  # several letters are upright anyway
            for extra in run[1:]:
                parent.remove(extra)
        run = []


def _check(math, tex):
    for element in math.iter():
        if element.tag not in CORE:
            raise UnsupportedTeX(f"<{element.tag}> is not MathML Core")
        if element.get("mathvariant") not in (None, "normal"):
            raise UnsupportedTeX(f"mathvariant={element.get('mathvariant')!r} is not MathML Core")
        if element.get("linebreak"):
            raise UnsupportedTeX("line breaks (\\\\) are not supported")
        if element.tag in ("mi", "mo", "mtext", "mn") and "\\" in (element.text or ""):
            raise UnsupportedTeX(f"unknown command {element.text}")


def plain_text(tex: str) -> str:
    """A formula as one line of plain text: ``\\sqrt{d_k}`` -> ``√d_k``."""
    return _linear(ET.fromstring(tex_to_mathml(tex)))


def _linear(element):
    parts = [_linear(child) for child in element]
    if element.tag in ("mi", "mn", "mo", "mtext"):
        return (element.text or "").replace(FUNCTION_APPLICATION, "")
    if element.tag == "msqrt":
        inner = "".join(parts)
        return "√" + (f"({inner})" if _compound(element) else inner)
    if element.tag in ("msub", "msup", "msubsup", "mfrac"):
        marks = {"msub": ["_"], "msup": ["^"], "msubsup": ["_", "^"], "mfrac": ["/"]}[element.tag]
        out = f"({parts[0]})" if element.tag == "mfrac" and _compound(element[0]) else parts[0]
        for mark, child, text in zip(marks, list(element)[1:], parts[1:]):
            out += mark + (f"({text})" if _compound(child) else text)
        return out
    return "".join(parts)


def _compound(element):
    """Whether a part needs parentheses in the linear form: a fraction, or several tokens
    with an operator among them."""
    tokens = [e for e in element.iter() if e.tag in ("mi", "mn", "mo", "mtext")
              and e.text != FUNCTION_APPLICATION]
    return (any(e.tag == "mfrac" for e in element.iter())
            or len(tokens) > 1 and any(e.tag == "mo" for e in tokens))


def _plain_titles(app, doctree, docname):
    for node in list(doctree.findall(nodes.math)):
        if "tex" in node or not any(isinstance(parent, nodes.title) for parent in ancestors(node)):
            continue
        tex = node.astext()
        try:
            text = plain_text(tex)
        except Exception:  # noqa: BLE001 - the HTML writer reports it
            continue
        node["tex"] = tex
        node[:] = [nodes.Text(text)]


def _render(self, node, display):
    tex = node.get("tex") or node.astext()
    try:
        return tex_to_mathml(tex, display)
    except Exception as exc:  # noqa: BLE001 - any failure is reported the same way
        logger.warning("cannot render the formula %r as MathML: %s", tex, exc,
                       location=node, type="mathml", subtype="convert")
        return f"<code>{self.encode(tex)}</code>"


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(_render(self, node, display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_math_block(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math notranslate"))
    if node["number"] and not node["nowrap"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_render(self, node, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    app.connect("doctree-resolved", _plain_titles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
