"""练习 4.5.6 的层：结构和正文的多头注意力一样，但其中有一行是错的。

Self-attention ``layer(x)``, cross-attention ``layer(x, context)``; x ``(batch, n_q,
features)``, context ``(batch, n_k, features_c)``; the output is ``(batch, n_q,
d_model)`` and, with ``return_attention_scores=True``, the weights ``(batch,
num_heads, n_q, n_k)`` as well.
"""

import keras

from .._tf import tf


class BuggyMultiHeadAttention(keras.layers.Layer):
    """多头注意力（有一行错误，找出并修好它）。"""

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
        batch = tf.shape(x)[0]
        x = tf.reshape(x, (batch, -1, self.num_heads, self.depth))
        return tf.transpose(x, [0, 2, 1, 3])  # (batch, heads, seq, depth)

    def attend(self, q, k, v):
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
        out = tf.transpose(out, [0, 2, 1, 3])
        out = tf.reshape(out, (tf.shape(x)[0], -1, self.d_model))
        out = self.wo(out)
        return (out, weights) if return_attention_scores else out
