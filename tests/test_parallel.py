"""The counts behind "8 parallel scores against 8 serial steps", and how far a position reaches."""

import keras
import numpy as np
import pytest

from attnbook import tf
from attnbook.parallel import _CountingCell, count_rnn_cell_calls, matmul_ops, reach


@pytest.mark.claim("one-matmul")
@pytest.mark.claim("one-parallel-matmul")
def test_one_matmul_scores_every_pair():
    q = tf.random.normal([2, 8, 8])
    assert matmul_ops(lambda a, b: tf.matmul(a, b, transpose_b=True), q, q) == 1


def test_matmul_ops_counts_each_product():
    q = tf.random.normal([2, 8, 8])
    assert matmul_ops(lambda a, b: tf.matmul(tf.matmul(a, b), b), q, q) == 2


@pytest.mark.claim("rnn-serial-calls")
@pytest.mark.parametrize("n", [1, 8, 13])
def test_rnn_calls_its_cell_once_per_step(n):
    assert count_rnn_cell_calls(tf.random.normal([2, n, 4]), units=3) == n


def test_rolled_rnn_call_counts_are_not_steps():
    """The docstring's reason for unrolling: the tf.while_loop form counts n + 1 eagerly
    and, inside tf.function, only the traces (two), then nothing on later runs."""
    x = tf.random.normal([2, 5, 4])
    cell = _CountingCell(3)
    layer = keras.layers.RNN(cell)
    layer.build(x.shape)
    cell.calls = 0
    layer(x)
    assert cell.calls == 5 + 1
    traced = tf.function(layer.__call__)
    cell.calls = 0
    traced(x)
    assert cell.calls == 2
    cell.calls = 0
    traced(x)
    assert cell.calls == 0


def test_reach_is_the_norm_of_each_outputs_gradient():
    """A layer that copies position 0 everywhere, times 3: ∂y_t/∂x_0 = 3·I for every t."""
    x = tf.random.normal([1, 5, 4])
    copy_first = lambda x: 3.0 * tf.repeat(x[:, :1], 5, axis=1)  # noqa: E731
    np.testing.assert_allclose(reach(copy_first, x), [3.0 * 2.0] * 5, rtol=1e-6)  # ‖3·I₄‖ = 6
    np.testing.assert_allclose(reach(lambda x: 2.0 * x, x, source=2), [0, 0, 4.0, 0, 0], atol=1e-6)
    np.testing.assert_allclose(reach(lambda x: 2.0 * x, x, source=np.int64(2)), [0, 0, 4.0, 0, 0], atol=1e-6)


def test_reach_dies_away_through_a_recurrence():
    """Each step of y_t = 0.5 · (y_{t-1} + x_t) halves what position 0 left behind."""
    def halving(x):
        state, out = tf.zeros_like(x[:, 0]), []
        for t in range(x.shape[1]):
            state = 0.5 * (state + x[:, t])
            out.append(state)
        return tf.stack(out, axis=1)

    np.testing.assert_allclose(reach(halving, tf.random.normal([1, 6, 3])),
                               [np.sqrt(3) * 0.5 ** (t + 1) for t in range(6)], rtol=1e-6)


@pytest.mark.parametrize("x, source, match", [
    (tf.zeros([2, 4, 3]), 0, r"\(1, n, features\)"), (tf.zeros([4, 3]), 0, r"\(1, n, features\)"),
    (tf.zeros([1, 4, 3]), 4, "from 0 to 3"), (tf.zeros([1, 4, 3]), True, "from 0 to 3")])
def test_reach_rejects_bad_input(x, source, match):
    with pytest.raises(ValueError, match=match):
        reach(lambda x: x, x, source=source)
