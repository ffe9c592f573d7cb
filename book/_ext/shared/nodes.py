"""Whether a node of a doctree sits inside code, where no prose rule applies."""

from docutils import nodes

#: Code and what is never prose: literal blocks (every FixedTextElement), inline
#: literals, raw markup, formulas and comments.
CODE = (nodes.FixedTextElement, nodes.literal, nodes.raw, nodes.math, nodes.comment)


def in_code(node):
    """Whether ``node`` or one of its ancestors is :data:`CODE` or an element of class
    ``pre`` (a literal word). Used by ``reading/cjk_linebreaks`` and ``writing/a11y``."""
    while node is not None:
        if isinstance(node, CODE) or (isinstance(node, nodes.Element) and "pre" in node["classes"]):
            return True
        node = node.parent
    return False
