"""Extensions that work once every page is read: the consistency check, post-transforms
and ``doctree-resolved`` (Sphinx counts the consistency check as resolving too).

Elsewhere too: ``claims`` records cells and values while pages are read and wraps the
HTML translator at ``builder-inited``; ``figures`` adds its scripts at
``html-page-context`` and removes stale fixtures at ``build-finished``;
``glossary_links`` reads the glossary's anchors at ``config-inited``.
"""
