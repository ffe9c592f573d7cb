"""Helpers that more than one extension needs (tools/pdfbook too), each written once here.

* ``checkout``: facts of the checkout: its commit, the companion package's version, a
  digest of a file tree, the address the repository's site is published at.
* ``nodes``: a node's ancestors, whether it sits inside code, and an internal link.
* ``env``: the base of the environment collectors that keep one store per page.
* ``translators``: a mixin put in front of the HTML translators.
* ``glossary``: the ``{glossary}`` block of the glossary page.
* ``scripts``: the browser scripts of ``book/_ext/static``.

Nothing here connects to an event; these modules are not extensions.
"""
