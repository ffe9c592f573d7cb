"""Tests of the long-sequence variants in attnbook.efficient."""

import keras
import numpy as np
import pytest

from attnbook import scaled_dot_product_attention, tf
from attnbook.measurements import prepare_variant, run_variant
from attnbook.cost import peak_memory, score_table
from attnbook.efficient import (
    chunked_attention,
    elu_plus_one,
    linear_attention,
    sliding_window_attention,
)


def normal(*shape, seed=0, dtype="float32"):
    return tf.constant(np.random.default_rng(seed).normal(size=shape), dtype=dtype)


def qkv(n_q, n_k=None, d=8, d_v=4, lead=(2, 3), seed=0):
    n_k = n_q if n_k is None else n_k
    return (normal(*lead, n_q, d, seed=seed), normal(*lead, n_k, d, seed=seed + 1),
            normal(*lead, n_k, d_v, seed=seed + 2))


def band(n_q, n_k, window, causal=False):
    offset = np.arange(n_q)[:, None] - np.arange(n_k)[None, :]  # i - j
    allowed = np.abs(offset) <= window
    return allowed & (offset >= 0) if causal else allowed


def full(query, key, value, mask=None):
    return scaled_dot_product_attention(query, key, value, mask)[0].numpy()


def random_mask(shape, seed=3, p=0.3):
    return np.random.default_rng(seed).random(shape) > p


def largest_intermediate(fn, *specs):
    """Elements of the largest tensor in ``fn``'s graph, nested loop bodies included."""
    graph = tf.function(fn).get_concrete_function(*specs).graph
    seen, largest = set(), 0
    graphs = [graph]
    while graphs:
        g = graphs.pop()
        for op in g.get_operations():
            for out in op.outputs:
                if out.shape.is_fully_defined():
                    largest = max(largest, out.shape.num_elements())
            for attr in ("body", "cond", "then_branch", "else_branch"):
                if attr in op.node_def.attr:
                    name = op.get_attr(attr).name
                    if name not in seen:
                        seen.add(name)
                        graphs.append(g._get_function(name).graph)  # noqa: SLF001
    return largest


# --- sliding window ------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_q, n_k, window, causal",
    [
        (10, 10, 2, False),
        (10, 10, 2, True),
        (200, 200, 5, False),  # several blocks, n not a multiple of the block
        (130, 130, 70, True),  # window larger than the minimum block
        (40, 25, 3, False),  # more queries than keys
        (25, 90, 10, True),  # more keys than queries
        (12, 12, 50, False),  # the window covers everything: full attention
        (1, 1, 1, False),
    ],
)
def test_sliding_window_equals_band_masked_attention(n_q, n_k, window, causal):
    q, k, v = qkv(n_q, n_k)
    out = sliding_window_attention(q, k, v, window, causal=causal)
    assert out.shape == (2, 3, n_q, 4)
    np.testing.assert_allclose(out.numpy(), full(q, k, v, band(n_q, n_k, window, causal)), atol=1e-5)


def test_sliding_window_is_not_full_attention():
    q, k, v = qkv(50)
    out = sliding_window_attention(q, k, v, 3).numpy()
    assert np.abs(out - full(q, k, v)).max() > 1e-2


@pytest.mark.parametrize("mask_shape", [(2, 1, 70, 90), (1, 90), (2, 3, 70, 1), (70, 90), (1, 1)])
def test_sliding_window_combines_user_mask_with_band(mask_shape):
    q, k, v = qkv(70, 90)
    mask = random_mask(mask_shape)
    expected = full(q, k, v, band(70, 90, 6) & mask)
    out = sliding_window_attention(q, k, v, 6, mask=tf.constant(mask))
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-5)


def test_sliding_window_row_without_allowed_key_is_zero():
    q, k, v = qkv(20)
    mask = np.ones((20, 20), bool)
    mask[3, :] = False  # query 3 may see nothing
    mask[7, 5:10] = False  # query 7's whole band (window 2) is masked
    out = sliding_window_attention(q, k, v, 2, mask=tf.constant(mask)).numpy()
    assert np.all(np.isfinite(out))
    assert np.all(out[..., 3, :] == 0) and np.all(out[..., 7, :] == 0)
    assert np.all(np.abs(out[..., 8, :]).sum(-1) > 0)


def _keras_heads(layer, x):
    """Project x with a Keras MultiHeadAttention's own weights: (batch, heads, n, depth)."""
    def project(dense):
        kernel, bias = dense.get_weights()
        return tf.einsum("bnd,dhk->bhnk", x, kernel) + bias[:, None, :]

    return project(layer._query_dense), project(layer._key_dense), project(layer._value_dense)


@pytest.mark.parametrize("window, causal", [(1, False), (4, False), (4, True), (9, True)])
def test_sliding_window_matches_keras_sliding_window(window, causal):
    # Keras's band is |i - j| < sliding_window, i.e. window = sliding_window - 1.
    x = normal(2, 150, 16)
    ref = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8, sliding_window=window + 1)
    theirs = ref(x, x, use_causal_mask=causal)
    q, k, v = _keras_heads(ref, x)
    heads = sliding_window_attention(q, k, v, window, causal=causal)  # (2, 2, 150, 8)
    kernel, bias = ref._output_dense.get_weights()
    ours = tf.einsum("bhnk,hkd->bnd", heads, kernel) + bias
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)


@pytest.mark.claim("linear-variants")
def test_a_small_sliding_window_never_builds_the_n_by_n_table():
    n, d = 4096, 16
    spec = tf.TensorSpec([1, n, d])
    largest = largest_intermediate(lambda q, k, v: sliding_window_attention(q, k, v, 8), spec, spec, spec)
    assert largest < n * n / 16
    dense = largest_intermediate(lambda q, k, v: full_attention_output(q, k, v), spec, spec, spec)
    assert dense >= n * n  # the probe sees the table when there is one


def test_sliding_window_masks_cost_what_its_docstring_says():
    """A key padding mask (…, 1, n_k) keeps the cost linear; a full (…, n_q, n_k) mask is
    copied whole (the docstring tells readers to pass the padding mask instead)."""
    n, d = 4096, 16
    spec = tf.TensorSpec([1, n, d])
    window = lambda q, k, v, m: sliding_window_attention(q, k, v, 8, mask=m)  # noqa: E731
    unmasked = largest_intermediate(lambda q, k, v: sliding_window_attention(q, k, v, 8), spec, spec, spec)
    padding = largest_intermediate(window, spec, spec, spec, tf.TensorSpec([1, 1, n], tf.bool))
    assert padding <= unmasked < n * n / 16
    full = largest_intermediate(window, spec, spec, spec, tf.TensorSpec([1, n, n], tf.bool))
    assert full >= n * n


def full_attention_output(q, k, v):
    return scaled_dot_product_attention(q, k, v)[0]


def test_sliding_window_gradients_match_band_masked_attention():
    q, k, v = qkv(80, d=4, d_v=4, lead=(1,))
    mask = band(80, 80, 5, causal=True)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([q, k, v])
        ours = tf.reduce_sum(sliding_window_attention(q, k, v, 5, causal=True) ** 2)
        theirs = tf.reduce_sum(scaled_dot_product_attention(q, k, v, mask)[0] ** 2)
    for a, b in zip(tape.gradient(ours, [q, k, v]), tape.gradient(theirs, [q, k, v])):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


# --- linear attention ----------------------------------------------------------------


def naive_linear(query, key, value, feature_map=elu_plus_one, causal=False):
    """The same kernelized formula, with the explicit n_q × n_k table."""
    a = tf.matmul(feature_map(query), feature_map(key), transpose_b=True).numpy()
    if causal:
        a = a * band(a.shape[-2], a.shape[-1], max(a.shape[-2:]), causal=True)
    num, den = a @ value.numpy(), a.sum(-1, keepdims=True)
    return np.divide(num, den, out=np.zeros_like(num), where=den != 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_q, n_k, chunk", [(50, 50, 8), (64, 64, 64), (30, 45, 7), (45, 30, 16), (5, 5, 100)])
def test_linear_attention_equals_naive_kernel_formula(n_q, n_k, chunk, causal):
    q, k, v = qkv(n_q, n_k)
    out = linear_attention(q, k, v, causal=causal, chunk_size=chunk)
    assert out.shape == (2, 3, n_q, 4)
    np.testing.assert_allclose(out.numpy(), naive_linear(q, k, v, causal=causal), atol=1e-4, rtol=1e-4)


def test_linear_attention_custom_feature_map_and_zero_normaliser():
    q, k, v = qkv(20)
    relu = tf.nn.relu
    q = tf.concat([-tf.abs(q[..., :1, :]), q[..., 1:, :]], -2)  # query 0: all features 0
    out = linear_attention(q, k, v, feature_map=relu, causal=True, chunk_size=6).numpy()
    np.testing.assert_allclose(out, naive_linear(q, k, v, relu, causal=True), atol=1e-4, rtol=1e-4)
    assert np.all(np.isfinite(out)) and np.all(out[..., 0, :] == 0)


def test_causal_linear_attention_ignores_the_future():
    q, k, v = qkv(40)
    changed_k = tf.concat([k[..., :25, :], k[..., 25:, :] + 3.0], -2)
    a = linear_attention(q, k, v, causal=True, chunk_size=8).numpy()
    b = linear_attention(q, changed_k, v, causal=True, chunk_size=8).numpy()
    np.testing.assert_array_equal(a[..., :25, :], b[..., :25, :])
    assert np.abs(a[..., 25:, :] - b[..., 25:, :]).max() > 1e-3


@pytest.mark.claim("linear-variants")
@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_never_builds_the_n_by_n_table(causal):
    n, d = 4096, 16
    spec = tf.TensorSpec([1, n, d])
    fn = lambda q, k, v: linear_attention(q, k, v, causal=causal, chunk_size=32)  # noqa: E731
    assert largest_intermediate(fn, spec, spec, spec) < n * n / 16


# --- chunked (online softmax) --------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 7, 16, 100])
@pytest.mark.parametrize("n_q, n_k", [(16, 16), (9, 23)])
def test_chunked_attention_equals_full_attention(n_q, n_k, chunk):
    q, k, v = qkv(n_q, n_k)
    out = chunked_attention(q, k, v, chunk)
    assert out.shape == (2, 3, n_q, 4)
    np.testing.assert_allclose(out.numpy(), full(q, k, v), atol=1e-5)


@pytest.mark.parametrize("mask_shape", [(2, 3, 9, 23), (1, 23), (2, 1, 9, 1), (9, 23)])
def test_chunked_attention_with_masks(mask_shape):
    q, k, v = qkv(9, 23)
    mask = random_mask(mask_shape, p=0.6)
    out = chunked_attention(q, k, v, 5, mask=tf.constant(mask))
    np.testing.assert_allclose(out.numpy(), full(q, k, v, mask), atol=1e-5)


def test_chunked_attention_fully_masked_rows_are_zero_not_nan():
    q, k, v = qkv(6, 12)
    mask = np.ones((6, 12), bool)
    mask[1] = False  # query 1 sees nothing
    mask[4, :8] = False  # query 4's first two chunks are masked, later ones are not
    out = chunked_attention(q, k, v, 4, mask=tf.constant(mask)).numpy()
    assert np.all(np.isfinite(out)) and np.all(out[..., 1, :] == 0)
    np.testing.assert_allclose(out, full(q, k, v, mask), atol=1e-5)


def test_chunked_attention_survives_large_scores():
    q, k, v = qkv(8, 20)
    out = chunked_attention(q * 300.0, k * 300.0, v, 3).numpy()  # exp() would overflow
    np.testing.assert_allclose(out, full(q * 300.0, k * 300.0, v), atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_chunked_attention_half_precision(dtype):
    q, k, v = (tf.cast(t, dtype) for t in qkv(10, 14))
    mask = np.ones((10, 14), bool)
    mask[2] = False
    out = chunked_attention(q, k, v, 4, mask=tf.constant(mask))
    assert out.dtype == dtype
    ref = full(*(tf.cast(t, "float32") for t in (q, k, v)), mask)
    np.testing.assert_allclose(tf.cast(out, "float32").numpy(), ref, atol=3e-2)
    assert np.all(tf.cast(out, "float32").numpy()[..., 2, :] == 0)


def test_chunked_attention_in_float64():
    q, k, v = (tf.cast(t, "float64") for t in qkv(10, 14))
    out = chunked_attention(q, k, v, 4)
    assert out.dtype == "float64"
    np.testing.assert_allclose(out.numpy(), full(q, k, v), atol=1e-12)


@pytest.mark.parametrize("attend", [
    lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    lambda q, k, v: sliding_window_attention(q, k, v, 2),
    lambda q, k, v: chunked_attention(q, k, v, 4),
    lambda q, k, v: linear_attention(q, k, v),
])
def test_value_batch_axes_that_do_not_broadcast_are_a_value_error(attend):
    q, k, v = qkv(10)   # (2, 3, 10, ·)
    with pytest.raises(ValueError, match="value's batch axes must broadcast"):
        attend(q, k, v[:, :2])


def test_chunked_attention_in_tf_function_and_gradients():
    q, k, v = qkv(12, 20, lead=(2,))
    mask = tf.constant(random_mask((12, 20)))
    fn = tf.function(lambda q, k, v: chunked_attention(q, k, v, 6, mask))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([q, k, v])
        ours = tf.reduce_sum(fn(q, k, v) ** 2)
        theirs = tf.reduce_sum(scaled_dot_product_attention(q, k, v, mask)[0] ** 2)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)
    for a, b in zip(tape.gradient(ours, [q, k, v]), tape.gradient(theirs, [q, k, v])):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


def test_chunked_attention_never_builds_the_n_by_n_table():
    n, d = 4096, 16
    spec = tf.TensorSpec([1, n, d])
    fn = lambda q, k, v: chunked_attention(q, k, v, 64)  # noqa: E731
    assert largest_intermediate(fn, spec, spec, spec) <= n * 64


@pytest.mark.slow
def test_chunked_attention_peak_memory_stays_below_the_score_table():
    """Measured in fresh processes at n = 16384, where the score table is 1 GiB: full
    attention needs more than a quarter of it, chunked attention stays under that."""
    n, d = 16384, 64
    table = score_table(n)["bytes"]
    assert table >= 2**30
    bound = table // 4
    setup = dict(setup=prepare_variant, setup_args=("full", 1, 1, n, d))
    dense = peak_memory(run_variant, "full", **setup)
    assert dense.growth_bytes > bound  # the meter sees the table when there is one
    setup["setup_args"] = ("chunked", 1, 1, n, d)
    chunked = peak_memory(run_variant, "chunked", **setup)
    assert chunked.growth_bytes < bound


# --- input validation ----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda q, k, v: sliding_window_attention(q, k, v, 0), "window must be a positive integer, got 0"),
        (lambda q, k, v: sliding_window_attention(q, k, v, -2), "window must be a positive integer"),
        (lambda q, k, v: sliding_window_attention(q, k, v, 1.5), "window must be a positive integer"),
        (lambda q, k, v: sliding_window_attention(q, k, v, True), "window must be a positive integer"),
        (lambda q, k, v: chunked_attention(q, k, v, 0), "chunk_size must be a positive integer, got 0"),
        (lambda q, k, v: chunked_attention(q, k, v, None), "chunk_size must be a positive integer"),
        (lambda q, k, v: linear_attention(q, k, v, chunk_size=-1), "chunk_size must be a positive integer"),
        (lambda q, k, v: linear_attention(q, k, v, feature_map="elu"), "feature_map must be callable"),
        (lambda q, k, v: sliding_window_attention(q, k[..., :3], v, 2), "same last dimension d_k"),
        (lambda q, k, v: chunked_attention(q, k, v[..., :5, :], 2), "same number of positions n_k"),
        (lambda q, k, v: linear_attention(q[0, 0, 0], k, v), "rank >= 2"),
        (lambda q, k, v: sliding_window_attention(q, k, v, 2, mask=tf.ones([10, 10])), "must be boolean"),
        (lambda q, k, v: sliding_window_attention(q, k, v, 2, mask=tf.ones([9, 10], tf.bool)), "cannot broadcast"),
        (lambda q, k, v: chunked_attention(q, k, v, 2, mask=tf.ones([10, 3], tf.bool)), "cannot broadcast"),
    ],
)
def test_bad_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call(*qkv(10))


@pytest.mark.parametrize("attend", [
    lambda q, k, v, mask: scaled_dot_product_attention(q, k, v, mask)[0],
    lambda q, k, v, mask: sliding_window_attention(q, k, v, 2, mask=mask),
    lambda q, k, v, mask: chunked_attention(q, k, v, 4, mask=mask),
])
@pytest.mark.parametrize("mask", [None, tf.ones([10, 10], tf.bool)])
def test_batch_axes_that_do_not_broadcast_are_one_value_error_everywhere(attend, mask):
    """The layer and the variants check query against key the same way, mask or not."""
    q, k, v = qkv(10)   # (2, 3, 10, 4)
    with pytest.raises(ValueError, match="batch axes must broadcast"):
        attend(q, k[:1, :2], v[:1, :2], mask)


@pytest.mark.parametrize(
    "fn",
    [
        lambda q, k, v: sliding_window_attention(q, k, v, 2),
        lambda q, k, v: chunked_attention(q, k, v, 2),
        lambda q, k, v: linear_attention(q, k, v, causal=True),
    ],
)
def test_unknown_sequence_length_raises_value_error(fn):
    spec = tf.TensorSpec([1, None, 8])
    with pytest.raises(ValueError, match="known sequence length"):
        tf.function(fn).get_concrete_function(spec, spec, spec)


def test_non_causal_linear_attention_accepts_unknown_length():
    spec = tf.TensorSpec([1, None, 8])
    fn = tf.function(lambda q, k, v: linear_attention(q, k, v)).get_concrete_function(spec, spec, spec)
    q, k, v = qkv(7, lead=(1,), d_v=8)
    np.testing.assert_allclose(fn(q, k, v).numpy(), naive_linear(q, k, v), atol=1e-4, rtol=1e-4)
