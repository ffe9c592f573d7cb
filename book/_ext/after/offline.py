"""The site read from disk: what the offline copy (``make dist``) needs from the pages.

Opened with ``file://``, every page works as it does online (links and assets are
relative; Sphinx's search loads its index with a script tag). One thing does not: to
show a summary under each search result, the search page fetches the result's page,
and browsers refuse ``fetch()`` for ``file://`` URLs, with an error in the console for
each result. There, the search page lists the results without summaries.

The site's root ``index.html`` is the redirect to the first page. sphinx-external-toc
writes a bare ``<meta>`` line for it; the browser then asks the server for
``/favicon.ico``, which the site does not have, and logs a 404 whenever the request
wins the race against the redirect (an icon file linked from there would be cut off by
the redirect instead, a failed request). This writes a whole page in its place, with the
site's icon inlined as a ``data:`` URL (so the page makes no request at all), a title,
and a link for readers whose browser does not follow the redirect.
"""

import base64
import mimetypes
from html import escape
from pathlib import Path

ENTRY_PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Refresh" content="0; url={target}">
<link rel="icon" href="{favicon}">
<title>{title}</title>
</head>
<body><p><a href="{target}">{title}</a></p></body>
</html>
"""

SKIP_SUMMARIES = 'if (location.protocol === "file:") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;'


def _search_page(app, pagename, templatename, context, doctree):
    if pagename == "search":
        # After documentation_options.js (priority 200), before the search runs on load.
        app.add_js_file(None, body=SKIP_SUMMARIES)


def _data_url(path):
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def _entry_page(app, exception):
    """Write the root index.html before sphinx-external-toc's bare redirect (priority 500)."""
    if exception is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    icon = app.config.html_favicon
    fields = {"lang": (app.config.language or "en").replace("_", "-"),
              "favicon": _data_url(Path(app.confdir, icon)) if icon else "data:,",
              "target": app.builder.get_target_uri(app.config.root_doc),
              "title": app.config.html_title or app.config.project}
    page = ENTRY_PAGE.format(**{key: escape(value) for key, value in fields.items()})
    Path(app.outdir, "index.html").write_text(page, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _search_page)
    app.connect("build-finished", _entry_page, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
