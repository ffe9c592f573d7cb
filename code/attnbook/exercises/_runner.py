"""Check an answer: :func:`check` and :func:`check_by_name`, and the command line's
:func:`check_file`.

The reader's code never runs here. This process (the parent) makes the cases and
their expected values, sends the answer and the cases' inputs to a child process
(:mod:`._sandbox`, :mod:`._child`), receives plain data back and judges it.
"""

import contextlib
import functools
import math
import numbers
import os
import sys

import keras
import numpy as np

from . import _messages as say
from . import _protocol, _sandbox, _tasks
from ._core import CaseResult, Fail, Verdict
from ._tripwire import SOLUTIONS
from .catalog import exercise_named, get_exercise

MEMORY_LIMIT = 2048  # MiB the reader's code may add to the child process


class LoadFailure(Exception):
    """The command line's answer file could not be loaded (exit status 2)."""


def check(exercise_id, answer, *, time_limit=20.0, seed=None, memory_limit=MEMORY_LIMIT):
    """检查 ``answer`` 是否答对了练习 ``exercise_id``，返回 :class:`Verdict`。

    答案在一个单独的 Python 进程（检查进程）里运行：检查器把答案和输入交给它，
    收回结果，在本进程里判定。答案在那里做什么（改掉模块、退出、卡住）都改不了
    判定，也影响不到以后的检查。不给 ``seed`` 时，每次调用都重新随机生成输入，
    所以缓存的或写死的结果过不了检查。载入答案和每个用例各有 ``time_limit`` 秒，超时、内存超过上限、
    调用了参考实现或导入了参考解答，都会让检查停下。答案还是骨架（抛出
    ``NotImplementedError``）时，判定为“未完成”；按 Ctrl-C 则立刻结束检查进程，
    判定为“已中断”。读者设置的 Keras dtype 策略（比如 ``mixed_bfloat16``）对答案
    照样生效，参考结果则总按 float32 计算。本函数不打印任何东西。

    Args:
        exercise_id: 练习编号，如 ``"4.5.2"``。
        answer: 你的函数，或 ``keras.layers.Layer`` 的子类（类本身，不是实例）。
        time_limit: 载入答案和每个用例的时限（秒），有限的正数。
        seed: 整数时固定随机输入，让页面每次构建打印同样的报告。
        memory_limit: 你的代码最多能让检查进程多用多少内存（MiB），有限的正数。

    Returns:
        Verdict: 中文报告；``verdict.state`` 是“通过”“未通过”“未完成”或“已中断”。

    Raises:
        ValueError: 编号未知、是思考题，或 ``time_limit``、``memory_limit`` 不是有限的正数。
    """
    exercise = get_exercise(exercise_id)
    _check_limit(time_limit, "time_limit")
    _check_limit(memory_limit, "memory_limit")
    problem = _tasks.kind_problem(exercise.kind, exercise.signature, answer)
    source = None
    if not problem:
        try:
            source = ("pickle", _pickled(answer))
        except Exception as err:  # noqa: BLE001  (locks, open files, generators ...)
            problem = say.not_picklable(err)
    allow_solutions = _is_a_solution(answer)
    return _check(exercise, source, problem, allow_solutions, time_limit, seed, memory_limit, prewarm=True)


def check_by_name(answer, **kwargs):
    """按 ``answer`` 的名字找到要求它的练习，再 :func:`check`。

    书里的参考解答这样检查：``check_by_name(solutions.split_heads)`` 找到要求
    ``split_heads`` 的那道练习（拆分多头）。你的函数与练习要求的名字相同时，
    也可以这样用。

    Args:
        answer: 名字（``__name__``）与练习要求相同的函数或类。
        **kwargs: 传给 :func:`check` 的 ``time_limit``、``seed``、``memory_limit``。

    Returns:
        Verdict: 同 :func:`check`。

    Raises:
        ValueError: 没有哪道练习要求这个名字。
    """
    exercise = exercise_named(getattr(answer, "__name__", None))
    return check(exercise.id, answer, **kwargs)


def check_file(exercise_id, path, name, *, time_limit=20.0, memory_limit=MEMORY_LIMIT):
    """Check the object ``name`` of the file ``path``; the file runs only in the child.

    Raises :class:`LoadFailure` (one Chinese line) when the file cannot be loaded, and
    ValueError for a bad id or limit.
    """
    exercise = get_exercise(exercise_id)
    _check_limit(time_limit, "time_limit")
    _check_limit(memory_limit, "memory_limit")
    allow = os.path.realpath(path) == os.path.realpath(os.path.join(os.path.dirname(__file__), "solutions.py"))
    return _check(exercise, ("file", os.path.abspath(path), name), "", allow, time_limit, None, memory_limit,
                  prewarm=False)


def _is_a_solution(answer):
    """Whether ``answer`` is itself an object of the solutions module (not merely named so)."""
    module = sys.modules.get(SOLUTIONS)
    name = getattr(answer, "__qualname__", None)
    return module is not None and isinstance(name, str) and getattr(module, name, None) is answer


def _check_limit(value, name):
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
            or value <= 0):
        raise ValueError(say.bad_time_limit(value, name))


def _pickled(answer):
    """The answer, pickled; a reader's own module travels by value, the package's by name."""
    import cloudpickle

    module = sys.modules.get(getattr(answer, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    by_value = (module is not None and module.__name__ != "__main__" and file
                and say._is_reader_file(file) and not module.__name__.startswith("attnbook"))  # noqa: SLF001
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(answer, protocol=5)
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)


def _check(exercise, source, problem, allow_solutions, time_limit, seed, memory_limit, prewarm):
    checker = exercise.checker
    child = None if problem else _sandbox.take()
    policy = keras.config.dtype_policy()
    try:
        with _float32_policy():
            args = (np.random.default_rng(seed),)
            if checker.uses_policy:
                args += (policy.compute_dtype,)
            cases = checker.make_cases(*args)
        if problem:
            return Verdict(exercise.id, exercise.title, _not_run(cases), problem)
        job = dict(exercise_id=exercise.id, answer=source, kind=exercise.kind, policy=policy.name,
                   tasks=[case.task for case in cases], sys_path=list(sys.path), cwd=os.getcwd(),
                   allow_solutions=allow_solutions,
                   kind_problem=functools.partial(_tasks.kind_problem, exercise.kind, exercise.signature) if source[0] == "file" else None)
        session = _Session(child, checker.noun, time_limit, memory_limit)
        results, problem = session.run(job, cases)
        return Verdict(exercise.id, exercise.title, results, problem)
    except KeyboardInterrupt:
        _sandbox.discard()
        prewarm = False
        return Verdict(exercise.id, exercise.title, [], interrupted=True)
    finally:
        if child is not None:
            child.kill()
        if prewarm:
            _sandbox.prepare()


class _Session:
    """One job's conversation with one child: every message checked, nothing trusted."""

    def __init__(self, child, noun, time_limit, memory_limit):
        self.child, self.noun = child, noun
        self.time_limit, self.memory_limit = time_limit, memory_limit

    def run(self, job, cases):
        """``(case results, problem)``: problem is why no case could run, else ''."""
        try:
            self.child.wait_ready()
            self.child.send(job)
            self._expect("loading", self.time_limit)
            loaded = self._receive(self.time_limit)
        except _sandbox.Timeout:
            return _not_run(cases), say.load_timeout(self.time_limit)
        except _sandbox.MemoryExceeded as err:
            return _not_run(cases), say.memory_exceeded(*err.args)
        except (_sandbox.ChildGone, _protocol.ProtocolError) as err:
            return _not_run(cases), say.child_gone(str(err))
        if "hit" in loaded:
            return _not_run(cases), say.reference_called(self.noun, str(loaded["hit"]))
        if "load_error" in loaded:
            if loaded.get("usage"):
                raise LoadFailure(str(loaded["load_error"]))
            return _not_run(cases), str(loaded["load_error"])
        if "problem" in loaded:
            return _not_run(cases), str(loaded["problem"])
        if "loaded" not in loaded:
            return _not_run(cases), say.child_gone("检查进程发来了意外的消息")
        return self._cases(cases), ""

    def _cases(self, cases):
        results = []
        for index, case in enumerate(cases):
            result, fatal = self._case(index, case)
            results.append(result)
            if fatal:
                break
        if len(results) == len(cases):
            try:
                last = self._receive(self.time_limit)
            except (_sandbox.Timeout, _sandbox.MemoryExceeded, _sandbox.ChildGone, _protocol.ProtocolError):
                last = {}
            if "hit" in last:  # a call made after the last result was sent
                results[-1] = CaseResult(cases[-1].name, False, say.reference_called(self.noun, str(last["hit"])))
        return results + _not_run(cases[len(results):])

    def _case(self, index, case):
        """``(CaseResult, fatal)`` for case ``index``; fatal stops the check."""
        name = case.name
        try:
            message = self._receive(self.time_limit)
        except _sandbox.Timeout:
            return CaseResult(name, False, say.timeout(self.time_limit)), True
        except _sandbox.MemoryExceeded as err:
            return CaseResult(name, False, say.memory_exceeded(*err.args)), True
        except (_sandbox.ChildGone, _protocol.ProtocolError) as err:
            return CaseResult(name, False, say.child_gone(str(err))), True
        if "hit" in message:
            return CaseResult(name, False, say.reference_called(self.noun, str(message["hit"]))), True
        if message.get("case") != index:
            return CaseResult(name, False, say.child_gone("检查进程发来了意外的消息")), True
        if "unfinished" in message:
            return CaseResult(name, False, str(message["unfinished"]), unfinished=True), True
        if "fail" in message:
            return CaseResult(name, False, str(message["fail"])), False
        if "error" in message:
            return CaseResult(name, False, str(message["error"])), False
        try:
            value = _protocol.decode(message.get("result"))
        except _protocol.ProtocolError as err:
            return CaseResult(name, False, say.child_gone(f"检查进程发来的结果无法读取（{err}）")), True
        try:
            return CaseResult(name, True, case.judge(value) or ""), False
        except Fail as err:
            return CaseResult(name, False, str(err)), False
        except Exception as err:  # noqa: BLE001  (a return value the judge cannot read)
            return CaseResult(name, False, say.unreadable_result(err)), False

    def _receive(self, time_limit):
        return self.child.receive(time_limit, self.memory_limit)

    def _expect(self, key, time_limit):
        message = self._receive(time_limit)
        if key not in message:
            raise _protocol.ProtocolError("检查进程发来了意外的消息")


def _not_run(cases):
    return [CaseResult(case.name, False, say.NOT_RUN, skipped=True) for case in cases]


@contextlib.contextmanager
def _float32_policy():
    """Compute the references in float32, whatever dtype policy the reader has set."""
    saved = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(saved)
