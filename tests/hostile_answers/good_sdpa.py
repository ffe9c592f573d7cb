# exercise: scaled_dot_product_attention
# status: 0
# says: 通过（8/8 个用例）
import tensorflow as tf


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = tf.matmul(query, key, transpose_b=True) / tf.sqrt(tf.cast(tf.shape(query)[-1], query.dtype))
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)
    return weights @ value, weights
