"""The book's one list of Sphinx extensions (``sphinx.config.extensions`` in _config.yml).

Jupyter Book replaces its own list, and whatever ``extra_extensions`` or the names of
``local_extensions`` add to it, with ``sphinx.config.extensions``: that list alone is
loaded. It must name every module of book/_ext, and nothing that is neither there nor
installed.
"""

import importlib.util

import pytest
import yaml

from buildfiles import ROOT

EXT = ROOT / "book" / "_ext"
SPHINX = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
LISTED = SPHINX["config"]["extensions"]


def test_the_list_names_every_module_of_book_ext():
    modules = sorted(path.stem for path in EXT.glob("*.py"))
    missing = [name for name in modules if name not in LISTED]
    assert not missing, f"book/_ext modules that _config.yml's sphinx.config.extensions does not name: {missing}"


@pytest.mark.build  # the book's environment: the wheel's venv has no third-party extension
def test_the_list_names_nothing_else():
    """Every other name is an installed module (a stray name would also fail the build)."""
    stray = [name for name in LISTED
             if not (EXT / f"{name}.py").is_file() and importlib.util.find_spec(name) is None]
    assert not stray, f"sphinx.config.extensions names what is neither in book/_ext nor installed: {stray}"


def test_one_list_that_names_each_extension_once():
    twice = sorted({name for name in LISTED if LISTED.count(name) > 1})
    assert not twice, f"sphinx.config.extensions names these more than once: {twice}"
    assert "extra_extensions" not in SPHINX, "extra_extensions is not loaded: name the extension in sphinx.config.extensions"
    assert set(SPHINX.get("local_extensions", {}).values()) <= {"book/_ext"}, \
        "local_extensions only puts book/_ext on the Python path"
