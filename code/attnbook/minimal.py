"""原稿的最小层：第 4.5 节《手写一个多头注意力层》里的 MiniMultiHeadAttention，类的定义只改了一行。

正文直接从原稿的文本展示这个类，运行的是这里的副本。在本书固定的 TensorFlow 版本（Keras 3，见
``requirements.txt``）下原稿的代码不需要任何改动就能运行；副本只把原稿的
``assert d_model % num_heads == 0`` 换成了与配套包的扩展层同一个检查：``python -O`` 会删掉
``assert``，而这个检查总在，参数不合法时抛出 ``ValueError``。此外只在文件开头多了一行导入这个检查；
类的定义里其余每个字符与原稿相同（仓库里的 ``tests/test_minimal.py`` 逐行核对）。

它只接受自注意力 ``layer(x)``：x 的形状是 ``(batch, seq, features)``，输出 ``(batch, seq, d_model)``
（``features`` 等于 ``d_model`` 时与输入同形）。
配套包的扩展层是 :class:`attnbook.MiniMultiHeadAttention`，在同样的权重下，
它的输出与这个类在 float32 舍入之内一致（``tests/test_minimal.py`` 核对；
延伸页《配套包里的注意力：源码与扩展》在构建时也当场比较一次，并打印最大差）。
"""

import tensorflow as tf

from ._checks import heads


class MiniMultiHeadAttention(tf.keras.layers.Layer):
    """多头缩放点积注意力的最小实现"""
    def __init__(self, d_model, num_heads):
        super().__init__()
        heads(d_model, num_heads)          # 原稿：assert d_model % num_heads == 0
        self.h = num_heads
        self.depth = d_model // num_heads          # 每头的键维度
        self.wq = tf.keras.layers.Dense(d_model)
        self.wk = tf.keras.layers.Dense(d_model)
        self.wv = tf.keras.layers.Dense(d_model)
        self.wo = tf.keras.layers.Dense(d_model)   # 拼接后的输出投影

    def _split_heads(self, x, batch):
        # (batch, seq, d_model) 切成 (batch, heads, seq, depth)
        x = tf.reshape(x, (batch, -1, self.h, self.depth))
        return tf.transpose(x, perm=[0, 2, 1, 3])

    def call(self, x):
        batch = tf.shape(x)[0]
        q = self._split_heads(self.wq(x), batch)
        k = self._split_heads(self.wk(x), batch)
        v = self._split_heads(self.wv(x), batch)
        scaled = tf.matmul(q, k, transpose_b=True) / \
                 tf.sqrt(tf.cast(self.depth, tf.float32))
        weights = tf.nn.softmax(scaled, axis=-1)
        out = tf.matmul(weights, v)                            # (b, h, s, d)
        out = tf.transpose(out, perm=[0, 2, 1, 3])
        out = tf.reshape(out, (batch, -1, self.h * self.depth))
        return self.wo(out)
