"""Check an answer: :func:`check` and :func:`check_by_name`."""

import contextlib
import numbers

import keras
import numpy as np

from .._tf import tf
from . import _messages as say
from ._core import CaseResult, Verdict
from ._guard import Guard
from ._registry import CHECKERS
from .catalog import exercise_named, get_exercise


def check(exercise_id, answer, *, time_limit=20.0, seed=None):
    """检查 ``answer`` 是否答对了练习 ``exercise_id``，返回 :class:`Verdict`。

    每次调用都重新随机生成输入，所以缓存的或写死的结果过不了检查。每个用例在
    一个后台线程里运行答案，最多 ``time_limit`` 秒；超时或调用了参考实现会让检查
    停下。答案还是骨架（抛出 ``NotImplementedError``）时，判定为“未完成”。读者
    设置的 Keras dtype 策略（比如 ``mixed_bfloat16``）对答案照样生效，参考结果
    则总按 float32 计算。本函数不打印任何东西。

    Args:
        exercise_id: 练习编号，如 ``"4.5.2"``。
        answer: 你的函数，或 ``keras.layers.Layer`` 的子类（类本身，不是实例）。
        time_limit: 每个用例的时限（秒），正数。
        seed: 整数时固定随机输入，让页面每次构建打印同样的报告。

    Returns:
        Verdict: 中文报告；``verdict.state`` 是“通过”“未通过”或“未完成”。

    Raises:
        ValueError: 编号未知、是思考题，或 ``time_limit`` 不是正数。
    """
    exercise = get_exercise(exercise_id)
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or time_limit <= 0:
        raise ValueError(say.bad_time_limit(time_limit))
    checker = CHECKERS[exercise.id]
    guard = Guard({fn.__code__: name for name, fn in checker.forbidden}, time_limit,
                  keras.config.dtype_policy(), checker.noun)
    problem = _kind_problem(exercise, answer)
    with _float32_policy():
        cases = checker.make_cases(np.random.default_rng(seed))
        if problem:
            return Verdict(exercise.id, exercise.title, _not_run(cases), problem)
        if exercise.kind == "function":
            # A tf.function runs its Python code only when it traces; check that code itself.
            answer = getattr(answer, "python_function", answer)
        return Verdict(exercise.id, exercise.title, _run(cases, answer, guard))


def check_by_name(answer, **kwargs):
    """按 ``answer`` 的名字找到要求它的练习，再 :func:`check`。

    书里的参考解答这样检查：``check_by_name(solutions.split_heads)`` 找到要求
    ``split_heads`` 的那道练习（拆分多头）。你的函数与练习要求的名字相同时，
    也可以这样用。

    Args:
        answer: 名字（``__name__``）与练习要求相同的函数或类。
        **kwargs: 传给 :func:`check` 的 ``time_limit``、``seed``。

    Returns:
        Verdict: 同 :func:`check`。

    Raises:
        ValueError: 没有哪道练习要求这个名字。
    """
    exercise = exercise_named(getattr(answer, "__name__", None))
    return check(exercise.id, answer, **kwargs)


def _run(cases, answer, guard):
    """Run the cases in order until one is fatal; the rest are marked as not run."""
    results = []
    with _quiet_tf_logger():
        for case in cases:
            result, fatal = guard.run_case(case, answer)
            results.append(result)
            if fatal:
                break
    return results + _not_run(cases[len(results):])


def _not_run(cases):
    return [CaseResult(case.name, False, say.NOT_RUN, skipped=True) for case in cases]


def _kind_problem(exercise, answer):
    """Why ``answer`` cannot be the kind of thing the exercise asks for, or ''."""
    if exercise.kind == "class":
        if isinstance(answer, keras.layers.Layer):
            return say.layer_instance(exercise.signature)
        if not (isinstance(answer, type) and issubclass(answer, keras.layers.Layer)):
            return say.wrong_kind(exercise.kind, exercise.signature, answer)
    elif not callable(answer) or isinstance(answer, type):
        return say.wrong_kind(exercise.kind, exercise.signature, answer)
    return ""


@contextlib.contextmanager
def _float32_policy():
    """Compute the references in float32, whatever dtype policy the reader has set."""
    saved = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(saved)


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
