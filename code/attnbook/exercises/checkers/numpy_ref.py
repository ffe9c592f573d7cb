"""NumPy versions of attention with the usual slips as options: the hint variants.

Computed in float64 from the float32 inputs, so a variant is exact to far below the
comparison tolerance.
"""

import numpy as np

from ..._tf import tf


def normal(rng, *shape):
    """A float32 tf tensor of standard normal numbers."""
    return tf.constant(rng.standard_normal(shape), dtype=tf.float32)


def softmax(scores, axis=-1):
    scores = scores - scores.max(axis=axis, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=axis, keepdims=True)


def attention(query, key, value, mask=None, scale=None, axis=-1, empty_rows="zero"):
    """``(output, weights)`` of softmax(Q Kᵀ / scale) V with a boolean mask.

    scale: defaults to √d_k. axis: the softmax axis (-2 is the classic slip).
    empty_rows: "zero" (the contract) or "uniform" (an additive -1e9 mask that forgot
    to zero rows with no allowed key).
    """
    q, k, v = (np.asarray(t, dtype=float) for t in (query, key, value))
    scale = np.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) / scale
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis)
    if mask is not None and empty_rows == "zero":
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights
