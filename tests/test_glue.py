"""attnbook.pages.glue: named values in myst-nb's glue format, with the raw value as JSON."""

import math

import numpy as np
import pytest

from attnbook.pages import glue as glue_module
from attnbook.pages.glue import GLUE_PREFIX, VALUE_MIME, glue


def test_outside_ipython_it_returns_the_value_and_records_nothing(capsys):
    assert glue("slope", 2.5) == 2.5
    assert capsys.readouterr().out == ""


def test_inside_a_kernel_it_writes_myst_nbs_hidden_glue_output(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.get_ipython", lambda: object())
    monkeypatch.setattr("IPython.display.display", lambda bundle, **kw: shown.append((bundle, kw)))
    glue("errors", [np.float32(3.9e-07), float("nan")])
    (bundle, kw), = shown
    assert kw["raw"] is True
    assert kw["metadata"] == {"scrapbook": {"name": "errors", "mime_prefix": GLUE_PREFIX}}
    assert bundle[GLUE_PREFIX + "text/plain"] == f"{float(np.float32(3.9e-07))!r}、nan"
    assert bundle[GLUE_PREFIX + VALUE_MIME] == {"value": [float(np.float32(3.9e-07)), "nan"]}


def test_the_output_is_a_valid_notebook_output(monkeypatch):
    """nbformat accepts a JSON object only under a ``…json`` MIME type ending in +json."""
    import nbformat

    shown = []
    monkeypatch.setattr("IPython.get_ipython", lambda: object())
    monkeypatch.setattr("IPython.display.display", lambda bundle, **kw: shown.append((bundle, kw)))
    glue("shapes", [[2, 8, 8], [2, 8, 8]])
    (bundle, kw), = shown
    output = nbformat.v4.new_output("display_data", data=bundle, metadata=kw["metadata"])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[output])])
    nbformat.validate(nb)


@pytest.mark.parametrize("value, plain", [
    (np.int64(3), 3), (np.float32(0.5), 0.5), (True, True), ("更快", "更快"),
    ((1, 2.0), [1, 2.0]), (np.array([[1, 2]]), [[1, 2]]),
])
def test_values_become_python_numbers_strings_and_lists(value, plain):
    converted = glue_module._plain(value)
    assert converted == plain and type(converted) is type(plain)


@pytest.mark.parametrize("name", ["", "1st", "has space", "点", None])
def test_a_bad_name_is_a_value_error(name):
    with pytest.raises(ValueError, match="名字"):
        glue(name, 1)


def test_an_object_is_a_value_error():
    with pytest.raises(ValueError, match="object"):
        glue("thing", object())


def test_infinities_are_strings_in_json():
    assert glue_module._json([math.inf, -math.inf, 1.0]) == ["inf", "-inf", 1.0]
