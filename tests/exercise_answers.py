"""Correct answers to the coding exercises, written the way a reader might, without the
package's solutions module (the checker fails any answer that imports it).

The tests build their planted mistakes from these.
"""

import tensorflow as tf

from attnbook.exercises.buggy import BuggyMultiHeadAttention


def attention_shapes(batch, n_q, n_k, d_model, num_heads):
    depth = d_model // num_heads
    return {"query": (batch, num_heads, n_q, depth), "key": (batch, num_heads, n_k, depth),
            "value": (batch, num_heads, n_k, depth), "scores": (batch, num_heads, n_q, n_k),
            "output": (batch, n_q, d_model)}


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = tf.matmul(query, key, transpose_b=True) / tf.sqrt(tf.cast(tf.shape(query)[-1], query.dtype))
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)
    return weights @ value, weights


def cross_attention(x, context, wq, wk, wv):
    return scaled_dot_product_attention(x @ wq, context @ wk, context @ wv)


def padding_mask(lengths, max_len):
    return (tf.range(max_len)[None, :] < tf.cast(lengths, tf.int32)[:, None])[:, None, :]


def decoder_mask(lengths, n):
    i, j = tf.range(n)[:, None], tf.range(n)[None, :]
    return (j <= i) & (j < tf.cast(lengths, tf.int32)[:, None, None])


def score_table_bytes(n_q, n_k, batch=1, heads=1, dtype="float32"):
    return batch * heads * n_q * n_k * tf.as_dtype(dtype).size


def linear_attention(query, key, value):
    phi_q, phi_k = tf.nn.elu(query) + 1.0, tf.nn.elu(key) + 1.0
    kv = tf.matmul(phi_k, value, transpose_a=True)  # (..., d_k, d_v)
    normaliser = tf.reduce_sum(phi_q * tf.reduce_sum(phi_k, axis=-2, keepdims=True), axis=-1, keepdims=True)
    return (phi_q @ kv) / normaliser


class FixedMultiHeadAttention(BuggyMultiHeadAttention):
    def attend(self, q, k, v):
        scores = tf.matmul(q, k, transpose_b=True) / tf.math.sqrt(tf.cast(self.depth, q.dtype))
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.matmul(weights, v), weights
