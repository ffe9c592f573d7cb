"""Put the book's own Simplified Chinese message catalogs in front of the themes'.

The themes and extensions ship catalogs that leave some interface strings in English
(the colour-mode switch, "Link to this heading") or use Taiwanese wording
(列印成 PDF). Sphinx merges catalogs first come, first served, so a catalog registered
by the book after the themes would only fill gaps. This extension compiles each
``<catalog>.po`` in ``zh_catalogs_dir/<language>/LC_MESSAGES`` (into the doctree
folder, so no ``.mo`` file lands in the sources) and installs it as the *primary*
translation of that catalog, with the theme's catalog as its fallback.
"""

import gettext
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx import locale


def _compile(po, out_dir):
    """Compile ``po`` into ``out_dir/<catalog>.mo`` and load it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    mo = out_dir / f"{po.stem}.mo"
    with open(po, encoding="utf-8") as source, open(mo, "wb") as target:
        write_mo(target, read_po(source))
    with open(mo, "rb") as compiled:
        return gettext.GNUTranslations(compiled)


def _install(app, config):
    source = Path(app.srcdir) / config.zh_catalogs_dir / config.language / "LC_MESSAGES"
    for po in sorted(source.glob("*.po")):
        ours = _compile(po, Path(app.doctreedir) / "zh_catalogs")
        key = ("general", po.stem)
        previous = locale.translators.get(key)
        if previous is not None:
            ours.add_fallback(previous)
        locale.translators[key] = ours
        if po.stem == "sphinx":
            app.translator = ours  # what the HTML templates' _() uses


def setup(app):
    app.add_config_value("zh_catalogs_dir", "book/locale", "env", types=[str])
    # After every extension's setup(), so the themes' catalogs are already registered.
    app.connect("config-inited", _install)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
