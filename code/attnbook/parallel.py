"""数一数什么是并行算的，什么是串行算的。

正文拿两件事对比：一次矩阵乘法就给所有位置打完分，而 RNN 每个时步都要调用一次它的
单元。这里的两个函数把这两样都数出来。
"""

import keras

from ._tf import tf

_MATMUL_OPS = {"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}


def matmul_ops(fn, *args):
    """``tf.function`` 为 ``fn(*args)`` 追踪出的计算图里，矩阵乘法算子的个数。"""
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
    """让 SimpleRNN 处理 ``x`` ``(batch, n, features)``，返回它的单元被调用的次数。

    ``units`` 是 RNN 的隐藏维度。这个 RNN 是展开的：每个时步调用一次单元，每次都要
    等上一步的状态，所以结果是 ``n``。（``tf.while_loop`` 的形式同样走 n 步，只是
    TensorFlow 后端为了推断输出形状还会多调用一次。）只计前向计算，不计构建时的调用。
    """
    cell = _CountingCell(units)
    layer = keras.layers.RNN(cell, unroll=True)
    layer.build(x.shape)
    cell.calls = 0  # count the forward pass only, not the build
    layer(x)
    return cell.calls
