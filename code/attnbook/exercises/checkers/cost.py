"""Checker of ``score_table_bytes``: the bytes of one score table (batch, heads, n_q, n_k)."""

import functools

import numpy as np

from ... import cost
from ..._tf import tf
from .. import _messages as say
from .._cases import Checker, Fail
from . import call_case


def _number(value):
    """The returned count as a float; an int, NumPy integer or integral float is fine."""
    try:
        if value is None or isinstance(value, (bool, str, bytes)):
            raise TypeError
        array = np.asarray(value)
        if array.size != 1 or array.dtype.kind not in "iuf":
            raise TypeError
        return float(array.reshape(()))
    except (TypeError, ValueError):
        raise Fail(f"应返回一个整数（字节数），得到 {say.type_name(value)}") from None


def _fmt(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def _bytes_judge(n_q, n_k, batch, heads, dtype):
    itemsize = tf.as_dtype(dtype).size
    expected = cost.score_table(n_q, batch=batch, heads=heads, bytes_per_score=itemsize, n_k=n_k)["bytes"]
    entries = expected // itemsize
    hints = [
        ("（看起来单位不是字节：应返回字节数，不是 MiB）", expected / 2**20),
        ("（看起来单位不是字节：应返回字节数，不是 MB）", expected / 1e6),
        ("（看起来忘了乘每个数所占的字节数）", entries),
        ("（看起来算的是比特而不是字节）", expected * 8),
        (f"（看起来没有按 dtype 换算每个数的字节数：{tf.as_dtype(dtype).name} 每个数 {itemsize} 字节）",
         entries * 4),
        ("（看起来漏了 batch 或 heads）", expected / (batch * heads)),
    ]

    def judge(result):
        got = _number(result)
        if got == expected:
            return
        hint = next((t for t, v in hints if v != expected and np.isclose(got, v, rtol=1e-6)), "")
        raise Fail(f"数值不对：期望 {_fmt(expected)} 字节，得到 {_fmt(got)}{hint}")

    return judge


def bytes_cases(rng):
    def case(name, n_q, n_k, batch=1, heads=1, dtype=None):
        kwargs = dict(batch=batch, heads=heads) if batch * heads > 1 else {}
        if dtype is not None:
            kwargs["dtype"] = dtype
        judge = _bytes_judge(n_q, n_k, batch, heads, "float32" if dtype is None else dtype)
        return call_case(name, (n_q, n_k), judge, kwargs)

    n = functools.partial(lambda low, high: int(rng.integers(low, high)))
    return [
        case("一百万对（n = 1000）", 1000, 1000),
        case("批次大小 8 × 8 个头", n(256, 2049), n(256, 2049), batch=8, heads=8),
        case("bfloat16", n(1000, 5000), n(1000, 5000), dtype="bfloat16"),
        case("float64", n(100, 1000), n(100, 1000), batch=2, dtype="float64"),
        case("n_q ≠ n_k", n(2, 10), n(10, 100), batch=2, heads=4, dtype="float16"),
        case("dtype 为 tf.DType", n(100, 1000), n(100, 1000), heads=4, dtype=tf.float16),
    ]


SCORE_BYTES = Checker(bytes_cases, (("attnbook.cost.score_table", cost.score_table),))
