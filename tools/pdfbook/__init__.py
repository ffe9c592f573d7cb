"""The book as one PDF, printed by headless Chromium from the built site.

``make pdf`` runs ``tools/pdf.py`` (``python -m tools.pdf``), which uses these modules in turn:

* ``toc``: the pages of ``_toc.yml`` in reading order, with their outline levels;
* ``assemble``: one HTML document from the built pages in ``_build/html`` (no page is
  executed again), with unique ids, in-document links and headings that follow the
  table of contents; ``exercises`` moves solutions to the end of their chapter;
* ``colophon``: the build date, the machine, the commit and the package version;
* ``contents``: the contents page, its page numbers read from the outline of a first print;
* ``fonts``: the Noto CJK faces of ``print.css`` as TrueType subsets of the document's
  characters, which the PDF can embed (Chromium draws their CFF originals as Type 3 fonts);
* ``printing``: Chromium loads the document with the site's own styles and scripts
  (so figures and math look as on the site), and prints it with ``print.css``.

Why Chromium and not Sphinx's LaTeX builder: the browser is already installed for the
browser tests, and it draws the site's own CSS, figures and math, so the editor's
layer, the author's boxes and the outputs look the same on paper without a second set
of LaTeX styles; the LaTeX route would add about 470 MB of TeX packages to CI.
"""
