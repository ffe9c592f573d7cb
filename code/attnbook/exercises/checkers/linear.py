"""Checker of ``linear_attention``: non-causal, with φ(x) = elu(x) + 1."""

import functools

from ... import efficient
from ..._tf import tf
from .._cases import Case, Checker, Fail
from .._compare import compare
from ..running import tasks
from . import numpy_ref as ref
from . import call_case, twice_case

# The cost case: the answer traced and run eagerly at two sizes, n doubling. Large enough
# that an n_q × n_k table stands out from the n × d tensors, small enough to run fast.
SIZES, TRACE_D, TRACE_D_V = ((256, 192), (512, 384)), 8, 6
GROWTH_LIMIT = 3.0  # doubling n: about 2× for linear work, 4× for a table


def _linear_judge(q, k, v):
    phi_q, phi_k = (tf.nn.elu(t).numpy().astype(float) + 1.0 for t in (q, k))
    hints = [
        ("（看起来算的是 softmax 注意力，不是线性注意力）", ref.attention(q, k, v)[0]),
        ("（看起来没有除以归一化项 φ(Q)·Σφ(K)）", phi_q @ (phi_k.swapaxes(-1, -2) @ v.numpy())),
    ]
    expected = efficient.linear_attention(q, k, v).numpy()
    return functools.partial(compare, expected=expected, hints=hints)


def _no_table(sizes):
    """Fail when, traced or eager, the largest intermediate tensor grows like n_q × n_k.

    sizes: what :func:`~..running.tasks.tensor_sizes` measured at ``SIZES`` (n doubles). A
    table of any rank, ``(..., n_q, 1, n_k)`` too, has n_q·n_k elements and grows 4×.
    """
    small, large = sizes
    for mode, label in (("graph", "用 tf.function 追踪时"), ("eager", "直接（eager）运行时")):
        (e1, _, _), (e2, op_type, shape) = small[mode], large[mode]
        table = large["n_q"] * large["n_k"]
        if e2 >= table / 4 or (e1 and e2 / e1 > GROWTH_LIMIT):
            raise Fail(f"{label}你的实现构造了随 n_q × n_k 增长的张量（算子 {op_type} 输出 {tuple(shape)}；"
                       f"n_q、n_k 加倍，最大的中间张量从 {e1} 个元素变成 {e2} 个）：线性注意力不应该先算打分表")


def linear_cases(rng):
    n = functools.partial(ref.normal, rng)
    named = [
        ("基本", (n(2, 10, 8), n(2, 10, 8), n(2, 10, 4))),
        ("批次大小为 1", (n(1, 7, 4), n(1, 7, 4), n(1, 7, 4))),
        ("n_q ≠ n_k，d_v ≠ d_k", (n(2, 6, 8), n(2, 20, 8), n(2, 20, 5))),
        ("带头轴 (batch, heads, n, d)", (n(2, 3, 9, 4), n(2, 3, 9, 4), n(2, 3, 9, 6))),
    ]
    cases = [call_case(name, args, _linear_judge(*args)) for name, args in named]
    a, b = (n(2, 8, 4), n(2, 8, 4), n(2, 8, 4)), (n(2, 8, 4), n(2, 8, 4), n(2, 8, 4))
    cases.append(twice_case(a, b, _linear_judge))
    (n_q, n_k), (n_q2, n_k2) = SIZES
    cases.append(Case(f"不构造 n×n 的表（n_q × n_k 从 {n_q}×{n_k} 到 {n_q2}×{n_k2}，追踪与 eager 两种方式）",
                      (tasks.tensor_sizes, (SIZES, TRACE_D, TRACE_D_V)), _no_table))
    return cases


LINEAR = Checker(linear_cases, (
    ("attnbook.linear_attention", efficient.linear_attention),
    ("attnbook.efficient._causal_linear", efficient._causal_linear)))
