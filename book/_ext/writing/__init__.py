"""Extensions that work while each page is written as HTML: HTML translators (wrapped at
``builder-inited``), the math renderer, and ``html-page-context``. ``mathml`` also gives
formula titles plain text for the search index at ``doctree-resolved``;
``notebook_markdown`` is the library ``notebook_download`` converts with.
"""
