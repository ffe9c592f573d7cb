"""Correct multi-head attention layers that the book never shows, for the shape-test
exercise: a test that only trusts the package's own class rejects these.

Each takes ``(d_model, num_heads)`` and is called as ``(x, context=None,
attention_mask=None, return_attention_scores=False)``, like MiniMultiHeadAttention.
"""

import keras

from ..._tf import tf
from ...attention import MiniMultiHeadAttention


class KerasBackedAttention(keras.layers.Layer):
    """Keras's own MultiHeadAttention behind the book's constructor and call."""

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.MultiHeadAttention(num_heads, key_dim=d_model // num_heads)

    def call(self, x, context=None, attention_mask=None, return_attention_scores=False):
        context = x if context is None else context
        return self.inner(x, context, attention_mask=attention_mask,
                          return_attention_scores=return_attention_scores)


class EinsumAttention(keras.layers.Layer):
    """Heads as an einsum axis: no reshape of the projections at all."""

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.h, self.depth = num_heads, d_model // num_heads
        self.wq, self.wk, self.wv = (keras.layers.EinsumDense("bnd,dhk->bnhk", (None, num_heads, self.depth))
                                     for _ in range(3))
        self.wo = keras.layers.EinsumDense("bnhk,hkd->bnd", (None, d_model))

    def call(self, x, context=None, attention_mask=None, return_attention_scores=False):
        context = x if context is None else context
        q, k, v = self.wq(x), self.wk(context), self.wv(context)  # (batch, n, heads, depth)
        scores = tf.einsum("bqhk,bnhk->bhqn", q, k) / tf.sqrt(tf.cast(self.depth, q.dtype))
        if attention_mask is not None:
            mask = tf.convert_to_tensor(attention_mask)
            mask = tf.reshape(mask, (-1, 1, *mask.shape[-2:])) if mask.shape.rank >= 2 else mask
            scores = tf.where(mask, scores, -1e9)
        weights = tf.nn.softmax(scores, axis=-1)
        out = self.wo(tf.einsum("bhqn,bnhk->bqhk", weights, v))
        return (out, weights) if return_attention_scores else out


CORRECT = (  # (case name, class, how the report names it)
    ("正确的层", MiniMultiHeadAttention, " MiniMultiHeadAttention "),
    ("另一个正确的层（基于 keras.layers.MultiHeadAttention）", KerasBackedAttention, "层（基于 Keras 的 MultiHeadAttention）"),
    ("另一个正确的层（用 einsum 写成）", EinsumAttention, "层（用 einsum 写成）"),
)
