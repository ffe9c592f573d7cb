"""布尔注意力掩码（True 表示“这个查询可以看这个键”），以及正文⚠️ 常见坑的实测：
「给注意力层的输入忘了加掩码」。

这里的每个掩码都能广播到 :func:`attnbook.scaled_dot_product_attention` 的分数形状
``(..., n_q, n_k)``，也能直接交给 :class:`attnbook.MiniMultiHeadAttention` 的
``attention_mask=``，与 Keras 的约定相同。
"""

import dataclasses
import numbers

import numpy as np

from . import _checks
from ._tf import tf


def _lengths_tensor(lengths, max_len):
    """``lengths`` as a rank-1 integer tensor whose values, where they are known (eager or
    constant), lie in ``0 .. max_len``; else ``ValueError``."""
    given = lengths
    try:
        lengths = tf.convert_to_tensor(lengths)
    except (TypeError, ValueError) as err:
        raise ValueError(f"lengths must be a 1-D sequence of integers, got {given!r}.") from err
    if not lengths.dtype.is_integer:
        raise ValueError(f"lengths must be integers (one per sequence), got dtype {lengths.dtype.name}: {given!r}.")
    if lengths.shape.rank != 1:
        raise ValueError(f"lengths must be 1-D (batch,), got shape {tuple(lengths.shape)}.")
    values = tf.get_static_value(lengths)
    if values is not None and np.any(values < 0):
        raise ValueError(f"lengths must be >= 0, got {values.tolist()}.")
    if values is not None and np.any(values > max_len):
        raise ValueError(f"lengths must be <= max_len={max_len}, got {values.tolist()} (longest {int(values.max())}).")
    return lengths


def _optional_n_q(n_q):
    return None if n_q is None else _checks.positive_int("n_q", n_q)


def _expand(key_mask, n_q):
    """(batch, n_k) -> (batch, 1, n_k), or (batch, n_q, n_k) when n_q is given."""
    mask = key_mask[:, None, :]
    if n_q is None:
        return mask
    return tf.broadcast_to(mask, (tf.shape(mask)[0], n_q, tf.shape(mask)[2]))


def padding_mask(lengths, max_len, n_q=None):
    """填充掩码：遮住每个序列末尾为了凑齐长度而补上的填充位置。

    Args:
        lengths: 整数 ``(batch,)``，每个序列真实位置的个数，各在 ``0 .. max_len`` 之间。
        max_len: 填充后的长度，也就是键的个数 ``n_k``。
        n_q: 可选的查询个数。不给时掩码形状为 ``(batch, 1, n_k)``，可广播到任意个
            查询；给出时为 ``(batch, n_q, n_k)``。

    Returns:
        布尔张量，在真实的键位置（``key < length``）为 True。长度为 0 的序列，
        每一行都没有可看的键，注意力权重全为 0。

    Raises:
        ValueError: ``lengths`` 不是一维整数序列，某个长度为负或超过 ``max_len``
            （长度在调用时已知才查得到：``tf.function`` 里传入的符号张量不检查取值），
            或者 ``max_len``、``n_q`` 不是正整数。
    """
    max_len = _checks.positive_int("max_len", max_len)
    n_q = _optional_n_q(n_q)
    lengths = _lengths_tensor(lengths, max_len)
    return _expand(tf.sequence_mask(lengths, max_len), n_q)


def padding_mask_from_tokens(tokens, pad_id=0, n_q=None):
    """由填充后的词元批次得到填充掩码：值为 ``pad_id`` 的位置被遮住。

    ``tokens`` 是整数 ``(batch, n_k)``。返回布尔掩码 ``(batch, 1, n_k)``，给出 ``n_q``
    时为 ``(batch, n_q, n_k)``；在 ``tokens != pad_id`` 处为 True。``tokens`` 不是
    二维整数张量、``pad_id`` 不是整数或 ``n_q`` 不是正整数时，抛出 ``ValueError``。
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
    """因果掩码：下三角的 ``(n, n)`` 布尔矩阵，查询 i 只能看键 0..i，看不到之后的键。"""
    n = _checks.positive_int("n", n)
    return tf.constant(np.tril(np.ones((n, n), dtype=bool)))


def combine_masks(*masks):
    """把几个布尔掩码广播到一起，再取逻辑与（例如填充掩码与因果掩码）。

    ``padding_mask(lengths, n)`` 的 ``(batch, 1, n)`` 与 ``causal_mask(n)`` 的
    ``(n, n)`` 合起来是 ``(batch, n, n)``：只有每个掩码都允许，查询才能看这个键。
    没有传入掩码、某个掩码不是布尔型或它们不能一起广播时，抛出 ``ValueError``。
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask, got none.")
    masks = [tf.convert_to_tensor(m) for m in masks]
    for i, m in enumerate(masks):
        if m.dtype != tf.bool:
            raise ValueError(f"mask {i} must be boolean (True = may attend), got dtype {m.dtype.name}.")
    combined = masks[0]
    for m in masks[1:]:
        try:
            tf.broadcast_static_shape(combined.shape, m.shape)
        except ValueError as err:
            shapes = ", ".join(str(tuple(each.shape)) for each in masks)
            raise ValueError(f"masks must broadcast together, got shapes {shapes}.") from err
        combined = tf.logical_and(combined, m)
    return combined


# --- the pitfall: attention without a padding mask ----------------------------------


@dataclasses.dataclass
class PaddingLeak:
    """填充对一层输出的影响，不加填充掩码（``*_unmasked``）与加了（``*_masked``）各一组。

    ``change_*``：只改变填充位置的值时，真实位置上的输出最大改变了多少（绝对值）。
    ``pad_weight_*``：有填充的序列里，真实位置的查询分给填充位置的键的权重之和，
    对这些查询和各个头取平均。``weights_*``：这一层在传入的批次上给出的注意力权重，
    形状 ``(batch, heads, n, n)``。
    """

    change_unmasked: float
    change_masked: float
    pad_weight_unmasked: float
    pad_weight_masked: float
    weights_unmasked: np.ndarray = dataclasses.field(repr=False)
    weights_masked: np.ndarray = dataclasses.field(repr=False)


def padding_leak(layer, x, lengths, seed=1):
    """在有填充的批次上运行自注意力层 ``layer``，不加与加填充掩码各测一次。

    每次都运行两遍：一遍用原来的 ``x``，一遍把填充位置换成 N(0, 1) 噪声，
    比较真实位置上的输出。

    Args:
        layer: 一个 :class:`attnbook.MiniMultiHeadAttention`；任何以
            ``layer(x, attention_mask=…, return_attention_scores=True)`` 调用、返回
            （输出，形状 ``(batch, heads, n, n)`` 的权重）的自注意力层都可以
            （``keras.layers.MultiHeadAttention`` 要另给 ``value``，不行）。
        x: 有填充的批次 ``(batch, n, features)``，例如来自
            :func:`attnbook.toy.padded_batch`。
        lengths: 真实长度 ``(batch,)``；位置 ``>= length`` 是填充。
        seed: 替换填充位置的噪声的种子。

    Returns:
        一个 :class:`PaddingLeak`。不加掩码时，填充一变，真实位置的输出跟着变，
        填充位置也分走了权重；加了掩码，这两个量都恰好为 0。
    """
    x = np.asarray(x)
    mask = padding_mask(lengths, x.shape[1])
    real = np.arange(x.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (batch, n)
    noise = np.random.default_rng(seed).normal(size=x.shape).astype(x.dtype)
    x_noisy = np.where(real[..., None], x, noise)  # every padded position refilled with noise
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
