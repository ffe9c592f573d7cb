"""Boolean attention masks (True = "this query may attend to this key"), and the
manuscript's pitfall of forgetting the padding mask, measured.

Every mask here broadcasts to the score shape ``(..., n_q, n_k)`` of
:func:`attnbook.scaled_dot_product_attention` and to the ``attention_mask=`` of
:class:`attnbook.MiniMultiHeadAttention` (the Keras convention).
"""

import dataclasses
import numbers

import numpy as np

from . import _checks
from ._tf import tf


def _lengths_tensor(lengths):
    """Convert ``lengths`` to a rank-1 integer tensor, or raise ``ValueError``."""
    given = lengths
    try:
        lengths = tf.convert_to_tensor(lengths)
    except (TypeError, ValueError) as err:
        raise ValueError(f"lengths must be a 1-D sequence of integers, got {given!r}.") from err
    if not lengths.dtype.is_integer:
        raise ValueError(
            f"lengths must be integers (one per sequence), got dtype {lengths.dtype.name}: "
            f"{given!r}."
        )
    if lengths.shape.rank != 1:
        raise ValueError(
            f"lengths must be 1-D (batch,), got shape {tuple(lengths.shape)}."
        )
    return lengths


def _check_length_values(lengths, max_len):
    """Check 0 <= length <= max_len where the values are known (eager or constant)."""
    values = tf.get_static_value(lengths)
    if values is None:
        return
    if np.any(values < 0):
        raise ValueError(f"lengths must be >= 0, got {values.tolist()}.")
    if np.any(values > max_len):
        raise ValueError(
            f"lengths must be <= max_len={max_len}, got {values.tolist()} "
            f"(longest {int(values.max())})."
        )


def _optional_n_q(n_q):
    return None if n_q is None else _checks.positive_int("n_q", n_q)


def _expand(key_mask, n_q):
    """(batch, n_k) -> (batch, 1, n_k), or (batch, n_q, n_k) when n_q is given."""
    mask = key_mask[:, None, :]
    if n_q is None:
        return mask
    return tf.broadcast_to(mask, (tf.shape(mask)[0], n_q, tf.shape(mask)[2]))


def padding_mask(lengths, max_len, n_q=None):
    """Mask out the padding at the end of each sequence.

    Args:
        lengths: integers ``(batch,)``, the number of real positions of each sequence,
            each in ``0 .. max_len``.
        max_len: the padded length, i.e. the number of keys ``n_k``.
        n_q: optional number of queries. Without it the mask is ``(batch, 1, n_k)``,
            which broadcasts over any number of queries; with it, ``(batch, n_q, n_k)``.

    Returns:
        A boolean tensor, True at real key positions (``key < length``). A sequence of
        length 0 gives rows with no allowed key, whose weights are all zero.

    Raises:
        ValueError: if lengths is not a 1-D integer sequence, a length is negative or
            exceeds ``max_len``, or ``max_len``/``n_q`` is not a positive integer.
    """
    max_len = _checks.positive_int("max_len", max_len)
    n_q = _optional_n_q(n_q)
    lengths = _lengths_tensor(lengths)
    _check_length_values(lengths, max_len)
    return _expand(tf.sequence_mask(lengths, max_len), n_q)


def padding_mask_from_tokens(tokens, pad_id=0, n_q=None):
    """Mask out the positions of a padded token batch that hold ``pad_id``.

    tokens: integers ``(batch, n_k)``. Returns a boolean mask ``(batch, 1, n_k)``, or
    ``(batch, n_q, n_k)`` when ``n_q`` is given; True where ``tokens != pad_id``.
    """
    tokens = tf.convert_to_tensor(tokens)
    if not tokens.dtype.is_integer:
        raise ValueError(f"tokens must be integer ids, got dtype {tokens.dtype.name}.")
    if tokens.shape.rank != 2:
        raise ValueError(f"tokens must be 2-D (batch, n_k), got shape {tuple(tokens.shape)}.")
    if isinstance(pad_id, bool) or not isinstance(pad_id, numbers.Integral):
        raise ValueError(f"pad_id must be an integer, got {pad_id!r}.")
    return _expand(tokens != tf.cast(pad_id, tokens.dtype), _optional_n_q(n_q))


def causal_mask(n):
    """Lower-triangular ``(n, n)`` mask: query i may attend to keys 0..i, never later ones."""
    n = _checks.positive_int("n", n)
    return tf.constant(np.tril(np.ones((n, n), dtype=bool)))


def combine_masks(*masks):
    """Logical AND of boolean masks, broadcast together (e.g. padding AND causal).

    ``padding_mask(lengths, n)`` ``(batch, 1, n)`` combined with ``causal_mask(n)``
    ``(n, n)`` gives ``(batch, n, n)``: a query may attend to a key only if every mask
    allows it.
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask, got none.")
    masks = [tf.convert_to_tensor(m) for m in masks]
    for i, m in enumerate(masks):
        if m.dtype != tf.bool:
            raise ValueError(
                f"mask {i} must be boolean (True = may attend), got dtype {m.dtype.name}."
            )
    shape = masks[0].shape
    for m in masks[1:]:
        try:
            shape = tf.broadcast_static_shape(shape, m.shape)
        except ValueError as err:
            shapes = ", ".join(str(tuple(each.shape)) for each in masks)
            raise ValueError(f"masks must broadcast together, got shapes {shapes}.") from err
    combined = masks[0]
    for m in masks[1:]:
        combined = tf.logical_and(combined, m)
    return combined


# --- the pitfall: attention without a padding mask ----------------------------------


@dataclasses.dataclass
class PaddingLeak:
    """What the padding does to a layer's outputs, without and with a padding mask.

    ``change`` fields: the largest absolute change of an output at a real position
    when only the padding's values change. ``pad_weight`` fields: the total weight
    that a real query of a padded sequence gives to the padded keys, averaged over
    those queries and the heads. ``weights``
    fields: the layer's weights on the zero-padded batch, ``(batch, heads, n, n)``.
    """

    change_unmasked: float
    change_masked: float
    pad_weight_unmasked: float
    pad_weight_masked: float
    weights_unmasked: np.ndarray = dataclasses.field(repr=False)
    weights_masked: np.ndarray = dataclasses.field(repr=False)


def _replace_padding(x, lengths, seed):
    """x with every padded position refilled with N(0, 1) noise."""
    real = np.arange(x.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (batch, n)
    noise = np.random.default_rng(seed).normal(size=x.shape).astype(x.dtype)
    return np.where(real[..., None], x, noise), real


def padding_leak(layer, x, lengths, seed=1):
    """Run a self-attention ``layer`` on a padded batch with and without a padding mask.

    Args:
        layer: a :class:`attnbook.MiniMultiHeadAttention` (any layer that takes
            ``attention_mask=`` and ``return_attention_scores=True`` will do).
        x: the padded batch ``(batch, n, features)``, e.g. from
            :func:`attnbook.toy.padded_batch`.
        lengths: ``(batch,)`` real lengths; positions ``>= length`` are padding.
        seed: seed of the noise that replaces the padding in the second run.

    Returns:
        A :class:`PaddingLeak`. Without the mask, outputs at real positions move when
        the padding moves and the padding takes weight; with it, both are exactly 0.
    """
    x = np.asarray(x)
    mask = padding_mask(lengths, x.shape[1])
    x_noisy, real = _replace_padding(x, lengths, seed)
    has_pad = real.sum(1) < x.shape[1]
    rows = real & has_pad[:, None]  # real queries of sequences that have padding
    result = {}
    for name, m in [("unmasked", None), ("masked", mask)]:
        out, w = layer(x, attention_mask=m, return_attention_scores=True)
        out_noisy = layer(x_noisy, attention_mask=m)
        diff = np.abs(out.numpy() - out_noisy.numpy())[real]
        pad_share = (w.numpy() * ~real[:, None, None, :]).sum(-1).mean(1)  # (batch, n)
        result[f"change_{name}"] = float(diff.max())
        result[f"pad_weight_{name}"] = float(pad_share[rows].mean()) if rows.any() else 0.0
        result[f"weights_{name}"] = w.numpy()
    return PaddingLeak(**result)
