"""Extensions that work while the pages are executed and read.

* ``execution``: runs the pages that miss the execution cache before Sphinx reads them
  (``env-before-read-docs``) and writes each executed notebook (``doctree-read``); at
  ``config-inited`` it names the cache folder after the code's key.
* ``cjk_linebreaks``: a transform that removes the line breaks left inside wrapped
  Chinese sentences.
* ``editorial``: the editor's layer: its directives and environment collector; at
  ``doctree-resolved`` it fills the list of notes, at ``html-page-context`` it adds the
  view switch.
* ``signatures``: at ``autodoc-process-signature``, a Keras class's signature from its
  ``__init__`` (autodoc would show the ``(*args, **kwargs)`` of ``Layer.__new__``).
* ``numbering``: numbers the figures and exercises once every page is read
  (``env-get-updated``); at ``config-inited`` it takes the section number from the
  exercise catalog, and a post-transform makes exercise titles' parentheses full-width.
"""
