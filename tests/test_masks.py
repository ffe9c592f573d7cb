"""Tests of attnbook.masks: building masks, combining them, and what they guarantee."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook import MiniMultiHeadAttention, scaled_dot_product_attention, tf
from attnbook.masks import (
    causal_mask,
    combine_masks,
    padding_leak,
    padding_mask,
    padding_mask_from_tokens,
)
from attnbook.toy import padded_batch

HALF_AND_FULL = ["float32", "float16", "bfloat16"]


def normal(*shape, seed=0, dtype="float32"):
    return tf.constant(np.random.default_rng(seed).normal(size=shape), dtype=dtype)


# --- building masks ------------------------------------------------------------------


def test_padding_mask_marks_real_keys():
    mask = padding_mask([2, 0, 4], max_len=4).numpy()
    assert mask.shape == (3, 1, 4) and mask.dtype == bool
    np.testing.assert_array_equal(
        mask[:, 0], [[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]
    )


def test_padding_mask_with_n_q_repeats_the_row():
    mask = padding_mask(np.array([1, 3]), max_len=3, n_q=5).numpy()
    assert mask.shape == (2, 5, 3)
    assert np.all(mask == mask[:, :1])


def test_padding_mask_from_tokens_matches_lengths():
    tokens = np.array([[5, 3, 0, 0], [7, 1, 2, 9]])
    np.testing.assert_array_equal(
        padding_mask_from_tokens(tokens, pad_id=0).numpy(), padding_mask([2, 4], 4).numpy()
    )


def test_causal_mask_is_lower_triangular():
    np.testing.assert_array_equal(causal_mask(4).numpy(), np.tril(np.ones((4, 4), bool)))


def test_padding_and_causal_combine_as_logical_and():
    lengths, n = [3, 5], 5
    mask = combine_masks(padding_mask(lengths, n), causal_mask(n)).numpy()
    assert mask.shape == (2, n, n)
    q, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    for b, length in enumerate(lengths):
        np.testing.assert_array_equal(mask[b], (k <= q) & (k < length))


@pytest.mark.parametrize(
    "args, match",
    [
        (([2, -1], 4), ">= 0"),
        (([2, 5], 4), "<= max_len=4"),
        (([2.0, 3.0], 4), "must be integers"),
        (([[2, 3]], 4), "must be 1-D"),
        (("ab", 4), "integers"),
        (([2, 3], 0), "max_len must be a positive integer"),
        (([2, 3], 4.0), "max_len must be a positive integer"),
    ],
)
def test_padding_mask_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        padding_mask(*args)


def test_padding_mask_bad_n_q():
    with pytest.raises(ValueError, match="n_q must be a positive integer"):
        padding_mask([1], 2, n_q=0)


@pytest.mark.parametrize(
    "tokens, pad_id, match",
    [
        (np.ones((2, 3), np.float32), 0, "integer ids"),
        (np.ones(3, np.int32), 0, "2-D"),
        (np.ones((2, 3), np.int32), 0.5, "pad_id must be an integer"),
    ],
)
def test_padding_mask_from_tokens_bad_input(tokens, pad_id, match):
    with pytest.raises(ValueError, match=match):
        padding_mask_from_tokens(tokens, pad_id)


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_causal_mask_bad_size(n):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        causal_mask(n)


@pytest.mark.parametrize(
    "masks, match",
    [
        ((), "at least one mask"),
        ((tf.ones([2, 2]),), "mask 0 must be boolean"),
        ((causal_mask(3), causal_mask(4)), r"broadcast together, got shapes \(3, 3\), \(4, 4\)"),
    ],
)
def test_combine_masks_bad_input(masks, match):
    with pytest.raises(ValueError, match=match):
        combine_masks(*masks)


# --- what masks guarantee ------------------------------------------------------------


@pytest.mark.claim("mask-to-minus-infinity")
def test_masked_positions_get_exactly_zero_weight():
    lengths, n = [2, 4, 1], 4
    mask = combine_masks(padding_mask(lengths, n), causal_mask(n))
    q, k, v = normal(3, n, 8), normal(3, n, 8, seed=1), normal(3, n, 2, seed=2)
    _, w = scaled_dot_product_attention(q, k, v, mask)
    w, allowed = w.numpy(), mask.numpy()
    assert np.all(w[~allowed] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)  # every row here has a key


@pytest.mark.parametrize("dtype", HALF_AND_FULL)
def test_rows_without_keys_give_zeros_not_nan(dtype):
    # A length-0 sequence: every row of it has no allowed key.
    mask = padding_mask([0, 3], max_len=3)
    out, w = scaled_dot_product_attention(
        normal(2, 3, 4, dtype=dtype), normal(2, 3, 4, seed=1, dtype=dtype),
        normal(2, 3, 5, seed=2, dtype=dtype), mask,
    )
    assert out.dtype == dtype and w.dtype == dtype
    out, w = out.numpy().astype(np.float32), w.numpy().astype(np.float32)
    assert np.all(w[0] == 0.0) and np.all(out[0] == 0.0)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    np.testing.assert_allclose(w[1].sum(-1), 1.0, atol=1e-2)


@pytest.mark.parametrize("dtype", HALF_AND_FULL)
def test_layer_rows_without_keys_give_zero_weights_not_nan(dtype):
    layer = MiniMultiHeadAttention(d_model=8, num_heads=2, dtype=dtype)
    x = normal(2, 4, 8, dtype=dtype)
    # Padding on keys AND on queries: the padded query rows have no allowed key.
    real = padding_mask([2, 4], 4)[:, 0]  # (batch, n)
    mask = combine_masks(real[:, None, :], real[:, :, None])
    out, w = layer(x, attention_mask=mask, return_attention_scores=True)
    out, w = out.numpy().astype(np.float32), w.numpy().astype(np.float32)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    assert np.all(w[0, :, 2:] == 0.0)  # padded query rows: all-zero weights
    # ...so their output is the output projection of zero: its bias, zero at init.
    np.testing.assert_array_equal(out[0, 2:], 0.0)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 3),
    n=st.integers(1, 7),
    d=st.integers(1, 6),
    data=st.data(),
)
def test_outputs_at_real_positions_ignore_padding_values(batch, n, d, data):
    lengths = data.draw(st.lists(st.integers(0, n), min_size=batch, max_size=batch),
                        label="lengths")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    real = np.arange(n)[None, :] < np.array(lengths)[:, None]  # (batch, n)
    mask = padding_mask(lengths, n)

    def with_padding(values):
        noise = rng.normal(scale=10.0, size=values.shape)
        return np.where(real[..., None], values, noise).astype(np.float32)

    # The function: keys and values at padded positions do not matter for any query.
    q, k, v = (rng.normal(size=(batch, n, d)).astype(np.float32) for _ in range(3))
    out_a, w_a = scaled_dot_product_attention(q, with_padding(k), with_padding(v), mask)
    out_b, w_b = scaled_dot_product_attention(q, with_padding(k), with_padding(v), mask)
    np.testing.assert_array_equal(out_a.numpy(), out_b.numpy())
    assert np.all(w_a.numpy()[~np.broadcast_to(mask.numpy(), w_a.shape)] == 0.0)

    # The layer: outputs at real positions do not depend on the padded inputs.
    layer = MiniMultiHeadAttention(d_model=4, num_heads=2)
    x = rng.normal(size=(batch, n, d)).astype(np.float32)
    out_a = layer(with_padding(x), attention_mask=mask).numpy()
    out_b = layer(with_padding(x), attention_mask=mask).numpy()
    np.testing.assert_array_equal(out_a[real], out_b[real])


# --- the pitfall: forgetting the mask ---------------------------------------------------


@pytest.mark.claim("padding-steals-weight")
def test_padding_leaks_without_mask_and_not_with_it():
    lengths = [5, 8, 3]
    x = padded_batch(lengths, features=16, seed=0)
    leak = padding_leak(MiniMultiHeadAttention(16, 4), x, lengths)
    assert leak.change_unmasked > 1e-2  # the padding's values reach real outputs
    assert leak.pad_weight_unmasked > 0.1  # and the padding takes a visible share
    assert leak.change_masked == 0.0
    assert leak.pad_weight_masked == 0.0
    assert leak.weights_unmasked.shape == leak.weights_masked.shape == (3, 4, 8, 8)


def test_padded_batch_is_zero_after_each_length():
    x = padded_batch([1, 3], max_len=4, features=2, seed=0)
    assert x.shape == (2, 4, 2) and x.dtype == np.float32
    assert np.all(x[0, 1:] == 0) and np.all(x[1, 3:] == 0) and np.all(x[1, :3] != 0)
    with pytest.raises(ValueError, match="<= max_len=2"):
        padded_batch([3], max_len=2)


def test_padding_mask_inside_tf_function():
    # Lengths unknown at trace time: the values are not checked, the mask still works.
    build = tf.function(lambda lengths: padding_mask(lengths, 4)).get_concrete_function(
        tf.TensorSpec([None], tf.int32)
    )
    np.testing.assert_array_equal(build(tf.constant([1, 3])).numpy()[:, 0],
                                  [[1, 0, 0, 0], [1, 1, 1, 0]])
