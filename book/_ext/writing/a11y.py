"""Accessibility fixes for markup that Sphinx and docutils write (audited by tests/test_a11y.py).

* Citations (sphinxcontrib-bibtex, via docutils): docutils gives each entry
  ``role="doc-biblioentry"``, which DPUB-ARIA 1.1 deprecates, inside a ``role="list"``
  that then has no list items (axe: aria-deprecated-role, aria-required-children). Each
  entry becomes a plain ``role="listitem"`` of that list.
* Code blocks shown again by the view switch (editorial.py: 原文, 原文 + 讲解, 全部): pydata-sphinx-theme makes
  a block that scrolls sideways focusable (tabindex 0) on load, on resize and when
  #main-content changes, but the switch changes only an attribute of <html>, so on a
  phone the editor's code blocks came back unreachable by keyboard (axe:
  scrollable-region-focusable). A change of that attribute now counts as a resize.
* English inside Chinese: a run of Latin-letter words in the text (two letters in a row
  or more: ``Transformer``, ``softmax``, ``attention mechanism``, ``d_model``) is written
  inside ``<span lang="en">``, so that a screen reader reads it with an English voice
  instead of spelling it out in a Chinese one. Only the markup changes, never the text;
  code, formulas and raw HTML are left alone.

The HTML translator in use is wrapped at ``builder-inited`` (after pydata-sphinx-theme's
and images.py's wrappers), with shared/translators.py as images.py does.
"""

import re

from book._ext.shared.nodes import in_code
from book._ext.shared.translators import wrap_html_translators

# A word with two Latin letters in a row (identifiers with _ and digits included), and
# runs of such words separated by spaces or hyphens: one span per phrase.
_WORD = r"[A-Za-z0-9_]*[A-Za-z]{2}[A-Za-z0-9_]*(?:['’-][A-Za-z0-9_]+)*"
ENGLISH = re.compile(rf"{_WORD}(?:[ \t\n]+{_WORD})*")


class AccessibleMarkupMixin:
    def visit_citation(self, node):
        super().visit_citation(node)
        self.body[-1] = self.body[-1].replace(' role="doc-biblioentry"', ' role="listitem"', 1)

    def visit_Text(self, node):
        text = node.astext()
        if (self.protect_literal_text or getattr(self, "in_mailto", False) or not ENGLISH.search(text)
                or in_code(node) or (self.settings.language_code or "").startswith("en")):
            return super().visit_Text(node)
        out, end = [], 0
        for match in ENGLISH.finditer(text):
            out.append(self.encode(text[end:match.start()]))
            out.append(f'<span lang="en">{self.encode(match.group(0))}</span>')
            end = match.end()
        out.append(self.encode(text[end:]))
        self.body.append("".join(out))


# The theme's listener is debounced (300 ms); nothing else of the page listens to resize
# for more than layout.
VOICE_IS_A_RESIZE = """new MutationObserver(() => window.dispatchEvent(new Event("resize")))
  .observe(document.documentElement, {attributes: true, attributeFilter: ["data-voice"]});"""


def _voice_switch_script(app, pagename, templatename, context, doctree):
    if getattr(app.env, "editorial_docs", {}).get(pagename) == "blocks":  # a page with the switch
        app.add_js_file(None, body=VOICE_IS_A_RESIZE)


def setup(app):
    app.connect("builder-inited", wrap_html_translators(AccessibleMarkupMixin, "Accessible"), priority=700)
    app.connect("html-page-context", _voice_switch_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
