"""Extensions that work once every page is on disk (``build-finished``).

* ``previews``: previews of terms, sections, figures, tables, equations and citations,
  put into each page that links to them.
* ``offline``: the site's entry page for reading from disk (``make dist``); at
  ``html-page-context`` it also tells the search page to skip summaries under ``file://``.
* ``webfonts``: the icon and math fonts, subset to what the pages show.
"""
