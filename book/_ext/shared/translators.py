"""A mixin in front of every HTML translator: how the writing extensions change markup."""

import types


def wrap_html_translators(mixin, prefix):
    """A ``builder-inited`` handler that puts ``mixin`` in front of every HTML translator
    registered so far (the theme's wrappers included), each new class named ``prefix`` +
    the old name.

    Connected after pydata-sphinx-theme's own wrapper (priority 500): ``writing/images``
    at 600, ``resolving/claims`` at 650, ``writing/a11y`` at 700, ``writing/code_lines``
    at 800 and ``writing/tables`` at 850, each wrapping the classes the ones before it made.
    """
    def wrap(app):
        if app.builder.format != "html":
            return
        translators = dict(app.registry.translators) or {app.builder.name: app.builder.default_translator_class}
        for name, klass in translators.items():
            app.set_translator(name, types.new_class(f"{prefix}{klass.__name__}", (mixin, klass), {}), override=True)

    return wrap
