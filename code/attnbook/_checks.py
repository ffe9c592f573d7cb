"""Input validation shared by the attention functions and layers.

Every check raises ``ValueError`` with a message that names what was expected and what
was given. Checks use static shapes only, so they also work inside ``tf.function``;
a dimension that is unknown at trace time is not checked.
"""

import numbers

from ._tf import tf

HALF_DTYPES = (tf.float16, tf.bfloat16)  # normalised in float32, then cast back
_FLOAT_DTYPES = (*HALF_DTYPES, tf.float32, tf.float64)


def positive_int(name, value):
    """Return ``value`` if it is a positive integer, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def heads(d_model, num_heads):
    """``(d_model, num_heads)`` as ints if both are positive and ``num_heads`` divides
    ``d_model`` (each head gets ``d_model // num_heads`` features), else ``ValueError``."""
    d_model, num_heads = positive_int("d_model", d_model), positive_int("num_heads", num_heads)
    if d_model % num_heads:
        raise ValueError(f"d_model must be divisible by num_heads, got d_model={d_model}"
                         f" and num_heads={num_heads} (remainder {d_model % num_heads}).")
    return d_model, num_heads


def as_float_tensor(name, x, min_rank=2, max_rank=None):
    """Convert ``x`` to a floating tensor with ``min_rank <= rank <= max_rank``."""
    x = tf.convert_to_tensor(x)
    if x.dtype not in _FLOAT_DTYPES:
        raise ValueError(f"{name} must be a floating tensor, got dtype {x.dtype.name}.")
    if x.shape.rank is not None and x.shape.rank < min_rank:
        raise ValueError(f"{name} must have rank >= {min_rank} (..., positions, features), "
                         f"got shape {tuple(x.shape)} of rank {x.shape.rank}.")
    if max_rank is not None and x.shape.rank is not None and x.shape.rank > max_rank:
        raise ValueError(f"{name} must have rank <= {max_rank}, got shape {tuple(x.shape)} of rank {x.shape.rank}.")
    return x


def dims_differ(a, b):
    return a is not None and b is not None and a != b


def check_qkv(query, key, value):
    """Validate and convert ``(query, key, value)`` for scaled dot-product attention.

    query ``(..., n_q, d_k)``, key ``(..., n_k, d_k)``, value ``(..., n_k, d_v)``.
    """
    query = as_float_tensor("query", query)
    key = as_float_tensor("key", key)
    value = as_float_tensor("value", value)
    if not query.dtype == key.dtype == value.dtype:
        raise ValueError("query, key and value must share a dtype, got "
                         f"{query.dtype.name}, {key.dtype.name} and {value.dtype.name}.")
    if dims_differ(query.shape[-1], key.shape[-1]):
        raise ValueError("query and key must have the same last dimension d_k, got "
                         f"query {tuple(query.shape)} (d_k={query.shape[-1]}) and "
                         f"key {tuple(key.shape)} (d_k={key.shape[-1]}).")
    if dims_differ(key.shape[-2], value.shape[-2]):
        raise ValueError("key and value must have the same number of positions n_k, got "
                         f"key {tuple(key.shape)} (n_k={key.shape[-2]}) and "
                         f"value {tuple(value.shape)} (n_k={value.shape[-2]}).")
    scores = batch_shape(query, key)
    try:
        tf.broadcast_static_shape(scores, value.shape[:-2])
    except ValueError as err:
        raise ValueError(f"value's batch axes must broadcast with the scores' {tuple(scores)}, got "
                         f"query {tuple(query.shape)}, key {tuple(key.shape)} and value {tuple(value.shape)}.") from err
    return query, key, value


def batch_shape(query, key):
    """The batch axes ``...`` of the scores: query's ``(..., n_q, d_k)`` and key's
    ``(..., n_k, d_k)`` broadcast by matmul's rule. Raises ``ValueError`` when they do not."""
    try:
        return tf.broadcast_static_shape(query.shape[:-2], key.shape[:-2])
    except ValueError as err:
        raise ValueError(f"query and key batch axes must broadcast, got query {tuple(query.shape)} "
                         f"and key {tuple(key.shape)}.") from err


def score_mask(mask, query, key, name="mask"):
    """``mask`` checked against the score shape ``(..., n_q, n_k)`` of ``query`` and
    ``key`` (see :func:`check_mask`), with leading axes of 1 up to the scores' rank."""
    target = batch_shape(query, key).concatenate([query.shape[-2], key.shape[-2]])
    mask = check_mask(mask, target, name)
    if target.rank is not None and mask.shape.rank is not None:
        for _ in range(target.rank - mask.shape.rank):
            mask = mask[None]
    return mask


def check_mask(mask, target_shape, name="mask"):
    """Convert ``mask`` to a boolean tensor that broadcasts to ``target_shape``.

    ``target_shape`` is a ``tf.TensorShape`` such as ``(..., n_q, n_k)``. The mask may
    have fewer axes (they broadcast from the right) but never more, and every known
    axis must be 1 or equal to the target's.
    """
    mask = tf.convert_to_tensor(mask)
    if mask.dtype != tf.bool:
        raise ValueError(f"{name} must be boolean (True = may attend), got dtype {mask.dtype.name}. "
                         "Convert it with tf.cast(mask, tf.bool) or build it with attnbook.masks.")
    target = tf.TensorShape(target_shape)
    if mask.shape.rank is None or target.rank is None:
        return mask
    pairs = zip(reversed(mask.shape.as_list()), reversed(target.as_list()))
    if mask.shape.rank > target.rank or any(m != 1 and dims_differ(m, t) for m, t in pairs):
        raise ValueError(f"{name} of shape {tuple(mask.shape)} cannot broadcast to the score shape "
                         f"{tuple(target)} (..., n_q, n_k).")
    return mask
