"""Extensions that work while the pages are executed and read: ``env-before-read-docs``,
transforms, directives, environment collectors, ``doctree-read``, ``env-get-updated``.

Elsewhere too: ``execution`` names its cache folder at ``config-inited``; ``editorial``
fills the list of notes at ``doctree-resolved`` and adds the view switch at
``html-page-context``; ``numbering`` takes the section number at ``config-inited`` and
makes exercise titles' parentheses full-width in a post-transform.
"""
