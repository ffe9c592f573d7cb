"""The manuscript's minimal MiniMultiHeadAttention, kept verbatim in attnbook.minimal."""

import inspect

import numpy as np
import pytest

import attnbook
import manuscript
from attnbook import minimal, tf
from attnbook.toy import train_stack


def test_the_listing_is_the_manuscripts_word_for_word():
    listing = next(body for body in manuscript.listings() if body.startswith("class MiniMultiHeadAttention"))
    class_part = listing.split("\n\nattn = ")[0]
    assert inspect.getsource(minimal.MiniMultiHeadAttention).rstrip() == class_part.rstrip()


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
