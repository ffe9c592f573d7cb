"""Helpers that more than one extension needs (tools/pdfbook too), each written once here.

* ``checkout``: facts of the checkout: its commit, the companion package's version, a
  digest of a file tree, the address the repository's site is published at.
* ``nodes``: whether a node of a doctree sits inside code.
* ``env``: the per-page stores an environment collector keeps on the environment.
* ``translators``: a mixin put in front of the HTML translators.
* ``glossary``: the ``{glossary}`` block of the glossary page.
* ``scripts``: the browser scripts of ``book/_ext/static``.

Nothing here connects to an event; these modules are not extensions.
"""
