"""Offer the whole book as a PDF in every page's download menu.

``make pdf`` prints the built site into ``_build/pdf/attention-book.pdf`` and copies it
to the site's root, next to ``index.html`` (tools/pdf.py); the Pages workflow publishes
it with the site. This adds a 全书 PDF entry to the theme's download menu, after the
page's own downloads, pointing at that file.
"""

PDF_NAME = "attention-book.pdf"


def _add_download(app, pagename, templatename, context, doctree):
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"].append({
                "type": "link",
                "url": context["pathto"](PDF_NAME, 1),
                "text": "全书 PDF",
                "tooltip": "下载全书 PDF（含构建时的真实输出）",
                "icon": "fas fa-book",
                "label": "download-book-pdf-button",
            })


def setup(app):
    # sphinx-book-theme fills the download menu at priority 501.
    app.connect("html-page-context", _add_download, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
