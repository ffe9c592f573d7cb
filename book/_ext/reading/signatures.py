"""The API page's class signatures from ``__init__``.

A Keras layer or model inherits ``Layer.__new__(cls, *args, **kwargs)``, and autodoc
takes a class's signature from ``__new__`` before ``__init__``, so every layer of the
package showed ``(*args, **kwargs)``. At ``autodoc-process-signature`` such a class gets
the signature of its own ``__init__`` instead.
"""

import inspect


def init_signature(app, what, name, obj, options, signature, return_annotation):
    """``(signature, return_annotation)``: ``__init__``'s for a class that only shows
    ``(*args, **kwargs)``; ``None`` (autodoc's own) for everything else."""
    if what != "class" or signature != "(*args, **kwargs)" or "__init__" not in vars(obj):
        return None
    parameters = list(inspect.signature(obj.__init__).parameters.values())[1:]   # without self
    return str(inspect.Signature(parameters)), return_annotation


def setup(app):
    app.connect("autodoc-process-signature", init_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
