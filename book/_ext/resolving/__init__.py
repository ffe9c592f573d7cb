"""Extensions that work once every page is read: the consistency check, post-transforms
and ``doctree-resolved`` (Sphinx counts the consistency check as resolving too).

* ``claims``: the claims ledger. Its directives and environment collector record, while
  pages are read, the cells and values behind each claim; the verdicts are decided at
  ``env-check-consistency`` and written into the ledger at ``doctree-resolved``; at
  ``builder-inited`` it wraps the HTML translator for the ledger's table cells.
* ``figures``: inline, theme-aware SVG figures (``doctree-resolved``); adds their scripts
  at ``html-page-context``; at ``build-finished`` it removes the fixtures of figures no
  page shows any more.
* ``glossary_links``: named glossary anchors (read at ``config-inited``) and the editor's
  first use of each term linked (``doctree-resolved``).
"""
