"""The book as one PDF, printed by headless Chromium from the built site.

``make pdf`` runs ``tools/pdf.py`` (``python -m tools.pdf``), which uses these modules in
turn: ``toc`` (the pages in order), ``assemble`` and ``exercises`` (one HTML document from
the built pages, no page executed again), ``colophon`` and ``contents`` (the front matter),
``fonts`` (the CJK fonts the PDF embeds) and ``printing`` (Chromium prints it with
``print.css``); each module's docstring says how.

Why Chromium and not Sphinx's LaTeX builder: the browser is already installed for the
browser tests, and it draws the site's own CSS, figures and math, so the editor's
layer, the author's boxes and the outputs look the same on paper without a second set
of LaTeX styles; the LaTeX route would add about 470 MB of TeX packages to CI.
"""
