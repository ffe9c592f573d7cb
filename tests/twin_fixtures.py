"""Fixtures for the book's JavaScript twin: random cases and what the package computes on them.

The explorable figures of the book recompute attention in the browser with a small
JavaScript copy of the attnbook package's math (``book/_ext/static/twin.js``).
tests/test_twin_browser.py runs the twin on every case below and compares. Each case
is one sample: inputs ``x`` ``(n_q, features)`` and, for cross-attention, ``context``
``(n_k, features)``; Dense kernels and biases; a boolean mask ``(n_q, n_k)`` or None
(padding, causal, random, with fully masked rows); a head count; and a divisor for the
scores (``"depth"``: √d_k of one head, the package's own; or a number, for the figure
that compares ways of scaling). Every input is a float32 value written exactly.

The package's answers come twice: ``float32``, from :class:`attnbook.MiniMultiHeadAttention`
(or, for another divisor, from its projections and :func:`attnbook.attention.masked_softmax`)
in float32; and ``float64``, from the same package functions on the same inputs in float64.
"""

import numpy as np

from attnbook import tf
from attnbook.attention import MiniMultiHeadAttention, masked_softmax

#: (n_q, n_k, features, d_model, heads, cross, mask, divisor): mask is None, "padding",
#: "causal", "random" or "empty" (no key at all); divisor "depth" or "sqrt_d_model" or 1.
CASES = (
    (4, 4, 6, 8, 1, False, None, "depth"),
    (5, 5, 8, 8, 2, False, "padding", "depth"),
    (6, 6, 5, 16, 4, False, "causal", "depth"),
    (3, 7, 4, 16, 8, True, "random", "depth"),
    (8, 8, 16, 16, 4, False, "empty", "depth"),
    (7, 3, 6, 8, 4, True, "padding", "depth"),
    (1, 1, 3, 4, 2, False, None, "depth"),
    (8, 8, 16, 8, 1, False, None, "sqrt_d_model"),
    (8, 8, 16, 8, 1, False, None, 1),
    (6, 6, 8, 16, 2, False, "random", 1),
    (10, 10, 32, 32, 8, False, None, "depth"),
    (10, 10, 32, 32, 1, False, "causal", "depth"),
)


def _mask(kind, n_q, n_k, rng):
    if kind is None:
        return None
    if kind == "padding":  # the last keys are padding, at least one stays
        return np.broadcast_to(np.arange(n_k) < rng.integers(1, n_k + 1), (n_q, n_k)).copy()
    if kind == "causal":
        return np.tril(np.ones((n_q, n_k), dtype=bool))
    if kind == "empty":
        return np.zeros((n_q, n_k), dtype=bool)
    mask = rng.random((n_q, n_k)) < 0.6
    mask[0] = False  # a fully masked row
    return mask


def _divisor(kind, depth, d_model):
    return {"depth": np.sqrt(depth), "sqrt_d_model": np.sqrt(d_model)}.get(kind, kind)


def _package(params, x, context, heads, mask, divisor, dtype):
    """What the package computes for one case in ``dtype``: (weights (heads, n_q, n_k), output)."""
    layer = MiniMultiHeadAttention(params["wq"].shape[1], heads, dtype=dtype)
    x_t, c_t = tf.constant(x[None], dtype), tf.constant(context[None], dtype)
    layer(x_t, c_t)  # builds the projections
    for name in ("q", "k", "v", "o"):
        getattr(layer, f"w{name}").set_weights([params[f"w{name}"], params[f"b{name}"]])
    mask_t = None if mask is None else tf.constant(mask[None])
    if divisor == "depth":
        out, weights = layer(x_t, c_t, attention_mask=mask_t, return_attention_scores=True)
        return weights.numpy()[0], out.numpy()[0]
    q, k, v = (layer._split_heads(w(t), 1) for w, t in ((layer.wq, x_t), (layer.wk, c_t), (layer.wv, c_t)))
    scores = tf.matmul(q, k, transpose_b=True) / tf.constant(divisor, dtype)
    weights = masked_softmax(scores, None if mask_t is None else mask_t[:, None])
    out = layer.wo(layer._merge_heads(tf.matmul(weights, v), 1))
    return weights.numpy()[0], out.numpy()[0]


def twin_cases(seed=0):
    """The fixtures: a list of dicts, one per entry of :data:`CASES` (see the module docstring)."""
    cases = []
    for i, (n_q, n_k, features, d_model, heads, cross, mask_kind, divisor_kind) in enumerate(CASES):
        rng = np.random.default_rng([seed, i])
        f32 = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
        x = f32(n_q, features)
        context = f32(n_k, features) if cross else None
        if not cross and n_k != n_q:
            raise ValueError(f"case {i}: self-attention needs n_q == n_k, got {n_q} and {n_k}.")
        scale = np.float32(1 / np.sqrt(features))
        params = {}
        for name in ("q", "k", "v"):
            params[f"w{name}"] = f32(features, d_model) * scale
            params[f"b{name}"] = f32(d_model) * np.float32(0.1)
        params["wo"], params["bo"] = f32(d_model, d_model) * np.float32(1 / np.sqrt(d_model)), f32(d_model)
        mask = _mask(mask_kind, n_q, n_k, rng)
        divisor = divisor_kind if divisor_kind == "depth" else float(_divisor(divisor_kind, d_model // heads, d_model))
        ctx = x if context is None else context
        w32, o32 = _package(params, x, ctx, heads, mask, divisor, "float32")
        w64, o64 = _package({k: v.astype(np.float64) for k, v in params.items()}, x.astype(np.float64),
                            ctx.astype(np.float64), heads, mask, divisor, "float64")
        cases.append({
            "name": f"case-{i}", "heads": heads, "divisor": divisor, "mask_kind": mask_kind,
            "x": x.tolist(), "context": None if context is None else context.tolist(),
            "params": {k: v.tolist() for k, v in params.items()},
            "mask": None if mask is None else mask.astype(int).tolist(),
            "float32": {"weights": w32.tolist(), "output": o32.tolist()},
            "float64": {"weights": w64.tolist(), "output": o64.tolist()},
        })
    return cases

