"""book/_ext/writing/images.py, mathml.py and webfonts.py in a one-page Sphinx build.

Independent of what the book's pages hold today: an image gets its pixel size and
loading="lazy", a formula becomes MathML, a formula in a section title is plain text
in the search index, TeX the converter does not know is a build warning, and the math
font is written with the glyphs the page shows.
"""

import io

import pytest
from PIL import Image

from buildfiles import search_index

pytestmark = pytest.mark.build

PAGE = """Assets
======

Intro with :math:`\\sqrt{d_k}` inline.

Why :math:`\\sqrt{d_k}` scales
------------------------------

.. image:: picture.png
   :alt: a picture

.. math::

   \\operatorname{softmax}(x) = x
"""


def build(tmp_path, page=PAGE):
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "extensions = ['book._ext.writing.mathml', 'book._ext.after.webfonts', 'book._ext.writing.images']\n"
        "html_math_renderer = 'mathml'\n"
        "html_theme = 'pydata_sphinx_theme'\n", encoding="utf-8")
    (src / "index.rst").write_text(page, encoding="utf-8")
    Image.new("RGB", (320, 200), "white").save(src / "picture.png")
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    return warnings.getvalue(), tmp_path / "out"


def test_one_page(tmp_path):
    warnings, out = build(tmp_path)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '<img loading="lazy" decoding="async" width="320" height="200" alt="a picture"' in html
    assert html.count("<math") >= 3 and html.count("<math display=\"block\"") == 1
    assert "<mi>softmax</mi><mo>\u2061</mo>" in html
    titles = search_index(out)["alltitles"]
    assert "Why √d_k scales" in titles, titles
    assert (out / "_static" / "fonts" / "book-math.woff2").stat().st_size > 1000
    assert not warnings, warnings


def test_unknown_tex_is_a_warning(tmp_path):
    warnings, out = build(tmp_path, "Page\n====\n\n:math:`\\foo{x}`\n")
    assert "cannot render the formula '\\\\foo{x}' as MathML: unknown command \\foo" in warnings, warnings
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<code>\\foo{x}</code>" in html and "<math" not in html
