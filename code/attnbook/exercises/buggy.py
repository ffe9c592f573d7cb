"""练习“修好按 d_model 缩放的层”里那个有错的层。"""

import keras

from .._tf import tf


class BuggyMultiHeadAttention(keras.layers.Layer):
    """多头注意力（有一行错误，找出并修好它）。

    ``layer(x)`` 是自注意力，``layer(x, context)`` 是交叉注意力。

    Args:
        d_model: 模型宽度，能被 ``num_heads`` 整除。
        num_heads: 头数。

    调用时 ``x`` 是 ``(batch, n_q, d_x)``，``context`` 是
    ``(batch, n_k, d_c)``；输出 ``(batch, n_q, d_model)``，
    ``return_attention_scores=True`` 时还返回注意力权重
    ``(batch, num_heads, n_q, n_k)``。
    """

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.num_heads = num_heads
        self.depth = d_model // num_heads  # 每头维度
        self.wq = keras.layers.Dense(d_model, name="wq")
        self.wk = keras.layers.Dense(d_model, name="wk")
        self.wv = keras.layers.Dense(d_model, name="wv")
        self.wo = keras.layers.Dense(d_model, name="wo")

    def split_heads(self, x):
        """拆成多头：(batch, seq, d_model) -> (batch, heads, seq, depth)。"""
        batch = tf.shape(x)[0]
        x = tf.reshape(x, (batch, -1, self.num_heads, self.depth))
        return tf.transpose(x, [0, 2, 1, 3])

    def attend(self, q, k, v):
        """每个头的注意力：返回输出和注意力权重（每头一张 n_q × n_k 的表）。"""
        scores = tf.matmul(q, k, transpose_b=True)
        scores = scores / tf.math.sqrt(tf.cast(self.d_model, scores.dtype))
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.matmul(weights, v), weights

    def call(self, x, context=None, return_attention_scores=False):
        context = x if context is None else context
        q = self.split_heads(self.wq(x))
        k = self.split_heads(self.wk(context))
        v = self.split_heads(self.wv(context))
        out, weights = self.attend(q, k, v)
        out = tf.transpose(out, [0, 2, 1, 3])  # 头轴换回序列轴后面
        out = tf.reshape(out, (tf.shape(x)[0], -1, self.d_model))
        out = self.wo(out)
        return (out, weights) if return_attention_scores else out
