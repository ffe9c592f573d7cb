"""长序列注意力，前向计算不存 n × n 打分表（滑动窗口只在窗口远小于序列长度时才省）：正文点名的两种变体（滑动窗口、线性注意力），外加精确的分块注意力。

- 滑动窗口注意力 :func:`sliding_window_attention`：每个查询只看邻近的位置，
  成本是 ``O(n · B)``，块长 ``B = max(min(window, n), 64)``。
- 线性注意力 :func:`linear_attention`：用核特征映射代替 softmax，乘积可以重新
  结合成 ``φ(Q) (φ(K)ᵀ V)``，成本是 ``O(n · d_k · d_v)``。
- 分块注意力 :func:`chunked_attention`：精确的 softmax 注意力，每次只处理一块键，
  靠运行最大值与运行和逐块累加（在线 softmax，FlashAttention 的做法），内存是
  ``O(n · chunk_size)``，运算量仍是 ``O(n²)``。

每个函数只返回输出 ``(..., n_q, d_v)``：它们都不会存下形状为 ``(..., n_q, n_k)`` 的
权重表，所以也没有权重可返回。滑动窗口的分数按块存放，窗口接近序列长度、或序列不比
64 长多少时，这些块的元素反而比完整的打分表多（见 :func:`sliding_window_attention`）。
"""

from . import _checks
from ._tf import tf
from .attention import _masked_softmax, scale_query

_MIN_BLOCK = 64  # smallest query block of the sliding window: keeps the matmuls wide


# --- helpers -------------------------------------------------------------------------


def _static_len(x, axis, name):
    """The static length of ``x`` along ``axis``; these functions need it to plan blocks."""
    size = x.shape[axis]
    if size is None:
        raise ValueError(f"{name} needs a known sequence length (axis {axis}), got shape {tuple(x.shape)}.")
    return size


def _pad_axis(x, axis, before, after):
    """Pad ``x`` with zeros (False) along a negative ``axis``; a negative ``after`` crops."""
    if after < 0:
        x = x[(Ellipsis, slice(0, x.shape[axis] + after)) + (slice(None),) * (-axis - 1)]
        after = 0
    paddings = [[0, 0]] * x.shape.rank
    paddings[axis] = [before, after]
    return tf.pad(x, paddings)


# --- sliding window ------------------------------------------------------------------


def sliding_window_attention(query, key, value, window, causal=False, mask=None):
    """滑动窗口注意力：查询 ``i`` 只看满足 ``|i - j| <= window`` 的键 ``j``。

    ``causal=True`` 时窗口只朝前：``i - window <= j <= i``。结果与
    :func:`attnbook.scaled_dot_product_attention` 配上同样的带状掩码在 float32 舍入之内一致
    （仓库里的测试核对），但按块计算：查询每 ``B = max(min(window, max(n_q, n_k)), 64)``
    个位置切成一块，每块只看自己和左右相邻的两块键（因果时只看自己和前一块），也就是一块
    ``(B, 3B)`` （或 ``(B, 2B)``）的分数，带外的遮住。时间与内存是 ``O(n_q · B)``，而不是
    ``O(n_q · n_k)``；``window`` 接近序列长度时，每个查询算的 ``3B`` 个分数反而比完整的打分表多。
    查询的位置 ``i`` 与键的位置 ``i`` 对齐，与 ``keras.layers.MultiHeadAttention(sliding_window=window + 1)``
    相同，后者的带是 ``|i - j| < sliding_window``。

    Args:
        query: 查询 ``(..., n_q, d_k)``；``n_q`` 必须在静态形状中已知。
        key: 键 ``(..., n_k, d_k)``；``n_k`` 也必须已知。
        value: 值 ``(..., n_k, d_v)``。
        window: 正整数，允许的最大距离 ``|i - j|``。
        causal: 为 True 时，查询之后的键也不能看。
        mask: 可选的布尔掩码，可广播到 ``(..., n_q, n_k)``，True 表示可以看；与带状
            范围取逻辑与。键的填充掩码 ``(..., 1, n_k)`` 不会破坏线性成本；完整的
            ``(..., n_q, n_k)`` 掩码只有带内的部分影响结果，但函数会为它做一份与掩码
            同样大小的补齐副本，成本是 ``O(n_q · n_k)``：要保持线性成本，传键的填充掩码。

    Returns:
        输出 ``(..., n_q, d_v)``。一个键都不能看的查询得到全 0。

    Raises:
        ValueError: ``window`` 不是正整数、序列长度未知，或者输入会被
            :func:`attnbook.scaled_dot_product_attention` 拒绝。
    """
    window = _checks.positive_int("window", window)
    query, key, value = _checks.check_qkv(query, key, value)
    n_q, n_k = _static_len(query, -2, "query"), _static_len(key, -2, "key")
    if mask is not None:
        mask = _checks.score_mask(mask, query, key)

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

    query = scale_query(query)
    k, v = windows(key, -2), windows(value, -2)  # (..., n_blocks, width, d)
    scores = tf.matmul(blocks(query), k, transpose_b=True)  # (..., n_blocks, B, width)
    key_exists = windows(tf.ones([n_k], tf.bool), -1)  # (n_blocks, width): False on padding
    allowed = _band(block, width, window, causal)[None] & key_exists[:, None, :]
    if mask is not None:
        allowed = allowed & _mask_tiles(mask, windows, blocks, block, tail, idx)
    out = tf.matmul(_masked_softmax(scores, allowed), v)  # (..., n_blocks, B, d_v)
    out = tf.reshape(out, tf.concat([tf.shape(out)[:-3], [n_blocks * block, v.shape[-1]]], 0))
    return out[..., :n_q, :]


def _band(block, width, window, causal):
    """(B, width) boolean tile: query r of a block against key c of its key blocks."""
    offset = block + tf.range(block)[:, None] - tf.range(width)[None, :]  # i - j
    allowed = tf.abs(offset) <= window
    return allowed & (offset >= 0) if causal else allowed


def _mask_tiles(mask, windows, blocks, block, tail, idx):
    """Cut the band's tiles out of a user mask ``(..., n_q or 1, n_k or 1)``.

    Returns a mask broadcastable to ``(..., n_blocks, B, width)``; only the band
    reaches the result, but a full mask is padded whole first (a copy of its size).
    Boolean tensors are gathered and reshaped but never transposed: oneDNN logs
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
    """φ(x) = elu(x) + 1，Katharopoulos 等人（2020）使用的正值特征映射。"""
    return tf.nn.elu(x) + 1.0


def linear_attention(query, key, value, feature_map=elu_plus_one, causal=False, chunk_size=64):
    """线性注意力（核化注意力）：用 φ(q)·φ(k) 代替 softmax 里的 exp(q·k)。

    ``out_i = Σ_j (φ(q_i)·φ(k_j)) v_j / Σ_j φ(q_i)·φ(k_j)``，按 ``φ(Q) (φ(K)ᵀ V)``
    的顺序计算，所以 ``n_q × n_k`` 的表从不出现（Katharopoulos 等人，2020，
    “Transformers are RNNs”）。与论文一样，这里没有 ``1/√d_k`` 的缩放。

    非因果：时间 ``O((n_q + n_k) · d_k · d_v)``；内存除输入和输出外是随序列长度线性增长的
    特征 φ(Q)、φ(K) 与一张 ``d_k × d_v`` 的表，即 ``O((n_q + n_k) · d_k + d_k · d_v)``。
    因果（``j <= i``）：累计和 ``Σ_{j<=i} φ(k_j) v_jᵀ`` 每 ``chunk_size`` 个位置算一块
    （对各块的总和做前缀和），块内再做一个带掩码的 ``chunk_size × chunk_size`` 乘积，所以内存是
    ``O(n · (chunk_size + d_k · d_v / chunk_size))``，而不是对每个位置的外积逐个累加时的
    ``O(n · d_k · d_v)``。

    Args:
        query: 查询 ``(..., n_q, d_k)``。
        key: 键 ``(..., n_k, d_k)``。
        value: 值 ``(..., n_k, d_v)``。
        feature_map: 把 ``(..., n, d_k)`` 映射成非负特征 ``(..., n, d_φ)`` 的函数。
        causal: 为 True 时，查询 ``i`` 只看 ``j <= i`` 的键（需要静态已知的长度）。
        chunk_size: 正整数，因果形式的分块长度。

    Returns:
        输出 ``(..., n_q, d_v)``。归一化分母为 0 的查询得到全 0。

    Raises:
        ValueError: ``chunk_size`` 不是正整数、``feature_map`` 不可调用，或者输入
            会被 :func:`attnbook.scaled_dot_product_attention` 拒绝。
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
    value = tf.concat([value, tf.ones_like(value[..., :1])], -1)  # the last column accumulates the normaliser

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
    """分块注意力：逐块读键，用在线 softmax 算出精确的 softmax 注意力。

    这是 FlashAttention 的思路：键和值每次读 ``chunk_size`` 个位置，每个查询维护
    一个运行最大值 ``m``、一个运行归一化和 ``l`` 与一个运行加权和，每块更新一次；
    最大值变大时，旧的累计量乘以 ``exp(m_old - m_new)`` 重新缩放（Milakov 与
    Gimelshein，2018；Dao 等人，2022）。数学上与 :func:`attnbook.scaled_dot_product_attention`
    相等，算出的结果在输入精度的舍入之内一致，但最大的中间量只有 ``(..., n_q, chunk_size)``，
    所以前向计算只需 ``O(n_q · chunk_size)`` 的内存，而不是 ``O(n_q · n_k)``；运算量仍是
    ``O(n_q · n_k · d)``。可以对它求导，但反向传播要存下每一块的权重（又是 ``O(n_q · n_k)``）；
    FlashAttention 用一个重新计算这些权重的自定义反向传播避开了这一点，这个教学版本没有。

    Args:
        query: 查询 ``(..., n_q, d_k)``。
        key: 键 ``(..., n_k, d_k)``；``n_k`` 必须在静态形状中已知。
        value: 值 ``(..., n_k, d_v)``。
        chunk_size: 正整数，每块的键数。
        mask: 可选的布尔掩码，可广播到 ``(..., n_q, n_k)``，True 表示可以看。

    Returns:
        输出 ``(..., n_q, d_v)``。一个键都不能看的查询得到全 0，不会是 NaN。
        半精度输入在 float32 中累加，再转回原来的类型。

    Raises:
        ValueError: ``chunk_size`` 不是正整数、``n_k`` 未知，或者输入会被
            :func:`attnbook.scaled_dot_product_attention` 拒绝。
    """
    chunk_size = _checks.positive_int("chunk_size", chunk_size)
    query, key, value = _checks.check_qkv(query, key, value)
    n_k = _static_len(key, -2, "key")
    if mask is not None:
        mask = _checks.score_mask(mask, query, key)
    dtype = query.dtype  # check_qkv: one dtype for all three
    if dtype in _checks.HALF_DTYPES:
        query, key, value = (tf.cast(t, tf.float32) for t in (query, key, value))
    query = scale_query(query)

    # (..., n_q, 1) with query's and key's batch axes broadcast, as the scores will be.
    batch = tf.broadcast_dynamic_shape(tf.shape(query)[:-2], tf.shape(key)[:-2])
    per_query = tf.concat([batch, tf.shape(query)[-2:-1], [1]], 0)
    work = query.dtype  # float32 for half-precision inputs (cast above), else their own
    m = tf.fill(per_query, tf.constant(float("-inf"), work))  # running maximum score per query
    l = tf.zeros(per_query, work)  # running Σ exp(score - m)
    acc = tf.zeros(tf.concat([per_query[:-1], tf.shape(value)[-1:]], 0), work)  # running Σ p·v

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

    # One block at a time (parallel_iterations=1), or blocks run ahead and pile up.
    _, m, l, acc = tf.while_loop(lambda start, *_: start < n_k, step, (tf.constant(0), m, l, acc),
                                 parallel_iterations=1)
    return tf.cast(tf.math.divide_no_nan(acc, l), dtype)
