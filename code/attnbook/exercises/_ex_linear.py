"""Checker of ``linear_attention``: non-causal, with φ(x) = elu(x) + 1."""

import functools

from .. import efficient
from .._tf import tf
from . import _numpy_ref as ref
from ._compare import compare, differ_check
from ._core import Case, Checker, Fail, call_case, twice_case
from ._messages import error_text, reader_location

# The traced case: large enough that an n_q × n_k table stands out, small enough to trace fast.
TRACE_N_Q, TRACE_N_K, TRACE_D, TRACE_D_V = 256, 192, 8, 6


def _linear_judge(q, k, v):
    phi_q, phi_k = (tf.nn.elu(t).numpy().astype(float) + 1.0 for t in (q, k))
    hints = [
        ("（看起来算的是 softmax 注意力，不是线性注意力）", ref.attention(q, k, v)[0]),
        ("（看起来没有除以归一化项 φ(Q)·Σφ(K)）", phi_q @ (phi_k.swapaxes(-1, -2) @ v.numpy())),
    ]
    expected = efficient.linear_attention(q, k, v).numpy()
    return functools.partial(compare, expected=expected, hints=hints)


def _table_sized_tensor(graph, n_q, n_k):
    """``(op type, shape)`` of the first tensor in ``graph`` (or a nested function graph)
    whose last two static dimensions are both sequence lengths (n_q or n_k), else None."""
    graphs, seen = [graph], set()
    while graphs:
        g = graphs.pop()
        for op in g.get_operations():
            for out in op.outputs:
                dims = out.shape.as_list() if out.shape.rank is not None else []
                if len(dims) >= 2 and dims[-2] in (n_q, n_k) and dims[-1] in (n_q, n_k):
                    return op.type, tuple(dims)
            for attr in ("f", "body", "cond", "then_branch", "else_branch"):
                if attr in op.node_def.attr and op.get_attr(attr).name not in seen:
                    seen.add(op.get_attr(attr).name)
                    graphs.append(g._get_function(op.get_attr(attr).name).graph)  # noqa: SLF001
    return None


def _trace(answer):
    specs = [tf.TensorSpec((1, n, d)) for n, d in
             ((TRACE_N_Q, TRACE_D), (TRACE_N_K, TRACE_D), (TRACE_N_K, TRACE_D_V))]
    try:
        graph = tf.function(answer).get_concrete_function(*specs).graph
    except Exception as err:  # noqa: BLE001  (numpy calls on symbolic tensors and the like)
        raise Fail(f"无法用 tf.function 追踪你的函数（{type(err).__name__}: {error_text(err, 120)}）"
                   f"{reader_location(err)}：请只用 TensorFlow 算子来写（不要转成 numpy）") from None
    return _table_sized_tensor(graph, TRACE_N_Q, TRACE_N_K)


def _no_table(found):
    if found is not None:
        op_type, shape = found
        raise Fail(f"你的实现构造了 n×n 的张量（算子 {op_type} 输出 {shape}）：线性注意力不应该先算打分表")


def linear_cases(rng):
    n = functools.partial(ref.normal, rng)
    named = [
        ("基本", (n(2, 10, 8), n(2, 10, 8), n(2, 10, 4))),
        ("batch 为 1", (n(1, 7, 4), n(1, 7, 4), n(1, 7, 4))),
        ("n_q ≠ n_k，d_v ≠ d_k", (n(2, 6, 8), n(2, 20, 8), n(2, 20, 5))),
        ("带头轴 (batch, heads, n, d)", (n(2, 3, 9, 4), n(2, 3, 9, 4), n(2, 3, 9, 6))),
    ]
    cases = [call_case(name, args, _linear_judge(*args)) for name, args in named]
    a, b = (n(2, 8, 4), n(2, 8, 4), n(2, 8, 4)), (n(2, 8, 4), n(2, 8, 4), n(2, 8, 4))
    cases.append(twice_case("两组不同的输入", a, b, _linear_judge(*a), _linear_judge(*b), differ_check))
    cases.append(Case(f"不构造 n×n 的表（n_q = {TRACE_N_Q}，n_k = {TRACE_N_K}）", _trace, _no_table))
    return cases


CHECKERS = {
    "linear_attention": Checker(linear_cases, (
        ("attnbook.linear_attention", efficient.linear_attention),
        ("attnbook.efficient._causal_linear", efficient._causal_linear))),
}
