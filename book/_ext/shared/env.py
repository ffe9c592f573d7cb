"""The stores an environment collector keeps on Sphinx's environment, one dict per name."""

from sphinx.environment.collectors import EnvironmentCollector


class PageStores(EnvironmentCollector):
    """A collector whose data is one dict per name of ``STORES``, keyed by docname: a page
    read again loses its entries, and parallel reads merge them. Once any page is read
    again, the pages in the store ``REREAD`` (those that list every page's data), if any, are too."""

    STORES = ()
    REREAD = None

    @classmethod
    def stores(cls, env):
        """``env`` with an empty dict as each store it does not have yet (a new environment,
        or one pickled before the extension was set up)."""
        for name in cls.STORES:
            if not hasattr(env, name):
                setattr(env, name, {})
        return env

    def clear_doc(self, app, env, docname):
        for store in self.STORES:
            getattr(self.stores(env), store).pop(docname, None)

    def merge_other(self, app, env, docnames, other):
        self.stores(other)
        for store in self.STORES:
            for docname in set(docnames) & set(getattr(other, store)):
                getattr(self.stores(env), store)[docname] = getattr(other, store)[docname]

    def get_outdated_docs(self, app, env, added, changed, removed):
        if self.REREAD is None or not (added or changed or removed):
            return []
        return sorted(getattr(self.stores(env), self.REREAD))
