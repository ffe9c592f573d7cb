"""Why divide by √d_k: what the scale of the scores does to the softmax, measured.

For random queries and keys with N(0, 1) entries, a dot product of depth d_k has
variance d_k. Unscaled, the scores grow like √d_k and the softmax saturates: one weight
near 1, gradients near 0. Dividing by √d_k keeps the scores at unit variance for every
depth. Dividing by √d_model = √(heads · d_k), the per-head mistake, shrinks them by a
further √heads, so the softmax stays flatter than intended at every depth.
"""

import numpy as np

from ._tf import tf

# The three ways to scale the scores, each as a function of (d_k, heads).
SCALINGS = {
    "unscaled": lambda d_k, heads: 1.0,
    "head_depth": lambda d_k, heads: np.sqrt(d_k),  # the right one: √d_k of one head
    "d_model": lambda d_k, heads: np.sqrt(heads * d_k),  # the mistake: √d_model
}
#: The statistics that :func:`measure_scaling` reports for each depth.
METRICS = ("max_weight", "entropy", "grad_norm")
DEPTHS = tuple(2**i for i in range(2, 10))  # 4 .. 512


def softmax_stats(logits, upstream):
    """Row statistics of ``softmax(logits)`` for logits ``(rows, n_k)``.

    Returns a dict of floats, each a mean over rows: ``max_weight`` (the largest
    weight), ``entropy`` (in nats; ``log n_k`` is uniform, 0 is one-hot) and
    ``grad_norm``, the norm of the gradient of ``sum(weights * upstream)`` with respect
    to the logits, taken through the softmax with ``tf.GradientTape``.
    """
    logits = tf.constant(logits, tf.float64)  # float64: saturated gradients stay > 0
    with tf.GradientTape() as tape:
        tape.watch(logits)
        weights = tf.nn.softmax(logits, axis=-1)
        loss = tf.reduce_sum(weights * upstream)
    grad = tape.gradient(loss, logits).numpy()
    w = weights.numpy()
    entropy = -np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0), axis=-1)
    return {
        "max_weight": float(w.max(-1).mean()),
        "entropy": float(entropy.mean()),
        "grad_norm": float(np.linalg.norm(grad, axis=-1).mean()),
    }


def measure_scaling(depths=DEPTHS, heads=8, n_queries=256, n_keys=32, seed=0):
    """Softmax statistics over growing head depth d_k, for each way of scaling.

    For each ``d_k``, queries ``(n_queries, d_k)`` and keys ``(n_keys, d_k)`` are drawn
    from N(0, 1) with a fixed seed, and so is the upstream gradient
    ``(n_queries, n_keys)``; the same draws serve all three scalings. ``heads`` sets
    ``d_model = heads · d_k`` for the mistaken scaling.

    Returns plain data: ``{"d_k": [...], "heads": heads, "n_keys": n_keys,
    "unscaled": {metric: [...]}, "head_depth": {...}, "d_model": {...}}``, with one
    value per depth for each metric in :data:`METRICS`.
    """
    result = {"d_k": [int(d) for d in depths], "heads": heads, "n_keys": n_keys}
    for name in SCALINGS:
        result[name] = {metric: [] for metric in METRICS}
    for d_k in result["d_k"]:
        rng = np.random.default_rng([seed, d_k])
        q = rng.normal(size=(n_queries, d_k))
        k = rng.normal(size=(n_keys, d_k))
        upstream = rng.normal(size=(n_queries, n_keys))
        scores = q @ k.T
        for name, scale in SCALINGS.items():
            stats = softmax_stats(scores / scale(d_k, heads), upstream)
            for metric in METRICS:
                result[name][metric].append(stats[metric])
    return result
