"""Tests of scaled_dot_product_attention and MiniMultiHeadAttention (the contracts in CONTRIBUTING.md)."""

import keras
import numpy as np
import pytest

from attnbook import MiniMultiHeadAttention, masked_softmax, scaled_dot_product_attention, tf
from attnbook.parallel import reach


def normal(*shape, seed=0, dtype="float32"):
    return tf.constant(np.random.default_rng(seed).normal(size=shape), dtype=dtype)


# --- scaled_dot_product_attention --------------------------------------------------


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape",
    [
        ((2, 8, 8), (2, 8, 8), (2, 8, 8)),  # the manuscript's walkthrough
        ((2, 4, 10, 8), (2, 4, 10, 8), (2, 4, 10, 8)),  # (batch, heads, seq, depth)
        ((2, 6, 32), (2, 20, 32), (2, 20, 5)),  # cross-attention, d_v != d_k
        ((3, 4), (7, 4), (7, 2)),  # rank 2, no batch
        ((1, 1, 1), (1, 1, 1), (1, 1, 1)),
    ],
)
def test_shapes(q_shape, k_shape, v_shape):
    out, w = scaled_dot_product_attention(normal(*q_shape), normal(*k_shape), normal(*v_shape))
    assert out.shape == q_shape[:-1] + v_shape[-1:]
    assert w.shape == q_shape[:-1] + k_shape[-2:-1]


@pytest.mark.claim("weights-sum-to-one")
def test_weight_rows_sum_to_one_and_are_positive():
    _, w = scaled_dot_product_attention(normal(2, 8, 8), normal(2, 8, 8, seed=1), normal(2, 8, 8))
    np.testing.assert_allclose(tf.reduce_sum(w, -1).numpy(), 1.0, atol=1e-6)
    assert np.all(w.numpy() > 0)


def test_matches_numpy_reference():
    q, k, v = normal(2, 5, 4), normal(2, 7, 4, seed=1), normal(2, 7, 3, seed=2)
    s = q.numpy() @ k.numpy().transpose(0, 2, 1) / np.sqrt(4)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out, weights = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(weights.numpy(), w, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), w @ v.numpy(), atol=1e-5)


def test_scales_by_query_depth():
    # With one key pair, exp-ratio of two weights reveals the scale: log(w0/w1) = Δs / √d_k.
    d_k = 16
    q = tf.ones([1, 1, d_k])
    k = tf.stack([tf.ones([d_k]), tf.zeros([d_k])])[None]
    _, w = scaled_dot_product_attention(q, k, tf.zeros([1, 2, 1]))
    w = w.numpy()[0, 0]
    assert np.log(w[0] / w[1]) == pytest.approx(d_k / np.sqrt(d_k), rel=1e-5)


@pytest.mark.claim("mask-to-minus-infinity")
def test_mask_zeroes_weights_and_empty_row_gives_zeros():
    mask = tf.constant([[True, False, True], [False, False, False]])
    out, w = scaled_dot_product_attention(normal(2, 4), normal(3, 4), normal(3, 2), mask=mask)
    w = w.numpy()
    assert w[0, 1] == 0.0
    assert w[0].sum() == pytest.approx(1.0, abs=1e-6)
    assert np.all(w[1] == 0.0) and np.all(out.numpy()[1] == 0.0)


@pytest.mark.parametrize(
    "args, match",
    [
        ((normal(4), normal(3, 4), normal(3, 4)), "rank >= 2"),
        ((normal(2, 4), normal(3, 5), normal(3, 4)), "same last dimension d_k"),
        ((normal(2, 4), normal(3, 4), normal(5, 4)), "same number of positions n_k"),
        ((np.ones((2, 4), np.int32), normal(3, 4), normal(3, 4)), "floating"),
        ((normal(2, 4), normal(3, 4, dtype="float64"), normal(3, 4)), "share a dtype"),
    ],
)
def test_bad_inputs_raise_value_error(args, match):
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(*args)


@pytest.mark.parametrize(
    "mask, match",
    [
        (tf.ones([2, 3]), "must be boolean"),
        (tf.ones([4, 3], tf.bool), "cannot broadcast"),
        (tf.ones([1, 1, 2, 3], tf.bool), "cannot broadcast"),  # more axes than the scores
    ],
)
def test_bad_masks_raise_value_error(mask, match):
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(normal(2, 4), normal(3, 4), normal(3, 4), mask=mask)


@pytest.mark.parametrize("scores, mask, match", [
    (normal(1, 2), tf.ones([1, 3], tf.bool), "cannot broadcast"),
    (normal(1, 2), tf.ones([1, 2], tf.int32), "must be boolean"),
    (tf.ones([1, 2], tf.int32), None, "must be a floating tensor"),
])
def test_masked_softmax_rejects_bad_input(scores, mask, match):
    with pytest.raises(ValueError, match=match):
        masked_softmax(scores, mask)


def test_checks_use_static_shapes_inside_tf_function():
    fn = tf.function(scaled_dot_product_attention).get_concrete_function(
        tf.TensorSpec([None, None, 8]), tf.TensorSpec([None, None, 8]), tf.TensorSpec([None, None, 4])
    )
    out, w = fn(normal(2, 3, 8), normal(2, 5, 8), normal(2, 5, 4))
    assert out.shape == (2, 3, 4) and w.shape == (2, 3, 5)


# --- MiniMultiHeadAttention ---------------------------------------------------------


@pytest.mark.claim("layer-output-shape")
def test_layer_keeps_shape_like_the_manuscript():
    y = MiniMultiHeadAttention(d_model=32, num_heads=4)(normal(2, 10, 32))
    assert y.shape == (2, 10, 32)


def test_layer_projects_other_widths_to_d_model():
    y = MiniMultiHeadAttention(d_model=16, num_heads=2)(normal(3, 5, 7))
    assert y.shape == (3, 5, 16)


def test_layer_returns_per_head_weights():
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    y, w = layer(normal(2, 6, 32), normal(2, 20, 32, seed=1), return_attention_scores=True)
    assert y.shape == (2, 6, 32) and w.shape == (2, 4, 6, 20)
    np.testing.assert_allclose(tf.reduce_sum(w, -1).numpy(), 1.0, atol=1e-6)


def test_self_attention_is_cross_attention_with_itself():
    """One code path: ``layer(x)`` runs ``layer(x, x)`` (so comparing the two shows nothing
    about the math; the test below compares both wirings against a by-hand computation)."""
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    x = normal(2, 10, 32)
    np.testing.assert_array_equal(layer(x).numpy(), layer(x, x).numpy())


def _four_steps(layer, queries_from, keys_values_from):
    """The manuscript's four steps per head, by hand (einsum), with ``layer``'s projections."""
    b, h, d = queries_from.shape[0], layer.h, layer.depth
    q = tf.reshape(layer.wq(queries_from), (b, -1, h, d))
    k = tf.reshape(layer.wk(keys_values_from), (b, -1, h, d))
    v = tf.reshape(layer.wv(keys_values_from), (b, -1, h, d))
    weights = tf.nn.softmax(tf.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d), axis=-1)
    heads = tf.einsum("bhqk,bkhd->bqhd", weights, v)
    return layer.wo(tf.reshape(heads, (b, -1, h * d)))


@pytest.mark.claim("same-math")
def test_both_wirings_are_the_same_four_steps_with_other_sources():
    """「两者的数学完全一样，差别只在 Q 与 KV 的来源」: self- and cross-attention each match
    one by-hand computation whose only arguments are the sources; another source differs."""
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    x, context = normal(2, 6, 32), normal(2, 20, 32, seed=1)
    np.testing.assert_allclose(layer(x).numpy(), _four_steps(layer, x, x).numpy(), atol=1e-5)
    np.testing.assert_allclose(layer(x, context).numpy(), _four_steps(layer, x, context).numpy(), atol=1e-5)
    assert np.abs(layer(x, context).numpy() - _four_steps(layer, x, x).numpy()).max() > 1e-2


def _keras_twin(layer, x, context):
    """A keras.layers.MultiHeadAttention that holds ``layer``'s weights."""
    ref = keras.layers.MultiHeadAttention(num_heads=layer.h, key_dim=layer.depth)
    ref(x, context)  # build
    for mine, theirs in [(layer.wq, ref._query_dense), (layer.wk, ref._key_dense),
                         (layer.wv, ref._value_dense)]:
        kernel, bias = mine.get_weights()
        theirs.set_weights([kernel.reshape(-1, layer.h, layer.depth), bias.reshape(layer.h, layer.depth)])
    kernel, bias = layer.wo.get_weights()
    ref._output_dense.set_weights([kernel.reshape(layer.h, layer.depth, -1), bias])
    return ref


@pytest.mark.parametrize("n_k", [10, 20])
def test_matches_keras_multi_head_attention(n_k):
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    x, context = normal(2, 10, 32), normal(2, n_k, 32, seed=1)
    mask = tf.constant(np.random.default_rng(2).random((2, 10, n_k)) > 0.3)
    ours, w = layer(x, context, attention_mask=mask, return_attention_scores=True)
    ref = _keras_twin(layer, x, context)
    theirs, w_ref = ref(x, context, attention_mask=mask, return_attention_scores=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)
    np.testing.assert_allclose(w.numpy(), w_ref.numpy(), atol=1e-5)


@pytest.mark.claim("scale-by-depth")
def test_head_depth_scaling_not_d_model():
    """Fails if the layer scaled by √d_model: compare against a by-hand per-head reference."""
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    x = normal(1, 6, 32)
    _, w = layer(x, return_attention_scores=True)
    q = tf.reshape(layer.wq(x), (1, 6, 4, 8))
    k = tf.reshape(layer.wk(x), (1, 6, 4, 8))
    scores = tf.einsum("bqhd,bkhd->bhqk", q, k)
    right = tf.nn.softmax(scores / np.sqrt(8.0), -1).numpy()
    wrong = tf.nn.softmax(scores / np.sqrt(32.0), -1).numpy()
    np.testing.assert_allclose(w.numpy(), right, atol=1e-6)
    assert np.abs(w.numpy() - wrong).max() > 1e-2


def test_mask_rank_two_broadcasts_over_batch():
    layer = MiniMultiHeadAttention(d_model=8, num_heads=2)
    causal = tf.linalg.band_part(tf.ones([5, 5]), -1, 0) > 0
    _, w = layer(normal(3, 5, 8), attention_mask=causal, return_attention_scores=True)
    assert np.all(w.numpy()[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)


def _count_calls(monkeypatch, module, name):
    """Wrap ``module.name`` so that each call is counted; returns the list of calls."""
    calls, original = [], getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_layer_checks_the_mask_and_inputs_once_per_call(monkeypatch):
    from attnbook import _checks

    layer = MiniMultiHeadAttention(d_model=8, num_heads=2)
    x, context = normal(2, 5, 8), normal(2, 7, 8, seed=1)
    mask = tf.constant(np.random.default_rng(2).random((2, 5, 7)) > 0.3)
    layer(x, context)  # build first, so that only the call itself is counted
    mask_checks = _count_calls(monkeypatch, _checks, "check_mask")
    qkv_checks = _count_calls(monkeypatch, _checks, "check_qkv")
    for _ in range(3):
        layer(x, context, attention_mask=mask)
    assert len(mask_checks) == 3  # once per call, not once in call and again in the core
    assert qkv_checks == []  # the projections come from checked inputs: no second check
    scaled_dot_product_attention(normal(2, 5, 4), normal(2, 7, 4), normal(2, 7, 4), mask)
    assert len(mask_checks) == 4 and len(qkv_checks) == 1  # the public function checks


def test_public_function_and_layer_share_one_core(monkeypatch):
    from attnbook import attention

    calls = _count_calls(monkeypatch, attention, "_attend")
    layer = MiniMultiHeadAttention(d_model=8, num_heads=2)
    layer(normal(2, 5, 8))
    scaled_dot_product_attention(normal(2, 5, 4), normal(2, 5, 4), normal(2, 5, 4))
    assert len(calls) == 2


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(d_model=30, num_heads=4), r"d_model=30 and num_heads=4"),
        (dict(d_model=0, num_heads=1), "d_model must be a positive integer"),
        (dict(d_model=8, num_heads=-2), "num_heads must be a positive integer"),
        (dict(d_model=8.0, num_heads=2), "d_model must be a positive integer"),
    ],
)
def test_layer_constructor_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MiniMultiHeadAttention(**kwargs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((normal(10, 32),), {}, "rank >= 3"),
        ((normal(2, 10, 32), normal(3, 10, 32)), {}, "same batch size"),
        ((normal(2, 10, 32),), dict(attention_mask=tf.ones([2, 10, 10])), "must be boolean"),
        ((normal(2, 10, 32),), dict(attention_mask=tf.ones([2, 10, 9], tf.bool)), "cannot broadcast"),
    ],
)
def test_layer_call_errors(args, kwargs, match):
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4)
    with pytest.raises(ValueError, match=match):
        layer(*args, **kwargs)


def test_config_round_trip():
    layer = MiniMultiHeadAttention(d_model=32, num_heads=4, name="mha")
    x = normal(2, 10, 32)
    y = layer(x)
    clone = MiniMultiHeadAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), y.numpy(), atol=1e-6)


@pytest.mark.slow
def test_layer_trains_inside_a_model():
    inputs = keras.Input((10, 32))
    model = keras.Model(inputs, MiniMultiHeadAttention(32, 4)(inputs))
    model.compile("adam", "mse")
    before = model.evaluate(normal(4, 10, 32), normal(4, 10, 32, seed=1), verbose=0)
    model.fit(normal(4, 10, 32), normal(4, 10, 32, seed=1), epochs=20, verbose=0)
    assert model.evaluate(normal(4, 10, 32), normal(4, 10, 32, seed=1), verbose=0) < before


@pytest.mark.claim("direct-path")
def test_position_zero_reaches_every_position_in_one_step():
    """In one attention layer the first position reaches the 64th as strongly as the 8th;
    through a recurrent layer its influence dies away with the distance."""
    keras.utils.set_random_seed(0)
    x = tf.random.normal([1, 64, 16])
    attention = reach(MiniMultiHeadAttention(16, 2), x)   # the mechanism page measures the same
    recurrent = reach(keras.layers.SimpleRNN(16, return_sequences=True), x)
    assert attention.min() > 0
    assert attention[32:].mean() > 0.3 * attention[1:9].mean()
    assert recurrent[32:].mean() < 1e-3 * recurrent[1:9].mean()


def _with_distance_penalty(layer, x, slope):
    """``layer``'s self-attention by hand, with an ALiBi-style penalty ``-slope·|i - j|``
    added to every head's scores: a layer that knows how far apart two positions are."""
    n, h, d = x.shape[1], layer.h, layer.depth
    split = lambda t: tf.transpose(tf.reshape(t, (1, n, h, d)), [0, 2, 1, 3])
    q, k, v = split(layer.wq(x)), split(layer.wk(x)), split(layer.wv(x))
    distance = tf.cast(tf.abs(tf.range(n)[:, None] - tf.range(n)[None, :]), tf.float32)
    scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(d) - slope * distance
    heads = tf.transpose(tf.matmul(tf.nn.softmax(scores, -1), v), [0, 2, 1, 3])
    return layer.wo(tf.reshape(heads, (1, n, h * d)))


@pytest.mark.claim("direct-path")
def test_without_positions_shuffling_the_input_only_shuffles_the_output():
    """「距离不再产生衰减」 holds by construction for a layer without positions: shuffle the
    positions of the input and the output is the same output, shuffled. The control, the
    same projections with an ALiBi-style distance penalty of slope 0.01, is caught by the
    shuffle; the gradient's threshold of the ledger's row (far reach at least half the near
    one, median of the mechanism page's 8 draws) lets such a light penalty through."""
    keras.utils.set_random_seed(0)
    layer = MiniMultiHeadAttention(16, 2)
    x = tf.random.normal([1, 64, 16])
    perm = np.random.default_rng(0).permutation(64)
    shuffle = lambda t: tf.gather(t, perm, axis=1)
    np.testing.assert_allclose(layer(shuffle(x)).numpy(), shuffle(layer(x)).numpy(), atol=1e-5)
    penalised = lambda t: _with_distance_penalty(layer, t, slope=0.01)
    assert np.abs(penalised(shuffle(x)).numpy() - shuffle(penalised(x)).numpy()).max() > 1e-2
