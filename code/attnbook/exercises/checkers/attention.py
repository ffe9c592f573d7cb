"""Checkers of ``scaled_dot_product_attention`` and ``cross_attention`` (single head)."""

import functools

import numpy as np

from ... import attention, efficient
from ..._tf import tf
from ...masks import causal_mask
from .._cases import Checker, Fail
from .._compare import compare_pair, to_array
from . import numpy_ref as ref
from . import call_case, twice_case

SDPA_FORBIDDEN = (
    ("attnbook.scaled_dot_product_attention", attention.scaled_dot_product_attention),
    ("attnbook.masked_softmax", attention.masked_softmax),
    ("attnbook.attention._masked_softmax", attention._masked_softmax),
    ("attnbook.attention._attend", attention._attend),
    ("attnbook.chunked_attention", efficient.chunked_attention),
    ("attnbook.MiniMultiHeadAttention", attention.MiniMultiHeadAttention.call),
    ("attnbook.MiniMultiHeadAttention._compute_attention", attention.MiniMultiHeadAttention._compute_attention),
    ("attnbook.exercises.checkers.numpy_ref.attention", ref.attention),  # the hints' NumPy reference
)
EMPTY_ROW_NAN = "（一整行都被遮住时，这一行的注意力权重和输出应全为 0，而不是 0/0）"
MASKED_NOT_ZERO = ("被掩码遮住的位置，注意力权重应恰好为 0，得到 {value:.1e}（位置 {where}）："
                   "加在分数上的负数不够小，可以在 softmax 之后把这些位置置 0")


def _expected(query, key, value, mask=None):
    """The reference ``(output, weights)`` as NumPy arrays."""
    output, weights = attention.scaled_dot_product_attention(query, key, value, mask)
    return output.numpy(), weights.numpy()


# --- scaled dot-product attention ----------------------------------------------------


def _sdpa_hints(q, k, v, mask):
    """Known slips of scaled dot-product attention, as ``(text, (output, weights))``."""
    d_k, d_v = q.shape[-1], v.shape[-1]
    hints = [
        ("（看起来没有除以 √d_k）", ref.attention(q, k, v, mask, scale=1.0)),
        ("（看起来除以了 d_k 而不是 √d_k）", ref.attention(q, k, v, mask, scale=float(d_k))),
        ("（看起来 softmax 用错了轴：应沿最后一个轴（键）归一）", ref.attention(q, k, v, mask, axis=-2)),
    ]
    if d_v != d_k:
        hints.append(("（看起来按 √d_v 而不是 √d_k 缩放）", ref.attention(q, k, v, mask, scale=np.sqrt(d_v))))
    if mask is not None:
        hints += [
            ("（看起来忽略了掩码）", ref.attention(q, k, v)),
            ("（看起来掩码用反了：True 表示可以看）", ref.attention(q, k, v, ~np.asarray(mask))),
            ("（看起来整行被遮住时得到了均匀的注意力权重：这一行应全为 0）",
             ref.attention(q, k, v, mask, empty_rows="uniform")),
        ]
    return hints


def _sdpa_judge(q, k, v, mask=None):
    """Within tolerance of the reference; with a mask, the masked weights exactly 0."""
    pair = functools.partial(compare_pair, expected=_expected(q, k, v, mask),
                             hints=_sdpa_hints(q, k, v, mask), nan_hint=EMPTY_ROW_NAN)
    if mask is None:
        return pair

    def judge(result):
        pair(result)
        weights = to_array(result[1], whole=False)
        leaked = (weights != 0) & ~np.broadcast_to(np.asarray(mask), weights.shape)
        if leaked.any():
            where = tuple(int(i) for i in np.argwhere(leaked)[0])
            raise Fail(MASKED_NOT_ZERO.format(value=float(weights[where]), where=where))

    return judge


def _sdpa_case(name, q, k, v, mask=None):
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return call_case(name, args, _sdpa_judge(q, k, v, mask))


def _padding(rng, batch, n):
    lengths = rng.integers(1, n, size=batch)  # every sequence has some padding
    return tf.constant(np.arange(n)[None, None, :] < lengths[:, None, None])  # (batch, 1, n)


def _with_empty_row(rng, batch, n_q, n_k):
    mask = rng.random((batch, n_q, n_k)) < 0.6
    mask[..., 0] = True  # every row has an allowed key ...
    mask[0, 1, :] = False  # ... except this one
    return tf.constant(mask)


def sdpa_cases(rng):
    n = functools.partial(ref.normal, rng)
    a, b = (n(2, 5, 8), n(2, 5, 8), n(2, 5, 8)), (n(2, 5, 8), n(2, 5, 8), n(2, 5, 8))
    return [
        _sdpa_case("基本", n(2, 5, 8), n(2, 5, 8), n(2, 5, 8)),
        _sdpa_case("批次大小为 1", n(1, 4, 6), n(1, 4, 6), n(1, 4, 6)),
        _sdpa_case("n_q ≠ n_k，d_v ≠ d_k", n(2, 6, 8), n(2, 20, 8), n(2, 20, 5)),
        _sdpa_case("带头轴 (batch, heads, n, depth)", n(2, 3, 7, 4), n(2, 3, 7, 4), n(2, 3, 7, 4)),
        _sdpa_case("填充掩码", n(3, 6, 8), n(3, 6, 8), n(3, 6, 4), _padding(rng, 3, 6)),
        _sdpa_case("因果掩码", n(2, 6, 8), n(2, 6, 8), n(2, 6, 8), causal_mask(6)),
        _sdpa_case("有一整行被遮住", n(2, 4, 8), n(2, 5, 8), n(2, 5, 3), _with_empty_row(rng, 2, 4, 5)),
        twice_case(a, b, _sdpa_judge),
    ]


# --- cross-attention -----------------------------------------------------------------

ROLES_SWAPPED = "（看起来查询与键/值的来源弄反了：查询来自 x，键和值来自 context）"


def _cross_judge(x, context, wq, wk, wv):
    q, k, v = x @ wq, context @ wk, context @ wv
    batch, n_q, n_k, d_v = x.shape[0], x.shape[1], context.shape[1], wv.shape[1]
    hints = [
        (ROLES_SWAPPED, ((batch, n_k, d_v), (batch, n_k, n_q))),  # shapes only
        ("（看起来没有除以 √d_k）", ref.attention(q, k, v, scale=1.0)),
    ]
    if x.shape[-1] != wq.shape[-1]:
        hints.append(("（看起来按 x 的特征维度而不是 d_k 缩放）",
                      ref.attention(q, k, v, scale=np.sqrt(x.shape[-1]))))
    return functools.partial(compare_pair, expected=_expected(q, k, v), hints=hints)


def _cross_inputs(rng, batch, n_q, n_k, d_x, d_c, d_k, d_v):
    n = functools.partial(ref.normal, rng)
    return n(batch, n_q, d_x), n(batch, n_k, d_c), n(d_x, d_k), n(d_c, d_k), n(d_c, d_v)


def cross_cases(rng):
    inputs = functools.partial(_cross_inputs, rng)
    named = [
        ("n_q = 6，n_k = 20，d_x ≠ d_c", inputs(2, 6, 20, 10, 12, 8, 5)),
        ("x 与 context 同宽（d_x = d_c）", inputs(2, 4, 9, 8, 8, 8, 8)),
        ("批次大小为 1", inputs(1, 3, 7, 6, 4, 4, 6)),
    ]
    cases = [call_case(name, args, _cross_judge(*args)) for name, args in named]
    return cases + [twice_case(inputs(2, 5, 7, 6, 4, 4, 3), inputs(2, 5, 7, 6, 4, 4, 3), _cross_judge)]


SDPA = Checker(sdpa_cases, SDPA_FORBIDDEN)
CROSS = Checker(cross_cases, SDPA_FORBIDDEN)
