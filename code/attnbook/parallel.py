"""Count what runs in parallel and what runs in series.

The manuscript contrasts one matrix multiplication that scores all positions at once
with an RNN that calls its cell once per time step. These helpers count both.
"""

import keras

from ._tf import tf

_MATMUL_OPS = {"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}


def matmul_ops(fn, *args):
    """Number of matrix-multiplication ops in the graph ``tf.function`` traces for ``fn(*args)``."""
    graph = tf.function(fn).get_concrete_function(*args).graph
    return sum(op.type in _MATMUL_OPS for op in graph.get_operations())


class _CountingCell(keras.layers.SimpleRNNCell):
    """A SimpleRNN cell that counts how often it is called."""

    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.calls = 0

    def call(self, *args, **kwargs):
        self.calls += 1
        return super().call(*args, **kwargs)


def count_rnn_cell_calls(x, units):
    """Run a SimpleRNN over ``x`` ``(batch, n, features)``; return how often its cell ran.

    The RNN is unrolled: one cell call per time step, each waiting for the previous
    step's state, so the result is ``n``. (The ``tf.while_loop`` form runs the same n
    steps, plus one extra call that TensorFlow's backend uses to infer output shapes.)
    """
    cell = _CountingCell(units)
    layer = keras.layers.RNN(cell, unroll=True)
    layer.build(x.shape)
    cell.calls = 0  # count the forward pass only, not the build
    layer(x)
    return cell.calls
