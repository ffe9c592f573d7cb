"""Checkers of ``attention_shapes`` (predict every shape), ``split_heads`` and ``merge_heads``."""

import functools

import numpy as np

from ... import attention, minimal
from ..._tf import tf
from .. import _messages as say
from ..buggy import BuggyMultiHeadAttention
from .._cases import Checker, Fail
from .._compare import compare
from . import numpy_ref as ref
from . import call_case, twice_case

MHA = attention.MiniMultiHeadAttention
HEADS_FORBIDDEN = (
    ("MiniMultiHeadAttention._split_heads", MHA._split_heads),
    ("MiniMultiHeadAttention._merge_heads", MHA._merge_heads),
    ("attnbook.MiniMultiHeadAttention", MHA.call),
    ("attnbook.minimal.MiniMultiHeadAttention", minimal.MiniMultiHeadAttention.call),
    ("attnbook.minimal.MiniMultiHeadAttention._split_heads", minimal.MiniMultiHeadAttention._split_heads),
    ("attnbook.exercises.buggy.BuggyMultiHeadAttention.split_heads", BuggyMultiHeadAttention.split_heads),
)
NO_TRANSPOSE = "（看起来只 reshape 没有 transpose）"


# --- predict the shapes ------------------------------------------------------------

SHAPE_KEYS = ("query", "key", "value", "scores", "output")


def reference_shapes(batch, n_q, n_k, d_model, num_heads):
    """The shapes of each step, read off a real MiniMultiHeadAttention run (not typed in)."""
    layer = MHA(d_model, num_heads)
    x, context = tf.zeros((batch, n_q, d_model)), tf.zeros((batch, n_k, d_model))
    output, scores = layer(x, context, return_attention_scores=True)
    query = layer._split_heads(layer.wq(x), batch)
    key = layer._split_heads(layer.wk(context), batch)
    value = layer._split_heads(layer.wv(context), batch)
    tensors = dict(query=query, key=key, value=value, scores=scores, output=output)
    return {name: tuple(t.shape) for name, t in tensors.items()}


def _shape_hints(name, expected, batch, n_q, n_k, d_model, num_heads):
    """``(text, wrong shape)`` pairs for one key."""
    swapped = list(expected)
    for axis in {"output": (1,), "scores": (2, 3)}.get(name, (2,)):
        swapped[axis] = {n_q: n_k, n_k: n_q}[expected[axis]]
    hints = [("（看起来把 n_q 和 n_k 弄反了）", tuple(swapped))]
    if name in ("query", "key", "value"):
        hints += [("（看起来把 d_model 当成了每头维度）", expected[:3] + (d_model,)),
                  (NO_TRANSPOSE, (batch, expected[2], num_heads, expected[3]))]
    if name == "scores":
        hints.append(("（打分表每个头一份：(batch, heads, n_q, n_k)）", (batch, n_q, n_k)))
    return hints


def _as_shape(value, name):
    try:
        return tuple(int(d) for d in value)
    except (TypeError, ValueError):
        raise Fail(f"条目 \"{name}\" 的值应是由整数组成的元组，得到 {say.type_name(value)}") from None


def _judge_shapes(result, sizes):
    if not isinstance(result, dict):
        raise Fail(f"应返回一个 dict（条目为 {', '.join(SHAPE_KEYS)}），得到 {say.type_name(result)}")
    missing = [name for name in SHAPE_KEYS if name not in result]
    if missing:
        raise Fail(f"返回的 dict 缺少条目：{', '.join(missing)}")
    expected, wrong = reference_shapes(*sizes), []
    for name in SHAPE_KEYS:
        got = _as_shape(result[name], name)
        if got != expected[name]:
            hint = next((t for t, s in _shape_hints(name, expected[name], *sizes) if s == got), "")
            wrong.append(say.shape_mismatch(expected[name], got, f"条目 \"{name}\" 的") + hint)
    if len(wrong) > 1:
        raise Fail(f"{wrong[0]}；另有 {len(wrong) - 1} 个条目也不对")
    if wrong:
        raise Fail(wrong[0])


def shapes_cases(rng):
    def sizes(batch, heads, depth, n_q, n_k=None):
        n_q = int(n_q)
        return (batch, n_q, n_q if n_k is None else int(n_k), int(heads * depth), int(heads))

    draw = functools.partial(rng.integers, 3, 12)
    named = [
        ("自注意力（n_q = n_k）", sizes(2, 4, rng.integers(2, 9), draw())),
        ("交叉注意力（n_q ≠ n_k）", sizes(2, 8, 4, draw(), draw() + 12)),
        ("批次大小为 1", sizes(1, 2, rng.integers(2, 9), draw(), draw() + 12)),
        ("单头（num_heads = 1）", sizes(3, 1, 16, draw(), draw() + 12)),
        ("每头维度为 1（num_heads = d_model）", sizes(2, 6, 1, draw(), draw() + 12)),
    ]
    return [call_case(name, s, functools.partial(_judge_shapes, sizes=s)) for name, s in named]


# --- split heads / merge heads -------------------------------------------------------


def _split_judge(x, num_heads):
    batch, seq, d_model = x.shape
    expected = MHA(d_model, num_heads)._split_heads(x, batch).numpy()
    a = np.asarray(x)
    hints = [(NO_TRANSPOSE, a.reshape(batch, num_heads, seq, d_model // num_heads)),
             (NO_TRANSPOSE, a.reshape(batch, seq, num_heads, d_model // num_heads))]
    return functools.partial(compare, expected=expected, hints=hints)


def split_cases(rng):
    n = functools.partial(ref.normal, rng)
    named = [("基本", n(2, 5, 12), 3), ("批次大小为 1", n(1, 4, 8), 2),
             ("单头（num_heads = 1）", n(2, 3, 6), 1), ("每头维度为 1（num_heads = d_model）", n(2, 4, 6), 6)]
    cases = [call_case(name, (x, h), _split_judge(x, h)) for name, x, h in named]
    return cases + [twice_case((n(2, 5, 8), 4), (n(2, 5, 8), 4), _split_judge)]


def _merge_judge(x):
    batch, heads, seq, depth = x.shape
    expected = MHA(heads * depth, heads)._merge_heads(x, batch).numpy()
    hints = [(NO_TRANSPOSE, np.asarray(x).reshape(batch, seq, heads * depth))]
    return functools.partial(compare, expected=expected, hints=hints)


def _round_trip_case(rng):
    """Split with the reference, merge with the answer: x must come back unchanged."""
    x = ref.normal(rng, 2, 5, 12)
    heads = MHA(12, 3)._split_heads(x, 2)
    hints = [(NO_TRANSPOSE, np.asarray(heads).reshape(2, 5, 12))]
    judge = functools.partial(compare, expected=x.numpy(), hints=hints)
    return call_case(f"拆分后再合并，回到原样 {say.fmt_shape(x.shape)}", (heads,), judge)


def merge_cases(rng):
    n = functools.partial(ref.normal, rng)
    named = [("基本", n(2, 3, 5, 4)), ("批次大小为 1", n(1, 2, 4, 3)), ("单头", n(2, 1, 5, 6))]
    cases = [call_case(name, (x,), _merge_judge(x)) for name, x in named]
    return cases + [_round_trip_case(rng), twice_case((n(2, 4, 5, 2),), (n(2, 4, 5, 2),), _merge_judge)]


SHAPES = Checker(shapes_cases, HEADS_FORBIDDEN + (
    ("attnbook.scaled_dot_product_attention", attention.scaled_dot_product_attention),))
SPLIT = Checker(split_cases, HEADS_FORBIDDEN)
MERGE = Checker(merge_cases, HEADS_FORBIDDEN)
