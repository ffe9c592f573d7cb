"""Checkers of ``padding_mask`` and ``decoder_mask`` (causal and padding mask combined)."""

import numpy as np

from ... import masks
from ..._tf import tf
from ...attention import scaled_dot_product_attention
from .. import _messages as say
from .._cases import Checker, Fail
from .._compare import ATOL, RTOL, to_array
from . import numpy_ref as ref
from . import call_case, twice_case

MASK_FORBIDDEN = (
    ("attnbook.padding_mask", masks.padding_mask),
    ("attnbook.padding_mask_from_tokens", masks.padding_mask_from_tokens),
    ("attnbook.causal_mask", masks.causal_mask),
    ("attnbook.combine_masks", masks.combine_masks),
)
INVERTED = "（看起来掩码反了：True 表示可以看，False 表示遮住）"


def _bool_mask(result):
    mask = to_array(result, "掩码")
    if mask.dtype != bool:
        raise Fail(f"掩码必须是布尔张量，得到 {tf.as_dtype(mask.dtype).name}"
                   "（True 表示可以看；可以用比较运算直接得到布尔值）")
    return mask


def _first_difference(got, expected, lengths, hints, query_axis=True):
    """Fail naming the first wrong entry of a full (batch, n_q, n_k) mask, plus a hint."""
    b, i, j = (int(t) for t in np.argwhere(got != expected)[0])
    hint = next((text for text, variant in hints if np.array_equal(got, variant)), "")
    where = f"查询 {i} 对键 {j}" if query_axis else f"位置 {j}"
    raise Fail(f"掩码不对：序列 {b}（长度 {lengths[b]}）中{where} 应为 "
               f"{bool(expected[b, i, j])}，得到 {bool(got[b, i, j])}{hint}")


# --- padding mask --------------------------------------------------------------------


def _padding_judge(lengths, max_len, n_q, rng):
    batch = len(lengths)
    reference = masks.padding_mask(lengths, max_len).numpy()
    q, k, v = (ref.normal(rng, batch, n, 4) for n in (n_q, max_len, max_len))
    expected = scaled_dot_product_attention(q, k, v, reference)[0].numpy()
    j = np.arange(max_len)[None, None, :]
    lens = np.asarray(lengths)[:, None, None]
    hints = [(INVERTED, j >= lens), ("（看起来没有用到 lengths：每个位置都是 True）", j >= 0),
             ("（看起来差了一位：位置 j 是真实位置当且仅当 j < 长度）", j <= lens)]

    def judge(result):
        mask = _bool_mask(result)
        target = (batch, n_q, max_len)
        if mask.ndim > 3 or _broadcast(mask.shape, target) != target:
            raise Fail(f"掩码的形状 {say.fmt_shape(mask.shape)} 不能广播到分数的形状 {target}（batch, n_q, n_k）")
        output = scaled_dot_product_attention(q, k, v, tf.constant(mask))[0].numpy()
        if np.allclose(output, expected, atol=ATOL, rtol=RTOL):
            return
        full = lambda m: np.broadcast_to(m, target)  # noqa: E731
        _first_difference(full(mask), full(reference), lengths,
                          [(t, full(h)) for t, h in hints], query_axis=False)

    return judge


def _broadcast(shape, target):
    try:
        return tuple(np.broadcast_shapes(shape, target))
    except ValueError:
        return None


def _lengths(rng, batch, max_len, low=1):
    """``batch`` different lengths in ``low .. max_len - 1``: every sequence has padding."""
    return tf.constant(rng.choice(np.arange(low, max_len), size=batch, replace=False), tf.int32)


def padding_cases(rng):
    def case(name, lengths, max_len, n_q):
        lengths = tf.constant(lengths, tf.int32)
        return call_case(name, (lengths, max_len), _padding_judge(lengths.numpy(), max_len, n_q, rng))

    zero = rng.integers(1, 7, size=3)
    zero[rng.integers(3)] = 0
    a = (_lengths(rng, 3, 6), 6)
    b = (tf.constant((a[0].numpy() + 2) % 6 + 1, tf.int32), 6)  # different lengths, same shape
    return [
        case("长度各不相同", _lengths(rng, 3, 5), 5, 4),
        case("批次大小为 1", _lengths(rng, 1, 6), 6, 3),
        case("有一个长度为 0 的序列", zero, 7, 2),
        case("所有序列都是满长度", [6, 6], 6, 5),
        twice_case(a, b, lambda lengths, max_len: _padding_judge(lengths.numpy(), max_len, 4, rng)),
    ]


# --- decoder mask --------------------------------------------------------------------


def _decoder_judge(lengths, n):
    i, j = np.arange(n)[None, :, None], np.arange(n)[None, None, :]
    real = j < np.asarray(lengths)[:, None, None]
    expected = (j <= i) & real
    full = lambda m: np.broadcast_to(m, expected.shape)  # noqa: E731
    hints = [
        ("（看起来用了上三角：查询 i 只能看键 j ≤ i，应是下三角）", full((j >= i) & real)),
        ("（看起来把对角线也遮住了：查询 i 可以看它自己，j ≤ i）", full((j < i) & real)),
        ("（看起来忘了填充部分：键 j 还必须满足 j < 长度）", full(j <= i)),
        ("（看起来忘了因果部分：查询 i 不能看 j > i 的键）", full(real)),
        ("（看起来把填充位置的查询行也遮住了：按约定只遮键）",
         expected & (i < np.asarray(lengths)[:, None, None])),
        (INVERTED, ~expected),
    ]

    def judge(result):
        mask = _bool_mask(result)
        if mask.shape != expected.shape:
            raise Fail(say.shape_mismatch(expected.shape, mask.shape) + "（batch, n, n）")
        if not np.array_equal(mask, expected):
            _first_difference(mask, expected, list(lengths), hints)

    return judge


def decoder_cases(rng):
    def case(name, lengths, n):
        lengths = tf.constant(lengths, tf.int32)
        return call_case(name, (lengths, n), _decoder_judge(lengths.numpy(), n))

    zero = rng.integers(1, 6, size=2)
    zero[rng.integers(2)] = 0
    a = (_lengths(rng, 3, 6, low=2), 6)
    b = (tf.constant((a[0].numpy() + 1) % 5 + 1, tf.int32), 6)
    return [
        case("长度各不相同", _lengths(rng, 3, 6, low=2), 6),
        case("批次大小为 1", _lengths(rng, 1, 7, low=2), 7),
        case("有一个长度为 0 的序列", zero, 5),
        case("所有序列都是满长度", [4, 4, 4], 4),
        twice_case(a, b, lambda lengths, n: _decoder_judge(lengths.numpy(), n)),
    ]


PADDING = Checker(padding_cases, MASK_FORBIDDEN)
DECODER = Checker(decoder_cases, MASK_FORBIDDEN)
