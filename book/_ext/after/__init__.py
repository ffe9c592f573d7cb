"""Extensions that work once every page is on disk (``build-finished``). ``offline`` also
tells the search page, at ``html-page-context``, to skip summaries under ``file://``.
"""
