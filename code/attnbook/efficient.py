"""Attention for long sequences without an n × n table: the variants that the text names.

- :func:`sliding_window_attention` (滑动窗口): each query sees only its neighbours, so the
  cost is ``O(n · window)``.
- :func:`linear_attention` (线性注意力): a kernel feature map replaces the softmax, so the
  products can be regrouped as ``φ(Q) (φ(K)ᵀ V)`` and cost ``O(n · d_k · d_v)``.
- :func:`chunked_attention` (分块): exact softmax attention computed one block of keys at a
  time with a running maximum and a running sum (online softmax, as in FlashAttention),
  so memory is ``O(n · chunk_size)`` while the arithmetic stays ``O(n²)``.

Each function returns the output only, shaped ``(..., n_q, d_v)``: none of them ever
holds the full ``(..., n_q, n_k)`` weight table, so there is none to return.
"""

from . import _checks
from ._tf import tf
from .attention import masked_softmax

_MIN_BLOCK = 64  # smallest query block of the sliding window: keeps the matmuls wide


# --- helpers -------------------------------------------------------------------------


def _static_len(x, axis, name):
    """The static length of ``x`` along ``axis``; these functions need it to plan blocks."""
    size = x.shape[axis]
    if size is None:
        raise ValueError(
            f"{name} needs a known sequence length (axis {axis}), got shape {tuple(x.shape)}."
        )
    return size


def _pad_axis(x, axis, before, after):
    """Pad ``x`` with zeros (False) along a negative ``axis``; a negative ``after`` crops."""
    if after < 0:
        x = x[(Ellipsis, slice(0, x.shape[axis] + after)) + (slice(None),) * (-axis - 1)]
        after = 0
    paddings = [[0, 0]] * x.shape.rank
    paddings[axis] = [before, after]
    return tf.pad(x, paddings)


def _full_rank_mask(mask, query, key, name="mask"):
    """Check ``mask`` against the score shape ``(..., n_q, n_k)``; give it that rank."""
    try:
        batch = tf.broadcast_static_shape(query.shape[:-2], key.shape[:-2])
    except ValueError as err:
        raise ValueError(
            f"query and key batch axes must broadcast, got query {tuple(query.shape)} "
            f"and key {tuple(key.shape)}."
        ) from err
    target_shape = batch.concatenate([query.shape[-2], key.shape[-2]])
    mask = _checks.check_mask(mask, target_shape, name)
    for _ in range(target_shape.rank - mask.shape.rank):
        mask = mask[None]
    return mask


def _to_float32(*tensors):
    """Cast half-precision tensors to float32; return them and the original dtype."""
    dtype = tensors[0].dtype
    if dtype in _checks.HALF_DTYPES:
        tensors = tuple(tf.cast(t, tf.float32) for t in tensors)
    return tensors, dtype


# --- sliding window ------------------------------------------------------------------


def sliding_window_attention(query, key, value, window, causal=False, mask=None):
    """Softmax attention restricted to a band: query ``i`` sees key ``j`` iff ``|i - j| <= window``.

    With ``causal=True`` the band is one-sided, ``i - window <= j <= i``. The result equals
    :func:`attnbook.scaled_dot_product_attention` with the matching band mask, but the
    work is done per block: queries are cut into blocks of ``B = max(window, 64)``
    positions, and each block attends only to its own and its two neighbouring key
    blocks (one, the previous, when causal): a ``(B, 3B)`` (or ``(B, 2B)``) score tile.
    Time and memory are ``O(n_q · B)``, never ``O(n_q · n_k)``. Position ``i`` of the queries lines up with position ``i`` of the
    keys, as in ``keras.layers.MultiHeadAttention(sliding_window=window + 1)``, whose
    band is ``|i - j| < sliding_window``.

    Args:
        query: ``(..., n_q, d_k)``; ``n_q`` must be known statically.
        key: ``(..., n_k, d_k)``.
        value: ``(..., n_k, d_v)``.
        window: positive int, the largest allowed distance ``|i - j|``.
        causal: if True, keys after the query are not allowed either.
        mask: optional boolean, broadcastable to ``(..., n_q, n_k)``, True = may attend;
            combined with the band by AND. A key-padding mask ``(..., 1, n_k)`` keeps the
            cost linear; a full ``(..., n_q, n_k)`` mask is read only inside the band.

    Returns:
        The output, ``(..., n_q, d_v)``. A query with no allowed key gets zeros.

    Raises:
        ValueError: on a non-positive ``window``, an unknown sequence length, or any
            input that :func:`attnbook.scaled_dot_product_attention` rejects.
    """
    window = _checks.positive_int("window", window)
    query, key, value = _checks.check_qkv(query, key, value)
    n_q = _static_len(query, -2, "query")
    n_k = _static_len(key, -2, "key")
    if mask is not None:
        mask = _full_rank_mask(mask, query, key)

    # A window wider than both sequences is full attention; the clamp bounds the blocks.
    block = max(min(window, max(n_q, n_k)), _MIN_BLOCK)
    n_blocks = -(-n_q // block)
    # Query block b sees key blocks b - 1, b and (unless causal) b + 1. Keys get one block
    # of zero padding in front and are padded (or cropped) at the end, so that block b's
    # keys are the padded positions [b·B, b·B + width).
    width = (2 if causal else 3) * block
    tail = (n_blocks - 1) * block + width - block - n_k
    idx = tf.range(n_blocks)[:, None] * block + tf.range(width)[None, :]  # (n_blocks, width)

    def windows(x, axis):  # key axis n_k -> (n_blocks, width), in place of axis
        return tf.gather(_pad_axis(x, axis, block, tail), idx, axis=axis)

    def blocks(x):  # query axis: (..., n_q, d) -> (..., n_blocks, B, d)
        x = _pad_axis(x, -2, 0, n_blocks * block - n_q)
        return tf.reshape(x, tf.concat([tf.shape(x)[:-2], [n_blocks, block, x.shape[-1]]], 0))

    query = query * tf.math.rsqrt(tf.cast(query.shape[-1], query.dtype))  # 缩放 Q, as in sdpa
    k, v = windows(key, -2), windows(value, -2)  # (..., n_blocks, width, d)
    scores = tf.matmul(blocks(query), k, transpose_b=True)  # (..., n_blocks, B, width)
    key_exists = windows(tf.ones([n_k], tf.bool), -1)  # (n_blocks, width): False on padding
    allowed = _band(block, width, window, causal)[None] & key_exists[:, None, :]
    if mask is not None:
        allowed = allowed & _mask_tiles(mask, windows, blocks, block, tail, idx)
    out = tf.matmul(masked_softmax(scores, allowed), v)  # (..., n_blocks, B, d_v)
    out = tf.reshape(out, tf.concat([tf.shape(out)[:-3], [n_blocks * block, v.shape[-1]]], 0))
    return out[..., :n_q, :]


def _band(block, width, window, causal):
    """(B, width) boolean tile: query r of a block against key c of its key blocks."""
    offset = block + tf.range(block)[:, None] - tf.range(width)[None, :]  # i - j
    allowed = tf.abs(offset) <= window
    return allowed & (offset >= 0) if causal else allowed


def _mask_tiles(mask, windows, blocks, block, tail, idx):
    """Cut the band's tiles out of a user mask ``(..., n_q or 1, n_k or 1)``.

    Returns a mask broadcastable to ``(..., n_blocks, B, width)``; only the band is
    read. Boolean tensors are gathered and reshaped but never transposed: oneDNN logs
    an error line for a boolean transpose, and such lines must not reach the book.
    """
    n_blocks, width = idx.shape
    if mask.shape[-2] == 1:  # the same for every query: (..., 1, n_k or 1)
        if mask.shape[-1] == 1:
            return mask[..., None, :, :]  # (..., 1, 1, 1)
        tiles = windows(mask, -1)  # (..., 1, n_blocks, width)
        return tf.reshape(tiles, tf.concat([tf.shape(tiles)[:-3], [n_blocks, 1, width]], 0))
    mask = blocks(mask)  # (..., n_blocks, B, n_k or 1)
    if mask.shape[-1] == 1:
        return mask
    # Row block b needs padded key columns idx[b]: gather them from the flattened
    # (n_blocks, B, padded n_k) axes, so no copy bigger than the mask is made.
    mask = _pad_axis(mask, -1, block, tail)
    rows = (tf.range(n_blocks)[:, None] * block + tf.range(block)[None, :]) * mask.shape[-1]
    flat = rows[:, :, None] + idx[:, None, :]  # (n_blocks, B, width)
    mask = tf.reshape(mask, tf.concat([tf.shape(mask)[:-3], [-1]], 0))
    return tf.gather(mask, flat, axis=-1)


# --- linear attention ----------------------------------------------------------------


def elu_plus_one(x):
    """φ(x) = elu(x) + 1, the positive feature map of Katharopoulos et al. (2020)."""
    return tf.nn.elu(x) + 1.0


def linear_attention(query, key, value, feature_map=elu_plus_one, causal=False, chunk_size=64):
    """Kernelized ("linear") attention: softmax(q·k) is replaced by φ(q)·φ(k).

    ``out_i = Σ_j (φ(q_i)·φ(k_j)) v_j / Σ_j φ(q_i)·φ(k_j)``, computed as
    ``φ(Q) (φ(K)ᵀ V)`` so that no ``n_q × n_k`` table exists (Katharopoulos et al., 2020,
    "Transformers are RNNs"). There is no ``1/√d_k`` scaling, as in the paper.

    Non-causal: time ``O((n_q + n_k) · d_k · d_v)``, memory ``O(d_k · d_v)`` beyond the
    inputs and output. Causal (``j <= i``): the running sums ``Σ_{j<=i} φ(k_j) v_jᵀ`` are
    taken per chunk of ``chunk_size`` positions (a prefix sum over chunk totals) plus a
    masked ``chunk_size × chunk_size`` product inside each chunk, so memory is
    ``O(n · (chunk_size + d_k · d_v / chunk_size))`` rather than the ``O(n · d_k · d_v)``
    of a cumulative sum over every position's outer product.

    Args:
        query: ``(..., n_q, d_k)``.
        key: ``(..., n_k, d_k)``.
        value: ``(..., n_k, d_v)``.
        feature_map: maps ``(..., n, d_k)`` to non-negative features ``(..., n, d_φ)``.
        causal: if True, query ``i`` sees keys ``j <= i`` only (needs static lengths).
        chunk_size: positive int, the chunk length of the causal form.

    Returns:
        The output, ``(..., n_q, d_v)``. A query whose normaliser is 0 gets zeros.

    Raises:
        ValueError: on a non-positive ``chunk_size``, a non-callable ``feature_map``, or
            any input that :func:`attnbook.scaled_dot_product_attention` rejects.
    """
    chunk_size = _checks.positive_int("chunk_size", chunk_size)
    if not callable(feature_map):
        raise ValueError(f"feature_map must be callable, got {feature_map!r}.")
    query, key, value = _checks.check_qkv(query, key, value)
    phi_q, phi_k = feature_map(query), feature_map(key)
    if not causal:
        kv = tf.matmul(phi_k, value, transpose_a=True)  # (..., d_φ, d_v)
        z = tf.reduce_sum(phi_k, axis=-2)[..., None]  # (..., d_φ, 1)
        return tf.math.divide_no_nan(tf.matmul(phi_q, kv), tf.matmul(phi_q, z))
    return _causal_linear(phi_q, phi_k, value, chunk_size)


def _causal_linear(phi_q, phi_k, value, chunk):
    """Causal linear attention by chunks; shapes as in :func:`linear_attention`."""
    n_q = _static_len(phi_q, -2, "query")
    _static_len(phi_k, -2, "key")
    chunk = min(chunk, n_q)
    n = -(-n_q // chunk) * chunk
    # Key j pairs with query j: crop keys beyond the queries, pad with zero features.
    phi_q = _pad_axis(phi_q, -2, 0, n - n_q)
    phi_k = _pad_axis(phi_k, -2, 0, n - phi_k.shape[-2])
    value = _pad_axis(value, -2, 0, n - value.shape[-2])
    ones = tf.ones_like(value[..., :1])
    value = tf.concat([value, ones], -1)  # the last column accumulates the normaliser

    def chunks(x):  # (..., n, d) -> (..., n / chunk, chunk, d)
        return tf.reshape(x, tf.concat([tf.shape(x)[:-2], [n // chunk, chunk, x.shape[-1]]], 0))

    q, k, v = chunks(phi_q), chunks(phi_k), chunks(value)
    state = tf.matmul(k, v, transpose_a=True)  # (..., n_chunks, d_φ, d_v + 1) per chunk
    state = tf.cumsum(state, axis=-3, exclusive=True)  # sums over all earlier chunks
    inner = tf.linalg.band_part(tf.matmul(q, k, transpose_b=True), -1, 0)  # (.., C, C), j<=i
    out = tf.matmul(q, state) + tf.matmul(inner, v)  # (..., n_chunks, chunk, d_v + 1)
    out = tf.reshape(out, tf.concat([tf.shape(out)[:-3], [n, out.shape[-1]]], 0))[..., :n_q, :]
    return tf.math.divide_no_nan(out[..., :-1], out[..., -1:])


# --- chunked exact attention ---------------------------------------------------------


def chunked_attention(query, key, value, chunk_size, mask=None):
    """Exact softmax attention over key blocks with an online softmax (FlashAttention's idea).

    The keys and values are read ``chunk_size`` positions at a time. For every query a
    running maximum ``m``, a running normaliser ``l`` and a running weighted sum are
    updated per block and rescaled by ``exp(m_old - m_new)`` whenever the maximum grows
    (Milakov & Gimelshein 2018; Dao et al. 2022). The result equals
    :func:`attnbook.scaled_dot_product_attention`, but the largest intermediate is
    ``(..., n_q, chunk_size)``, so the forward pass needs ``O(n_q · chunk_size)`` memory
    instead of ``O(n_q · n_k)``; the arithmetic is still ``O(n_q · n_k · d)``.
    Differentiating through it is possible but stores every block's weights for the
    backward pass (``O(n_q · n_k)`` again); FlashAttention avoids that with a custom
    backward pass that recomputes them, which this teaching version does not have.

    Args:
        query: ``(..., n_q, d_k)``.
        key: ``(..., n_k, d_k)``; ``n_k`` must be known statically.
        value: ``(..., n_k, d_v)``.
        chunk_size: positive int, keys per block.
        mask: optional boolean, broadcastable to ``(..., n_q, n_k)``, True = may attend.

    Returns:
        The output, ``(..., n_q, d_v)``. A query with no allowed key gets zeros, never NaN.
        Half-precision inputs are accumulated in float32 and cast back.

    Raises:
        ValueError: on a non-positive ``chunk_size``, an unknown ``n_k``, or any input
            that :func:`attnbook.scaled_dot_product_attention` rejects.
    """
    chunk_size = _checks.positive_int("chunk_size", chunk_size)
    query, key, value = _checks.check_qkv(query, key, value)
    n_k = _static_len(key, -2, "key")
    if mask is not None:
        mask = _full_rank_mask(mask, query, key)
    (query, key, value), dtype = _to_float32(query, key, value)
    query = query / tf.sqrt(tf.cast(query.shape[-1], query.dtype))

    # (..., n_q, 1) with query's and key's batch axes broadcast, as the scores will be.
    per_query = tf.concat(
        [tf.broadcast_dynamic_shape(tf.shape(query)[:-2], tf.shape(key)[:-2]), tf.shape(query)[-2:-1], [1]], 0
    )
    m = tf.fill(per_query, float("-inf"))  # running maximum score per query
    l = tf.zeros(per_query)  # running Σ exp(score - m)
    acc = tf.zeros(tf.concat([per_query[:-1], tf.shape(value)[-1:]], 0))  # running Σ p·v

    def step(start, m, l, acc):
        stop = tf.minimum(start + chunk_size, n_k)
        scores = tf.matmul(query, key[..., start:stop, :], transpose_b=True)
        allowed = None
        if mask is not None:
            allowed = mask if mask.shape[-1] == 1 else mask[..., start:stop]
            scores = tf.where(allowed, scores, float("-inf"))
        m_new = tf.maximum(m, tf.reduce_max(scores, -1, keepdims=True))
        # Until a query has seen an allowed key its maximum is -inf; shift by 0 instead
        # so that exp() gives 0, not exp(-inf + inf) = NaN.
        shift = tf.where(tf.math.is_inf(m_new), tf.zeros_like(m_new), m_new)
        p = tf.exp(scores - shift)
        if allowed is not None:
            p = tf.where(allowed, p, tf.zeros_like(p))
        scale = tf.exp(m - shift)  # rescales the old sums to the new maximum
        l = l * scale + tf.reduce_sum(p, -1, keepdims=True)
        acc = acc * scale + tf.matmul(p, value[..., start:stop, :])
        return stop, m_new, l, acc

    _, m, l, acc = tf.while_loop(
        lambda start, *_: start < n_k, step, (tf.constant(0), m, l, acc),
        parallel_iterations=1,  # one block at a time, or blocks run ahead and pile up
    )
    return tf.cast(tf.math.divide_no_nan(acc, l), dtype)
