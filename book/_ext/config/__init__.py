"""Extensions that work when Sphinx reads the configuration (``config-inited``).
``search_terms`` also patches Sphinx's search index builder when set up.
"""
