"""What the site says about its sections, from the section list: its title and byline, and the preface's words.

``_config.yml``'s ``title`` is the printed book's name. While the book has one section the
site takes that section's title (注意力机制：让张量互相打分), as the PDF's cover does; the
byline under it (the page footer's 作者, the cover's second line) names the sections:
TensorFlow 深度学习教程 · 第 4.5 节. The pages that speak of the sections as a whole (the
preface) use MyST substitutions instead of numbers typed by hand:

* ``{{ section_numbers }}``: 4.5, or 4.5、4.6;
* ``{{ sections_named }}``: 第 4.5 节“注意力机制：让张量互相打分”, joined with 、 and 与;
* ``{{ section_pages }}``: a link to each section page, in 《》;
* ``{{ first_section }}``: a link to the first one.

So the preface stays true as sections are added, and reads as before while there is one.
"""

from book._ext.shared.sections import for_app, numbers


def _joined(items):
    return items[0] if len(items) == 1 else "、".join(items[:-1]) + "与" + items[-1]


def substitutions(book):
    """The preface's substitutions for ``book``'s sections (see the module's docstring)."""
    sections = book.sections
    if not sections:
        return {}
    return {"section_numbers": numbers(sections),
            "sections_named": _joined([f"第 {s.number} 节“{s.title}”" for s in sections]),
            "section_pages": "、".join(f"《{{ref}}`{s.label}`》" for s in sections),
            "first_section": f"《{{ref}}`{sections[0].label}`》"}


def _configure(app, config):
    book = for_app(app)
    config.html_title, config.author = book.title, book.byline
    config.myst_substitutions = {**substitutions(book), **config.myst_substitutions}


def setup(app):
    app.connect("config-inited", _configure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
