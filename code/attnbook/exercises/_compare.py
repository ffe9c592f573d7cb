"""Reading the reader's return values and comparing them with the reference.

Floating results pass when ``|got - expected| <= ATOL + RTOL * |expected|`` everywhere
(float32 inputs; two correct float32 implementations differ by about 1e-7 here).
A failure names the shape or the largest error and where it is, and, when the
result matches a known mistake (a *hint variant*), what that mistake looks like.
"""

import numpy as np

from ._core import Fail

ATOL = 1e-5
RTOL = 1e-4


def type_name(value):
    """A short description of a value's kind for messages: 'None', 'str', 'EagerTensor（形状 (2, 3)）'."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"字符串 {value[:30]!r}"
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, type):
        return f"{type(value).__name__}（形状 {fmt_shape(shape)}）"
    return type(value).__name__


def fmt_shape(shape):
    dims = tuple(None if d is None else int(d) for d in shape)
    return str(dims)


def to_array(value, what="返回值"):
    """``np.asarray(value)`` for a numeric or boolean tensor, else :class:`Fail`."""
    if value is None:
        raise Fail(f"{what}应是张量，得到 None（是不是忘了 return？）")
    if isinstance(value, (str, bytes)):
        raise Fail(f"{what}应是张量（tf.Tensor 或 numpy 数组），得到字符串 {value[:30]!r}")
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001  (ragged lists, symbolic tensors, ...)
        raise Fail(f"{what}应是张量（tf.Tensor 或 numpy 数组），得到 {type_name(value)}") from None
    if array.dtype.kind not in "biuf":
        raise Fail(f"{what}应是数值张量，得到 {type(value).__name__}（dtype {array.dtype}）")
    return array


def unpack(value, names):
    """Split a returned tuple such as ``(output, weights)`` into arrays, or :class:`Fail`."""
    expected = f"{len(names)} 个值（{', '.join(names)}）"
    if value is None:
        raise Fail(f"应返回 {expected}，得到 None（是不是忘了 return？）")
    if not isinstance(value, (tuple, list)):
        raise Fail(f"应返回 {expected}，得到一个{'' if isinstance(value, str) else ' '}{type_name(value)}")
    if len(value) != len(names):
        raise Fail(f"应返回 {expected}，得到 {len(value)} 个值")
    return tuple(to_array(v, f"{name} ") for v, name in zip(value, names))


def matching_hint(got, expected, hints):
    """The text of the first hint variant that ``got`` matches and ``expected`` does not.

    hints: ``(text, variant)`` pairs; a variant is an array, or a tuple of ints that is
    compared with the shape only.
    """
    for text, variant in hints:
        if isinstance(variant, tuple):
            if got.shape == variant and variant != expected.shape:
                return text
        elif _close(got, variant) and not _close(variant, expected):
            return text
    return ""


def _close(a, b):
    return a.shape == b.shape and bool(np.all(np.abs(a.astype(float) - b) <= ATOL + RTOL * np.abs(b)))


def compare(got, expected, label="", hints=(), nan_hint=""):
    """Raise :class:`Fail` unless the array ``got`` equals ``expected`` within tolerance.

    label: prefix of the message, e.g. "注意力权重的"; nan_hint: text after a NaN report.
    """
    got = to_array(got, label or "返回值")
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        hint = matching_hint(got, expected, hints)
        raise Fail(f"{label}形状不对：期望 {fmt_shape(expected.shape)}，得到 {fmt_shape(got.shape)}{hint}")
    got = got.astype(float)
    for bad, name in ((np.isnan(got), "NaN"), (np.isinf(got), "inf")):
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise Fail(f"{label[:-1] + '里' if label else ''}出现了 {name}（位置 {where}）{nan_hint}")
    error = np.abs(got - expected)
    tolerance = ATOL + RTOL * np.abs(expected)
    if np.all(error <= tolerance):
        return
    where = np.unravel_index(np.argmax(error), error.shape)
    hint = matching_hint(got, expected, hints)
    raise Fail(
        f"{label}数值不对：最大误差 {error[where]:.1e}（容差 {tolerance[where]:.0e}），"
        f"出现在位置 {tuple(int(i) for i in where)}{hint}"
    )


def compare_pair(result, expected, hints=(), nan_hint=""):
    """Check ``(output, weights)`` against the expected pair; hints hold pairs too.

    The weights are compared first: their errors say more about what went wrong.
    """
    output, weights = unpack(result, ("output", "weights"))
    compare(weights, expected[1], "注意力权重的", [(t, v[1]) for t, v in hints], nan_hint)
    compare(output, expected[0], "输出的", [(t, v[0]) for t, v in hints], nan_hint)


def differ_check(first, second):
    """Fail when two results for two different inputs are the same (a cached answer).

    A result that is not a tensor is left to the judges of the two inputs to report.
    """
    try:
        a, b = (to_array(x[0] if isinstance(x, (tuple, list)) and x else x) for x in (first, second))
    except Fail:
        return
    if a.shape == b.shape and np.array_equal(a, b):
        raise Fail("两组不同的输入得到了完全相同的结果：是不是返回了固定的（缓存的）结果？")
