"""Extensions that work when Sphinx reads the configuration (``config-inited``).

* ``zh_catalogs``: the book's Chinese message catalogs in front of the themes'.
* ``search_terms``: the glossary's terms kept whole in the Chinese search index (also
  patches Sphinx's search index builder when set up).
* ``exercise_starter``: writes book/ch04/exercises-starter.md from the exercise catalog.
"""
