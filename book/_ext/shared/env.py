"""The stores an environment collector keeps on Sphinx's environment, one dict per name."""


def stores(env, names):
    """``env`` with an empty dict as each attribute of ``names`` it does not have yet (a new
    environment, or one pickled before the extension was set up); returns ``env``."""
    for name in names:
        if not hasattr(env, name):
            setattr(env, name, {})
    return env
