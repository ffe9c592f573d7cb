"""The list of checked exercises and :func:`check`."""

import contextlib
import numbers

import keras
import numpy as np

from .._tf import tf
from . import _ex_attention, _ex_cost, _ex_heads, _ex_layers, _ex_linear, _ex_masks
from ._compare import type_name
from ._core import CaseResult, Verdict
from ._guard import run_case

EXERCISES = {
    ex.id: ex
    for ex in (
        _ex_heads.SHAPES, _ex_attention.SDPA, _ex_heads.SPLIT, _ex_heads.MERGE,
        _ex_layers.FIXED_LAYER, _ex_layers.SHAPE_TEST, _ex_attention.CROSS,
        _ex_masks.PADDING, _ex_masks.DECODER, _ex_cost.SCORE_BYTES, _ex_linear.LINEAR,
    )
}
CONCEPTUAL = ("4.5.3", "4.5.9", "4.5.13")  # 思考题：书里讨论，没有检查器


def get_exercise(exercise_id):
    """The :class:`Exercise` with this id; ``ValueError`` for a 思考题 or an unknown id."""
    if exercise_id in CONCEPTUAL:
        raise ValueError(f"练习 {exercise_id} 是思考题，没有检查器。可检查的练习：{'、'.join(EXERCISES)}。")
    if not isinstance(exercise_id, str) or exercise_id not in EXERCISES:
        raise ValueError(f"没有编号为 {exercise_id!r} 的练习。可检查的练习：{'、'.join(EXERCISES)}。")
    return EXERCISES[exercise_id]


def kind_problem(exercise, answer):
    """Why ``answer`` cannot be the kind of thing the exercise asks for, or ''."""
    wanted = f"应提交{'类' if exercise.kind == 'class' else '函数'} {exercise.signature}"
    if exercise.kind == "class":
        if isinstance(answer, keras.layers.Layer):
            return f"{wanted}，得到的是它的一个实例：请传类本身，不要先调用它"
        if not (isinstance(answer, type) and issubclass(answer, keras.layers.Layer)):
            return f"{wanted}，得到 {_describe(answer)}"
    elif not callable(answer) or isinstance(answer, type):
        return f"{wanted}，得到 {_describe(answer)}"
    return ""


def _describe(answer):
    return f"类 {answer.__name__}" if isinstance(answer, type) else type_name(answer)


@contextlib.contextmanager
def _quiet_tf_logger():
    """Hide TensorFlow's Python warnings (e.g. about retracing the reader's tf.function)."""
    logger = tf.get_logger()
    level = logger.level
    logger.setLevel("ERROR")
    try:
        yield
    finally:
        logger.setLevel(level)


def check(exercise_id, answer, *, time_limit=20.0, seed=None):
    """Check ``answer`` against exercise ``exercise_id``; return a :class:`Verdict`.

    Every call draws fresh random inputs, so a cached or hard-coded result fails.
    ``seed`` (an int) fixes them instead, for a page that must print the same report
    on every build. Each case runs the answer in a daemon thread for at most
    ``time_limit`` seconds; a timeout, or a call of the reference implementation,
    stops the exercise. Nothing is printed.

    Raises:
        ValueError: for an unknown id, a 思考题 id, or a non-positive ``time_limit``.
    """
    exercise = get_exercise(exercise_id)
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or time_limit <= 0:
        raise ValueError(f"time_limit 必须是正数（秒），得到 {time_limit!r}。")
    cases = exercise.make_cases(np.random.default_rng(seed))
    problem = kind_problem(exercise, answer)
    if problem:
        skipped = [CaseResult(c.name, False, "未运行", skipped=True) for c in cases]
        return Verdict(exercise.id, exercise.title, skipped, problem)
    if exercise.kind == "function":
        # A tf.function runs its Python code only when it traces; check that code itself.
        answer = getattr(answer, "python_function", answer)
    forbidden = {fn.__code__: name for name, fn in exercise.forbidden}
    results = []
    with _quiet_tf_logger():
        for case in cases:
            message, passed, fatal = run_case(case, answer, forbidden, time_limit, exercise.noun)
            results.append(CaseResult(case.name, passed, message or ""))
            if fatal:
                break
    results += [CaseResult(c.name, False, "未运行", skipped=True) for c in cases[len(results):]]
    return Verdict(exercise.id, exercise.title, results)
