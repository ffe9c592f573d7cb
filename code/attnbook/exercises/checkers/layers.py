"""Checkers of ``FixedMultiHeadAttention`` (fix the layer that scales by √d_model) and
``shape_test`` (a shape test that catches wrong layers)."""

import functools

import numpy as np

from ... import attention
from .._cases import Case, Checker, Fail
from .._compare import compare_pair
from ..running import tasks
from . import numpy_ref as ref
from .correct_layers import CORRECT
from .mutants import MUTANTS

MHA = attention.MiniMultiHeadAttention
DENSE_NAMES = tasks.DENSE_NAMES


# --- the fixed layer -----------------------------------------------------------------


def _numpy_mha(x, context, weights, heads, scale):
    """NumPy multi-head attention with the given Dense weights and score scale."""
    def dense(name, inputs):
        kernel, bias = weights[name]
        return inputs @ kernel + bias

    def split(t):
        return t.reshape(t.shape[0], t.shape[1], heads, -1).transpose(0, 2, 1, 3)

    x, context = np.asarray(x, float), np.asarray(context, float)
    q, k, v = split(dense("wq", x)), split(dense("wk", context)), split(dense("wv", context))
    out, w = ref.attention(q, k, v, scale=scale)
    out = out.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], -1)
    return dense("wo", out), w


def _layer_case(rng, compute_dtype, name, d_model, heads, batch, n_q, n_k=None, d_c=None):
    x = ref.normal(rng, batch, n_q, d_model)
    context = None if n_k is None else ref.normal(rng, batch, n_k, d_c or d_model)
    inputs = (x,) if context is None else (x, context)
    layer = MHA(d_model, heads)
    layer(*inputs)  # build, then draw every weight from rng (biases too: not zero)
    for dense in (getattr(layer, n) for n in DENSE_NAMES):
        kernel, bias = dense.get_weights()
        kernel = rng.standard_normal(kernel.shape) / np.sqrt(kernel.shape[0])
        dense.set_weights([kernel.astype("float32"), (0.1 * rng.standard_normal(bias.shape)).astype("float32")])
    weights = {n: getattr(layer, n).get_weights() for n in DENSE_NAMES}
    expected = tuple(t.numpy() for t in layer(*inputs, return_attention_scores=True))
    source = x if context is None else context
    hints = [
        ("（注意力权重与按 √d_model 缩放的结果一致：那一行还没改对）",
         _numpy_mha(x, source, weights, heads, np.sqrt(d_model))),
        ("（看起来去掉了缩放：应除以 √每头维度）", _numpy_mha(x, source, weights, heads, 1.0)),
    ]

    judge = functools.partial(compare_pair, expected=expected, hints=hints, input_dtype=compute_dtype)
    return Case(name, (tasks.layer, (d_model, heads, inputs, weights)), judge)


def fixed_layer_cases(rng, compute_dtype="float32"):
    """The layer's inputs are of the reader's compute dtype (bfloat16 under mixed_bfloat16)."""
    case = functools.partial(_layer_case, rng, compute_dtype)
    return [
        case("单头（num_heads = 1）", d_model=8, heads=1, batch=2, n_q=5),
        case("8 个头", d_model=32, heads=8, batch=2, n_q=6),
        case("批次大小为 1，3 个头", d_model=12, heads=3, batch=1, n_q=4),
        case("交叉注意力（n_q ≠ n_k）", d_model=16, heads=4, batch=2, n_q=5, n_k=9, d_c=12),
    ]


# --- the shape test ------------------------------------------------------------------


def _must_pass(outcome, name):
    if outcome is None:
        return None
    if outcome["assertion"]:
        raise Fail(f"你的测试把正确的{name}判为错误：AssertionError: {outcome['text']}{outcome['where']}")
    raise Fail(f"你的测试抛出了 {outcome['raised']}: {outcome['text']}{outcome['where']}（在正确的{name}上）")


def _must_catch(outcome, name, explanation):
    if outcome is None:
        raise Fail(f"变体“{name}”没有被你的测试发现（{explanation}）")
    if not outcome["assertion"]:
        return (f"发现了，但抛出的是 {outcome['raised']} 而不是 AssertionError"
                f"（{outcome['short']}）：形状不对时最好抛出 AssertionError")
    return None


def shape_test_cases(rng):
    """Correct layers (the package's and others the reader has not seen) must pass the
    reader's test; each broken one must fail it."""
    return ([Case(name, (tasks.shape_test, (cls,)), functools.partial(_must_pass, name=shown))
             for name, cls, shown in CORRECT]
            + [Case(name, (tasks.shape_test, (cls,)), functools.partial(_must_catch, name=name, explanation=why))
               for name, cls, why in MUTANTS])


# The reference layer's steps and the attention they use: a fix that hands them the work fixes nothing.
FIXED_FORBIDDEN = (
    ("attnbook.MiniMultiHeadAttention", MHA.call),
    *((f"attnbook.MiniMultiHeadAttention.{step.__name__}", step)
      for step in (MHA._split_heads, MHA._merge_heads, MHA._compute_attention, MHA._project_output)),
    ("attnbook.scaled_dot_product_attention", attention.scaled_dot_product_attention),
    ("attnbook.attention._attend", attention._attend),
    ("attnbook.masked_softmax", attention.masked_softmax),
)
FIXED_LAYER = Checker(fixed_layer_cases, FIXED_FORBIDDEN, noun="层", uses_policy=True)
SHAPE_TEST = Checker(shape_test_cases, noun="测试")
