"""Extensions that work while each page is written as HTML: HTML translators (wrapped at
``builder-inited``), the math renderer, and ``html-page-context``.

* ``images``: width, height and ``loading="lazy"`` on every ``<img>`` (translator).
* ``code_lines``: each line of a code input in a ``span.line`` (translator).
* ``a11y``: accessibility fixes to the markup Sphinx writes (translator; a script at
  ``html-page-context``).
* ``mathml``: math as MathML (the HTML math renderer); plain-text formula titles for the
  search index at ``doctree-resolved``.
* ``notebook_download``: each executed page as ``.ipynb`` in the download menu, its
  markdown made plain by ``notebook_markdown`` (a library, and an extension with no
  events of its own).
* ``book_pdf``: the 全书 PDF entry of the download menu.
* ``cite_section``: 「引用本节」, GB/T 7714 and BibTeX with the edition and the commit.
"""
