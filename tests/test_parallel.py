"""The counts behind "8 parallel scores against 8 serial steps"."""

import pytest

from attnbook import tf
from attnbook.parallel import count_rnn_cell_calls, matmul_ops


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
