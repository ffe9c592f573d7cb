"""Offer each executed page as ``.ipynb`` in the theme's download menu.

sphinx-book-theme adds the ``.ipynb`` entry only when a launch service (Binder, Colab
and so on) is configured, and this book links to none. This does the theme's own
steps without the launch service: copy the notebook that myst-nb executed into
``_sources`` and name it in the page context, before the theme builds its buttons.
"""

from pathlib import Path
from shutil import copy2


def _add_notebook(app, pagename, templatename, context, doctree):
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if doctree is None or not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # sphinx-book-theme reads ipynb_source in its handler at priority 501.
    app.connect("html-page-context", _add_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
