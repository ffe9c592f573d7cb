"""The printable document: cover, colophon, contents, then the book's parts and pages.

The pages' article goes into a plain ``<main>``: the theme's own print rules are
written for one page inside its layout (they hide the first ``h1`` of an article, for
one), and the book is many pages. The head carries the site's stylesheets and scripts (gathered from the pages by
assemble.Assets), the print's own fonts (``@font-face`` rules, see fonts.py) and then
print.css, which adapts them to paper. The scripts go at the
end of the body, in the order the pages load them, so a script that typesets math on
the site typesets it here too.
"""

import html
from pathlib import Path

PRINT_CSS = Path(__file__).with_name("print.css")


def cover(title, author):
    return (f'<section class="pdf-cover"><p class="pdf-title">{html.escape(title)}</p>'
            f'<p class="pdf-subtitle">{html.escape(author)}</p>'
            '<p class="pdf-edition">可执行版：书中的输出、测得的数与插图来自构建时运行过的代码（例外见前言）</p></section>')


def render(title, assets, parts, font_faces=""):
    """The whole document as HTML text; ``parts`` are HTML strings in print order and
    ``font_faces`` CSS ``@font-face`` rules for print.css."""
    links = "".join(f'<link rel="stylesheet" href="{html.escape(href)}">' for href in assets.stylesheets)
    styles = "".join(f"<style>{css}</style>" for css in assets.styles)
    scripts = "".join(f'<script src="{html.escape(body)}"></script>' if kind == "src" else f"<script>{body}</script>"
                      for kind, body in assets.scripts)
    return ('<!DOCTYPE html>\n<html lang="zh-CN" data-theme="light" data-mode="light" data-voice="lesson">'
            f'<head><meta charset="utf-8"><title>{html.escape(title)}</title>{links}{styles}'
            f'<style>{font_faces}{PRINT_CSS.read_text(encoding="utf-8")}</style></head>'
            f'<body><main class="pdf-book"><article class="bd-article">{"".join(parts)}</article></main>'
            f"{scripts}</body></html>")
