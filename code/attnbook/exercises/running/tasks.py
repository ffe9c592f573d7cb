"""What a case asks the child process to do with the answer: the only code that runs it.

Each task is ``task(answer, *args)`` and returns what the parent will judge; the
child turns that into plain data (:func:`~.wire.encode`). The inputs come from
the parent; no expected value is ever passed to a task.
"""

import keras
import numpy as np

from ..._tf import tf
from .. import _messages as say
from .._cases import Fail

DENSE_NAMES = ("wq", "wk", "wv", "wo")


def kind_problem(kind, signature, answer):
    """Why ``answer`` cannot be the ``kind`` ("function" or "class") the exercise asks for
    (``signature``, as the catalog writes it), or ''."""
    if kind == "class":
        if isinstance(answer, keras.layers.Layer):
            return say.layer_instance(signature)
        if not (isinstance(answer, type) and issubclass(answer, keras.layers.Layer)):
            return say.wrong_kind(kind, signature, answer)
    elif not callable(answer) or isinstance(answer, type):
        return say.wrong_kind(kind, signature, answer)
    return ""


def call(answer, args, kwargs):
    """``answer(*args, **kwargs)``."""
    return answer(*args, **kwargs)


def twice(answer, args_a, args_b):
    """The answer on two inputs of the same shape (a cached result gives itself away)."""
    return answer(*args_a), answer(*args_b)


def layer(answer, d_model, heads, inputs, weights):
    """Build ``answer(d_model, heads)``, load the reference's Dense weights, call it.

    weights: dict Dense name -> ``[kernel, bias]``. Returns ``(output, weights)``.
    """
    built = answer(d_model, heads)
    built(*inputs)  # builds its Dense layers
    for name, values in weights.items():
        dense = getattr(built, name, None)
        if dense is None or not hasattr(dense, "set_weights"):
            raise Fail(f"你的层没有 Dense 子层 {name}（需要 wq、wk、wv、wo 四个 keras.layers.Dense）")
        mine = [tuple(w.shape) for w in dense.get_weights()]
        theirs = [tuple(w.shape) for w in values]
        if mine != theirs:
            raise Fail(f"你的层的 {name} 权重形状是 {mine}，应与参考层的 {theirs} 相同")
        dense.set_weights(values)
    return built(*inputs, return_attention_scores=True)


def shape_test(answer, layer_cls):
    """Run the reader's test on one layer class: None, or what it raised (as data)."""
    try:
        answer(layer_cls)
    except NotImplementedError:
        raise  # an unfinished test catches nothing: reported as such
    except Exception as err:  # noqa: BLE001  (raising is what a test does)
        return {"raised": type(err).__name__, "assertion": isinstance(err, AssertionError),
                "text": say.error_text(err), "where": say.reader_location(err),
                "short": say.error_text(err, 80)}
    return None


# --- how big the intermediate tensors of linear attention get ------------------------


def tensor_sizes(answer, sizes, d, d_v):
    """The largest intermediate tensor of the answer, traced and eager, at each size.

    sizes: ``(n_q, n_k)`` pairs. Returns a list of dicts with ``n_q``, ``n_k`` and, for
    ``graph`` and ``eager``, ``[elements, op type, shape]`` of the largest tensor that
    any op produced (every rank counts: ``(..., n_q, 1, n_k)`` is as big as the table).
    """
    out = []
    for n_q, n_k in sizes:
        specs = [tf.TensorSpec((1, n, width)) for n, width in ((n_q, d), (n_k, d), (n_k, d_v))]
        try:
            graph = tf.function(answer).get_concrete_function(*specs).graph
        except Exception as err:  # noqa: BLE001  (numpy calls on symbolic tensors and the like)
            raise Fail(f"无法用 tf.function 追踪你的函数（{type(err).__name__}: {say.error_text(err, 120)}）"
                       f"{say.reader_location(err)}：请只用 TensorFlow 算子来写（不要转成 numpy）") from None
        rng = np.random.default_rng(0)
        inputs = [tf.constant(rng.standard_normal(s.shape), tf.float32) for s in specs]
        out.append({"n_q": n_q, "n_k": n_k, "graph": _largest_in_graph(graph), "eager": _largest_eager(answer, inputs)})
    return out


def _largest_in_graph(graph):
    """``[elements, op type, shape]`` of the largest statically shaped tensor in ``graph``
    or any function graph nested in it (loop bodies, branches, called functions)."""
    best, graphs, seen = [0, "", []], [graph], set()
    inputs = {id(t) for t in graph.inputs}
    while graphs:
        g = graphs.pop()
        for op in g.get_operations():
            if op.type in ("Placeholder", "Const"):
                continue
            for tensor in op.outputs:
                best = _bigger(best, tensor.shape, op.type, id(tensor) in inputs)
            for attr in ("f", "body", "cond", "then_branch", "else_branch"):
                if attr in op.node_def.attr and op.get_attr(attr).name not in seen:
                    seen.add(op.get_attr(attr).name)
                    graphs.append(g._get_function(op.get_attr(attr).name).graph)  # noqa: SLF001
    return best


def _bigger(best, shape, op_type, skip=False):
    if skip or shape.rank is None or not shape.is_fully_defined():
        return best
    dims = shape.as_list()
    elements = int(np.prod(dims)) if dims else 1
    return [elements, op_type, dims] if elements > best[0] else best


def _largest_eager(answer, inputs):
    """Run the answer eagerly and return the largest tensor any eager op produced."""
    from tensorflow.python.framework import op_callbacks  # the hook tf.debugging uses

    best = [[0, "", []]]

    def record(op_type, inputs_, attrs, outputs, op_name=None, graph=None):
        if graph is None and outputs:
            for tensor in outputs:
                best[0] = _bigger(best[0], tensor.shape, op_type)

    op_callbacks.add_op_callback(record)
    try:
        answer(*inputs)
    finally:
        op_callbacks.remove_op_callback(record)
    return best[0]
