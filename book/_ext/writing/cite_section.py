"""「引用本节」: how to cite the page, in GB/T 7714 and in BibTeX, with the edition and the commit.

Every page of the book gets, under its article (``book/_templates/cite-section.html``,
one of the theme's article-footer components), a citation of that page as a part of the
book: GB/T 7714-2015 for an electronic resource ([EB/OL], with the part's title, the
book's title, the edition, the date of the commit and the address the page is published
at), and a BibTeX ``@misc`` entry with the same facts. The edition is the companion
package's version (``code/pyproject.toml``), which is what the pages ran; the commit is
the checkout's, marked when the work tree had changes. Each has a 复制 button; the
reader's date of access (引用日期), which a build cannot know, is filled in by the page.
"""

import re
from pathlib import Path

from markupsafe import Markup

from book._ext.shared.checkout import UNKNOWN, commit_facts, edition, site_url


def _bibtex_key(pagename):
    return "attnbook-" + re.sub(r"[^a-z0-9]+", "-", pagename.lower()).strip("-")


def citations(*, authors, part, book, edition, commit, date, url, pagename):
    """{'gbt': str, 'bibtex': str}; ``[引用日期]`` is left for the reader's date."""
    year = date[:4] if date[:4].isdigit() else UNKNOWN
    gbt = (f"{authors}. {part}[EB/OL]//{authors}. {book}. {edition} 版（提交 {commit}）. "
           f"({date})[引用日期]. {url}.")
    bibtex = "\n".join([
        f"@misc{{{_bibtex_key(pagename)},",
        f"  author       = {{{{{authors}}}}},",
        f"  title        = {{{part}}},",
        f"  howpublished = {{《{book}》{edition} 版，提交 {commit}}},",
        f"  year         = {{{year}}},",
        f"  version      = {{{edition}}},",
        f"  url          = {{{url}}},",
        f"  note         = {{访问于 [引用日期]}},",
        "}",
    ])
    return {"gbt": gbt, "bibtex": bibtex}


def _facts(app):
    if not hasattr(app, "_cite_facts"):
        root = Path(app.confdir)
        commit, date = commit_facts(root)
        repository = (app.config.html_theme_options or {}).get("repository_url", "")
        app._cite_facts = {"edition": edition(root), "commit": commit, "date": date,
                           "root": site_url(repository)}
    return app._cite_facts


def _page_context(app, pagename, templatename, context, doctree):
    if doctree is None or pagename not in app.env.found_docs:
        return
    facts = _facts(app)
    # The commit once more, for tools/pdfbook/colophon.py: the PDF prints this build.
    context["metatags"] = context.get("metatags", "") + f'<meta name="attnbook-commit" content="{facts["commit"]}">\n'
    part = re.sub(r"<[^>]+>", "", context.get("title", "")).strip()
    context["cite_section"] = citations(
        authors=app.config.cite_section_authors, part=Markup(part).unescape(),
        book=app.config.html_title or app.config.project, edition=facts["edition"], commit=facts["commit"],
        date=facts["date"], url=facts["root"] + app.builder.get_target_uri(pagename), pagename=pagename)


def setup(app):
    app.add_config_value("cite_section_authors", "本书作者与贡献者", "html", types=[str])
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
