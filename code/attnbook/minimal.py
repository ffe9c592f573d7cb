"""原稿的最小实现：第 4.5 节“手写一个多头注意力层”里的 MiniMultiHeadAttention，逐字照录。

这个模块只放作者的代码清单本身，正文用 ``literalinclude`` 原样展示它、再导入运行。
在本书固定的 TensorFlow 版本（Keras 3，见 ``requirements.txt``）下它不需要任何改动就能运行，所以一个字符也没有改，
连 ``assert`` 也保留着（配套包里别处的参数检查一律抛出 ``ValueError``）。

它只接受自注意力 ``layer(x)``：x 的形状是 ``(batch, seq, features)``，输出 ``(batch, seq, d_model)``
（``features`` 等于 ``d_model`` 时与输入同形）。
编者扩展的完整版本是 :class:`attnbook.MiniMultiHeadAttention`，在同样的权重下，
它的输出与这个类在 float32 舍入之内一致（仓库里的 ``tests/test_minimal.py`` 核对；
正文页在构建时也当场比较一次，并打印最大差）。
"""

import tensorflow as tf


class MiniMultiHeadAttention(tf.keras.layers.Layer):
    """多头缩放点积注意力的最小实现"""
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
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
