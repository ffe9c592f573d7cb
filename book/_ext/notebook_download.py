"""Offer each executed page as ``.ipynb`` in the theme's download menu.

sphinx-book-theme adds the ``.ipynb`` entry only when a launch service (Binder, Colab
and so on) is configured, and this book links to none. This does the theme's own
steps without the launch service: copy the notebook that myst-nb executed into
``_sources`` and name it in the page context, before the theme builds its buttons.

It also repairs one thing in that notebook. With ``nb_merge_streams``, myst-nb's
``coalesce_streams`` appends every later stdout chunk of a cell to the first one *in
place*, but only its returned list drops the later chunks: the page is right, while
the stored notebook keeps both, so a line that the kernel happened to send in a
second chunk appears twice in the ``.ipynb``. Whether the kernel splits a cell's
output depends on timing, so this shows up only now and then.
"""

from pathlib import Path
from shutil import copy2

import nbformat


def _drop_merged_chunks(notebook):
    """Remove stream outputs already appended to an earlier one; return how many."""
    dropped = 0
    for cell in notebook.cells:
        kept, first = [], {}
        for output in cell.get("outputs", []):
            name = output.get("name") if output.get("output_type") == "stream" else None
            if name in first and first[name]["text"].endswith(output["text"].rstrip() + "\n"):
                dropped += 1
                continue
            first.setdefault(name, output)
            kept.append(output)
        if "outputs" in cell:
            cell.outputs = kept
    return dropped


def _add_notebook(app, pagename, templatename, context, doctree):
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if doctree is None or not executed.is_file():
        return
    notebook = nbformat.read(executed, as_version=4)
    if _drop_merged_chunks(notebook):
        nbformat.write(notebook, executed)
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # sphinx-book-theme reads ipynb_source in its handler at priority 501.
    app.connect("html-page-context", _add_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
