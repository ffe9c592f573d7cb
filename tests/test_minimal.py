"""The manuscript's minimal MiniMultiHeadAttention, copied into attnbook.minimal with one line changed."""

import ast
import difflib
import inspect
from pathlib import Path

import numpy as np
import pytest

import attnbook
import section_texts
from attnbook import minimal, tf
from attnbook.toy import train_stack


def test_the_copy_is_the_manuscripts_but_for_its_assert():
    """Line for line the manuscript's class, but the assert, which ``python -O`` strips, is
    the package's check that raises ValueError."""
    copy = inspect.getsource(minimal.MiniMultiHeadAttention).rstrip().splitlines()
    changed = [line for line in difflib.ndiff(section_texts.layer_class().splitlines(), copy) if line[0] in "+-"]
    assert changed == ["-         assert d_model % num_heads == 0",
                       "+         heads(d_model, num_heads)          # 原稿：assert d_model % num_heads == 0"]


@pytest.mark.parametrize("layer_cls", [minimal.MiniMultiHeadAttention, attnbook.MiniMultiHeadAttention])
@pytest.mark.parametrize("d_model, heads, message", [(10, 3, "divisible"), (32, 0, "positive"), (0, 4, "positive")])
def test_heads_that_do_not_divide_d_model_raise_value_error(layer_cls, d_model, heads, message):
    with pytest.raises(ValueError, match=message):
        layer_cls(d_model, heads)


def test_no_module_of_the_package_checks_with_assert():
    """``python -O`` strips asserts: a check in the package is a raise."""
    package = Path(attnbook.__file__).parent
    asserting = [f"{path.relative_to(package)}:{node.lineno}" for path in sorted(package.rglob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Assert)]
    assert not asserting


@pytest.mark.claim("layer-output-shape")
def test_the_manuscripts_call_prints_2_10_32():
    attn = minimal.MiniMultiHeadAttention(d_model=32, num_heads=4)
    assert attn(tf.random.normal([2, 10, 32])).shape == (2, 10, 32)


def copy_weights(minimal_layer, full_layer):
    for mine, theirs in [(full_layer.wq, minimal_layer.wq), (full_layer.wk, minimal_layer.wk),
                         (full_layer.wv, minimal_layer.wv), (full_layer.wo, minimal_layer.wo)]:
        mine.set_weights(theirs.get_weights())


@pytest.mark.parametrize("d_model, heads, batch, n", [(32, 4, 2, 10), (24, 3, 1, 1), (16, 1, 3, 7)])
def test_the_full_layer_computes_the_same_given_the_same_weights(d_model, heads, batch, n):
    x = tf.random.normal([batch, n, d_model])
    small, full = minimal.MiniMultiHeadAttention(d_model, heads), attnbook.MiniMultiHeadAttention(d_model, heads)
    expected = small(x)
    full(x)
    copy_weights(small, full)
    np.testing.assert_allclose(full(x).numpy(), expected.numpy(), atol=1e-5)


def test_the_full_layer_differs_with_its_own_weights():
    """The comparison above is not vacuous: unrelated weights give other outputs."""
    x = tf.random.normal([2, 10, 32])
    small, full = minimal.MiniMultiHeadAttention(32, 4), attnbook.MiniMultiHeadAttention(32, 4)
    assert float(tf.reduce_max(tf.abs(small(x) - full(x)))) > 1e-2


@pytest.mark.slow
@pytest.mark.claim("stackable")
@pytest.mark.parametrize("layer_cls", [minimal.MiniMultiHeadAttention, attnbook.MiniMultiHeadAttention])
def test_two_stacked_layers_train(layer_cls):
    run = train_stack(layer_cls, depth=2, steps=40)
    assert run["output_shape"] == (16, 10, 32)
    assert run["trainable"] == 16  # 2 layers × 4 projections × (kernel, bias)
    assert run["losses"][-1] < 0.5 * run["losses"][0]
