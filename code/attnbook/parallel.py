"""数一数什么是并行算的，什么是串行算的，再量一量远处的位置能影响多少。

正文拿两件事对比：一次矩阵乘法就给所有位置打完分，而 RNN 每个时步都要调用一次它的
单元。这里的前两个函数把这两样都数出来；:func:`reach` 量的是位置 0 的输入对每个输出
位置的影响（梯度的范数），看它随距离衰减不衰减。
"""

import numbers

import keras
import numpy as np

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
    """让展开的 ``keras.layers.RNN`` 处理 ``x`` ``(batch, n, features)``，返回单元被调用的次数。

    单元是 ``SimpleRNNCell`` 加上一个计数器，``units`` 是它的隐藏维度。这个 RNN 是展开的，
    并且即时执行：展开就是 Python 里循环 n 次，每个时步调用一次单元，所以结果是 ``n``，
    由代码决定。这个数本身不说明每步在等上一步；等待来自单元的输入里有上一步的状态。
    层构建（``build``）之后才开始计数，只计前向计算。不展开的 ``tf.while_loop`` 形式同样
    走 n 步，但 Python 里数到的调用次数不等于步数：即时执行时是 n + 1 次（TensorFlow 后端
    为推断输出形状多调用一次）；放进 ``tf.function`` 后单元只在追踪时被调用（本书钉住的
    Keras 3 的 TensorFlow 后端上是两次），之后每次运行，数到的调用次数都是 0。
    """
    cell = _CountingCell(units)
    layer = keras.layers.RNN(cell, unroll=True)
    layer.build(x.shape)
    cell.calls = 0  # count the forward pass only, not the build
    layer(x)
    return cell.calls


def reach(layer, x, source=0):
    """位置 ``source`` 的输入对每个输出位置 t 的影响：梯度的范数 ‖∂y_t/∂x_source‖。

    ``layer`` 把 ``x`` ``(1, n, features)`` 映射为同样按位置排列的 ``y`` ``(1, n, units)``，
    例如自注意力层，或 ``return_sequences=True`` 的 RNN。对每个 t，求雅可比矩阵
    ∂y_t/∂x_source（``units × features``）的 Frobenius 范数：把位置 ``source`` 的输入
    轻轻一动，位置 t 的输出跟着变多少。RNN 里这个影响要一步一步传过去，注意力里每个
    位置都直接读取位置 ``source``。

    Returns:
        NumPy 数组 ``(n,)``，第 t 项是 ‖∂y_t/∂x_source‖。

    Raises:
        ValueError: ``x`` 不是批次大小为 1 的三维张量，或 ``source`` 不是其中的位置。
    """
    x = tf.convert_to_tensor(x)
    if x.shape.rank != 3 or x.shape[0] != 1:
        raise ValueError(f"x must be (1, n, features), got shape {tuple(x.shape)}.")
    n = x.shape[1]
    if isinstance(source, bool) or not isinstance(source, numbers.Integral) or not 0 <= source < n:
        raise ValueError(f"source must be a position from 0 to {n - 1}, got {source!r}.")
    source = int(source)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    # tape.jacobian traces a tf.function per call; called for several layers in a row it
    # logs a retracing warning that says nothing about the result
    logger, level = tf.get_logger(), tf.get_logger().level
    logger.setLevel("ERROR")
    try:
        jacobian = tape.jacobian(y, x)[0, :, :, 0, source, :]  # (t, units, features)
    finally:
        logger.setLevel(level)
    return np.linalg.norm(jacobian.numpy().reshape(n, -1), axis=1)
