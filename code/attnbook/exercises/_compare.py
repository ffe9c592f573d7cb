"""Grading: reading the reader's return values and comparing them with the reference.

Floating results pass when ``|got - expected| <= atol + rtol * |expected|`` everywhere.
The tolerance follows the dtype of the exercise's *inputs*, never the dtype the answer
returns. For float32 inputs that is :data:`ATOL` and :data:`RTOL` (two correct float32
implementations differ by about 1e-7 here). 16-bit inputs, such as a layer's under the
``mixed_bfloat16`` policy, are compared within :data:`HALF_ATOL` and :data:`HALF_RTOL`:
bfloat16 keeps 8 significant bits, and the error of a few such steps adds up to about
1e-2. A result of lower precision than the inputs fails, and says so.

A failure names the shape or the largest error and where it is, and, when the
result matches a known mistake (a *hint variant*), what that mistake looks like.
"""

import numpy as np

from . import _messages as say
from ._cases import Fail
from .running.wire import Opaque

ATOL = 1e-5
RTOL = 1e-4
HALF_ATOL = 3e-2
HALF_RTOL = 3e-2


def to_array(value, what="返回值", whole=True):
    """``np.asarray(value)`` for a numeric or boolean tensor, else :class:`Fail`.

    whole: ``value`` is the answer's whole return value, not one item of a tuple.
    """
    if isinstance(value, Opaque) and value.dtype:
        raise Fail(say.not_numeric(what, value, value.dtype))
    if value is None or isinstance(value, (str, bytes, Opaque)):
        raise Fail(say.not_a_tensor(what, value, whole))
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001  (ragged lists, symbolic tensors, ...)
        raise Fail(say.not_a_tensor(what, value, whole)) from None
    if array.dtype.kind not in "biuf" and array.dtype.name != "bfloat16":
        raise Fail(say.not_numeric(what, value, array.dtype))
    return array


def _bits(dtype_name):
    """Bits of a floating dtype's storage (bfloat16 and float16: 16), or None."""
    return {"bfloat16": 16, "float16": 16, "float32": 32, "float64": 64}.get(str(dtype_name))


def tolerance(input_dtype="float32"):
    """``(atol, rtol)`` for an exercise whose inputs have this dtype (a name)."""
    return (HALF_ATOL, HALF_RTOL) if _bits(input_dtype) == 16 else (ATOL, RTOL)


def check_precision(got, input_dtype, label=""):
    """Fail when the array ``got`` is a float of fewer bits than the inputs' dtype."""
    bits, wanted = _bits(got.dtype.name), _bits(input_dtype)
    if bits is not None and wanted is not None and bits < wanted:
        raise Fail(say.LOWER_PRECISION.format(what=label, got=got.dtype.name, wanted=input_dtype))


def unpack(value, names):
    """Split a returned tuple such as ``(output, weights)`` into arrays, or :class:`Fail`."""
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        raise Fail(say.wrong_count(names, value))
    return tuple(to_array(v, f"{name} ", whole=False) for v, name in zip(value, names))


def matching_hint(got, expected, hints, tol=(ATOL, RTOL)):
    """The text of the first hint variant that ``got`` matches and ``expected`` does not.

    hints: ``(text, variant)`` pairs; a variant is an array, or a tuple of ints that is
    compared with the shape only.
    """
    for text, variant in hints:
        if isinstance(variant, tuple):
            if got.shape == variant and variant != expected.shape:
                return text
        elif _close(got, variant, tol) and not _close(variant, expected, tol):
            return text
    return ""


def _close(a, b, tol):
    atol, rtol = tol
    return a.shape == b.shape and bool(np.all(np.abs(a.astype(float) - b) <= atol + rtol * np.abs(b)))


def compare(got, expected, label="", hints=(), nan_hint="", input_dtype="float32"):
    """Raise :class:`Fail` unless the array ``got`` equals ``expected`` within tolerance.

    label: prefix of the message, e.g. "注意力权重的"; nan_hint: text after a NaN report;
    input_dtype: the dtype of the exercise's inputs, which sets the tolerance.
    """
    got = to_array(got, label or "返回值")
    check_precision(got, input_dtype, label)
    tol = tolerance(input_dtype)
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        hint = matching_hint(got, expected, hints, tol)
        raise Fail(say.shape_mismatch(expected.shape, got.shape, label) + hint)
    got = got.astype(float)
    for bad, name in ((np.isnan(got), "NaN"), (np.isinf(got), "inf")):
        if bad.any():
            raise Fail(say.not_finite(label, name, _index(np.argwhere(bad)[0]), nan_hint))
    error = np.abs(got - expected)
    allowed = tol[0] + tol[1] * np.abs(expected)
    if np.all(error <= allowed):
        return
    where = np.unravel_index(np.argmax(error), error.shape)
    hint = matching_hint(got, expected, hints, tol)
    raise Fail(say.VALUE_MISMATCH.format(what=label, error=error[where], tolerance=allowed[where],
                                         where=_index(where), hint=hint))


def _index(where):
    return tuple(int(i) for i in where)


def compare_pair(result, expected, hints=(), nan_hint="", input_dtype="float32"):
    """Check ``(output, weights)`` against the expected pair; hints hold pairs too.

    The weights are compared first: their errors say more about what went wrong.
    """
    output, weights = unpack(result, ("output", "weights"))
    compare(weights, expected[1], "注意力权重的", [(t, v[1]) for t, v in hints], nan_hint, input_dtype)
    compare(output, expected[0], "输出的", [(t, v[0]) for t, v in hints], nan_hint, input_dtype)


def differ_check(first, second):
    """Fail when two results for two different inputs are the same (a cached answer).

    A result that is not a tensor is left to the judges of the two inputs to report.
    """
    try:
        a, b = (to_array(x[0] if isinstance(x, (tuple, list)) and x else x) for x in (first, second))
    except Fail:
        return
    if a.shape == b.shape and np.array_equal(a, b):
        raise Fail(say.CACHED_RESULT)
