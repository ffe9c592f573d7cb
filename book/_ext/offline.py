"""The site read from disk: what the offline copy (``make dist``) needs from the pages.

Opened with ``file://``, every page works as it does online (links and assets are
relative; Sphinx's search loads its index with a script tag). One thing does not: to
show a summary under each search result, the search page fetches the result's page,
and browsers refuse ``fetch()`` for ``file://`` URLs, with an error in the console for
each result. There, the search page lists the results without summaries.
"""

SKIP_SUMMARIES = 'if (location.protocol === "file:") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;'


def _search_page(app, pagename, templatename, context, doctree):
    if pagename == "search":
        # After documentation_options.js (priority 200), before the search runs on load.
        app.add_js_file(None, body=SKIP_SUMMARIES)


def setup(app):
    app.connect("html-page-context", _search_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
