"""Where a node of a doctree sits (inside code, where no prose rule applies), and a link."""

from docutils import nodes

#: Code and what is never prose: literal blocks (every FixedTextElement), inline
#: literals, raw markup, formulas and comments.
CODE = (nodes.FixedTextElement, nodes.literal, nodes.raw, nodes.math, nodes.comment)


def ancestors(node):
    """The parent of ``node``, its parent, and so on up to the document."""
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def in_code(node):
    """Whether ``node`` or one of its ancestors is :data:`CODE` or an element of class
    ``pre`` (a literal word). Used by ``reading/cjk_linebreaks`` and ``writing/a11y``."""
    return any(isinstance(n, CODE) or (isinstance(n, nodes.Element) and "pre" in n["classes"])
               for n in (node, *ancestors(node)))


def internal_ref(app, fromdocname, docname, anchor, text):
    """A link from the page ``fromdocname`` to ``anchor`` on the page ``docname``."""
    ref = nodes.reference("", "", internal=True,
                          refuri=app.builder.get_relative_uri(fromdocname, docname) + "#" + anchor)
    ref += nodes.Text(text)
    return ref
