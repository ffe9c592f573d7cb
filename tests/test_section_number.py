"""The section number is written once, in the exercise catalog; the book's number formats
and the exercises' prefix take it from there (book/_ext/reading/numbering.py)."""

from types import SimpleNamespace

import yaml

from attnbook.exercises.catalog import SECTION
from book._ext.reading import numbering
from buildfiles import ROOT


def _sphinx_config():
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]


def test_the_config_writes_no_section_number_in_its_formats():
    config = _sphinx_config()
    formats = [*config["numfig_format"].values(), config["editorial_figure_format"]]
    assert not [f for f in formats if SECTION in f], formats
    assert all("{section}" in f for f in formats if f != "%s"), formats
    assert "exercise" not in config.get("enumerable_prefix", {})


def test_the_formats_and_the_exercise_prefix_take_the_catalogs_section():
    raw = _sphinx_config()
    config = SimpleNamespace(numfig_format=dict(raw["numfig_format"]),
                             editorial_figure_format=raw["editorial_figure_format"],
                             enumerable_prefix={})
    numbering._section_numbers(None, config)
    assert config.editorial_figure_format.format(3) == f"编者图 {SECTION}-3"
    assert config.numfig_format["table"] % 2 == f"编者表 {SECTION}-2"
    assert config.enumerable_prefix["exercise"] == [int(n) for n in SECTION.split(".")]


def test_the_extensions_read_the_catalogs_section_without_importing_it():
    """checkout.section_number reads the catalog's source (no TensorFlow for a small book)."""
    from book._ext.shared.checkout import section_number

    assert section_number() == SECTION
