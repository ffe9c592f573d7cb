"""The book's own Sphinx extensions, one package laid out by build phase.

Each subpackage holds the extensions whose main work happens in one phase of a Sphinx
build; a module that connects to events of several phases sits where its main work is,
and its subpackage's docstring says what else it connects to.

* ``config``: when Sphinx reads the configuration (``config-inited``).
* ``reading``: while the pages are executed and read (``env-before-read-docs``,
  transforms, directives, environment collectors, ``doctree-read``, ``env-get-updated``).
* ``resolving``: once every page is read (``env-check-consistency``, post-transforms,
  ``doctree-resolved``).
* ``writing``: while each page becomes HTML (HTML translators, ``html-page-context``).
* ``after``: once every page is on disk (``build-finished``).
* ``shared``: helpers used by more than one extension (or by tools/); no extensions.
* ``static``: the browser scripts the extensions inline into the pages that need them
  (not ``book/_static``, whose scripts every page would load).

The repository's root is on the Python path (``local_extensions`` in _config.yml for the
build, ``pythonpath`` in pytest.ini for the tests), so every module has one name,
``book._ext.<phase>.<module>``; ``book`` itself is a namespace package. _config.yml's
``sphinx.config.extensions`` names every extension module by that name
(tests/test_extensions_config.py checks it). An extension imports another's helpers
only from ``shared``, never a sibling's private name.

The files of this package, scripts included, are hashed into the ``env_version`` of
``reading/execution.py``: an edit to any of them makes Sphinx read every page again.
"""
