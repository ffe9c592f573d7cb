"""Checkers of ``FixedMultiHeadAttention`` (fix the layer that scales by √d_model) and
``shape_test`` (a shape test that catches wrong layers)."""

import functools

import numpy as np

from .. import attention
from . import _numpy_ref as ref
from ._compare import compare_pair
from ._core import Case, Checker, Fail
from ._messages import describe_error, error_text, reader_location
from ._mutants import MUTANTS

MHA = attention.MiniMultiHeadAttention
DENSE_NAMES = ("wq", "wk", "wv", "wo")


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


def _copy_weights(layer, weights):
    """Load the reference layer's Dense weights into the answer's wq, wk, wv, wo."""
    for name, values in weights.items():
        dense = getattr(layer, name, None)
        if dense is None or not hasattr(dense, "set_weights"):
            raise Fail(f"你的层没有 Dense 子层 {name}（需要 wq、wk、wv、wo 四个 keras.layers.Dense）")
        mine = [tuple(w.shape) for w in dense.get_weights()]
        theirs = [tuple(w.shape) for w in values]
        if mine != theirs:
            raise Fail(f"你的层的 {name} 权重形状是 {mine}，应与参考层的 {theirs} 相同")
        dense.set_weights(values)


def _layer_case(rng, name, d_model, heads, batch, n_q, n_k=None, d_c=None):
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

    def run(layer_cls):
        answer = layer_cls(d_model, heads)
        answer(*inputs)  # builds its Dense layers
        _copy_weights(answer, weights)
        return answer(*inputs, return_attention_scores=True)

    return Case(name, run, functools.partial(compare_pair, expected=expected, hints=hints))


def fixed_layer_cases(rng):
    case = functools.partial(_layer_case, rng)
    return [
        case("单头（num_heads = 1）", d_model=8, heads=1, batch=2, n_q=5),
        case("8 个头", d_model=32, heads=8, batch=2, n_q=6),
        case("batch 为 1，3 个头", d_model=12, heads=3, batch=1, n_q=4),
        case("交叉注意力（n_q ≠ n_k）", d_model=16, heads=4, batch=2, n_q=5, n_k=9, d_c=12),
    ]


# --- the shape test ------------------------------------------------------------------


def _outcome(shape_test, layer_cls):
    """Run the reader's test on one layer class; return the exception it raised, or None."""
    try:
        shape_test(layer_cls)
    except NotImplementedError:
        raise  # an unfinished test catches nothing: reported as such
    except Exception as err:  # noqa: BLE001  (raising is what a test does)
        return err
    return None


def _must_pass(err):
    if err is None:
        return None
    if isinstance(err, AssertionError):
        raise Fail(f"你的测试把正确的 MiniMultiHeadAttention 判为错误：AssertionError: "
                   f"{error_text(err)}{reader_location(err)}")
    raise Fail(describe_error(err, "测试") + "（在正确的 MiniMultiHeadAttention 上）")


def _must_catch(err, name, explanation):
    if err is None:
        raise Fail(f"变体“{name}”没有被你的测试发现（{explanation}）")
    if not isinstance(err, AssertionError):
        return (f"发现了，但抛出的是 {type(err).__name__} 而不是 AssertionError"
                f"（{error_text(err, 80)}）：形状不对时最好用 assert 报告")
    return None


def shape_test_cases(rng):
    cases = [Case("正确的层", lambda test: _outcome(test, MHA), _must_pass)]
    for name, cls, explanation in MUTANTS:
        cases.append(Case(name, functools.partial(lambda test, c: _outcome(test, c), c=cls),
                          functools.partial(_must_catch, name=name, explanation=explanation)))
    return cases


CHECKERS = {
    "FixedMultiHeadAttention": Checker(fixed_layer_cases, (("attnbook.MiniMultiHeadAttention", MHA.call),),
                                       noun="层"),
    "shape_test": Checker(shape_test_cases, noun="测试"),
}
