"""Check an answer: :func:`check` and :func:`check_by_name`, and the command line's
:func:`check_file`.

The reader's code never runs here. This process (the parent) makes the cases and
their expected values, sends the answer and the cases' inputs to a child process
(:mod:`.running`), receives plain data back and judges it.
"""

import contextlib
import dataclasses
import math
import numbers
import os
import sys

import keras
import numpy as np

from . import _messages as say
from ._cases import CaseResult, Fail, Verdict
from .catalog import exercise_named, get_exercise
from .running import parent, wire
from .running.child import AnswerFile, Job, PickledAnswer
from .running.tasks import kind_problem
from .running.tripwire import SOLUTIONS
from .running.wire import Kind

MEMORY_LIMIT = 2048  # MiB the reader's code may add to the child process


class LoadFailure(Exception):
    """The command line's answer file could not be loaded (exit status 2)."""


@dataclasses.dataclass(frozen=True)
class Options:
    """How one check runs: the limits (seconds, MiB), the inputs' seed, and whether to
    start a spare child afterwards (a notebook checks again; the command line does not)."""

    time_limit: float = 20.0
    memory_limit: float = MEMORY_LIMIT
    seed: int | None = None
    spare: bool = True

    def __post_init__(self):
        for name in ("time_limit", "memory_limit"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
                    or value <= 0):
                raise ValueError(say.BAD_LIMIT.format(name=name, value=value))


def check(exercise_id, answer, *, time_limit=20.0, seed=None, memory_limit=MEMORY_LIMIT):
    """检查 ``answer`` 是否答对了练习 ``exercise_id``，返回 :class:`Verdict`。

    答案在一个单独的 Python 进程（检查进程）里运行：检查器把答案和输入交给它，
    收回结果，在本进程里判定。答案在那里做什么（改掉模块、退出、卡住）都改不了
    判定，也影响不到以后的检查。不给 ``seed`` 时，每次调用都重新随机生成输入，
    所以缓存的或写死的结果过不了检查。载入答案和每个用例各有 ``time_limit`` 秒，超时、内存超过上限、
    调用了这道题装了绊线的参考实现或导入了参考解答，都会让检查停下（绊线拦的是顺手的捷径，
    见 :mod:`attnbook.exercises` 的《防什么，不防什么》）。答案还是骨架（抛出
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
    options = Options(time_limit, memory_limit, seed)
    problem = kind_problem(exercise.kind, exercise.signature, answer)
    source = None
    if not problem:
        try:
            source = PickledAnswer(_pickled(answer))
        except Exception as err:  # noqa: BLE001  (locks, open files, generators ...)
            problem = say.not_picklable(err)
    return _check(exercise, source, _is_a_solution(answer), options, problem)


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
    options = Options(time_limit, memory_limit, spare=False)
    allow = os.path.realpath(path) == os.path.realpath(os.path.join(os.path.dirname(__file__), "solutions.py"))
    return _check(exercise, AnswerFile(os.path.abspath(path), name), allow, options)


def _is_a_solution(answer):
    """Whether ``answer`` is itself an object of the solutions module (not merely named so)."""
    module = sys.modules.get(SOLUTIONS)
    name = getattr(answer, "__qualname__", None)
    return module is not None and isinstance(name, str) and getattr(module, name, None) is answer


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


def _check(exercise, source, allow_solutions, options, problem=""):
    """The :class:`Verdict` on ``source`` (None when ``problem`` says why nothing can run)."""
    checker = exercise.checker
    child = None if problem else parent.take()
    policy = keras.config.dtype_policy()
    spare = options.spare
    try:
        with _float32_policy():
            args = (np.random.default_rng(options.seed),)
            if checker.uses_policy:
                args += (policy.compute_dtype,)
            cases = checker.make_cases(*args)
        if problem:
            return Verdict(exercise.id, exercise.title, _not_run(cases), problem)
        job = Job(exercise.id, source, allow_solutions, policy.name, [case.task for case in cases],
                  list(sys.path), os.getcwd())
        results, problem = _Session(child, checker.noun, options).run(job, cases)
        return Verdict(exercise.id, exercise.title, results, problem)
    except KeyboardInterrupt:
        parent.discard()
        spare = False
        return Verdict(exercise.id, exercise.title, [], interrupted=True)
    finally:
        if child is not None:
            child.kill()
        if spare:
            parent.prepare()


class _Session:
    """One job's conversation with one child: every message checked, nothing trusted."""

    def __init__(self, child, noun, options):
        self.child, self.noun, self.options = child, noun, options

    def run(self, job, cases):
        """``(case results, problem)``: problem is why no case could run, else ''."""
        try:
            self.child.wait_ready()
            self.child.send(job)
            if self._receive().kind is not Kind.LOADING:
                raise parent.ChildGone("检查进程发来了意外的消息")
            loaded = self._receive()
        except _TROUBLE as err:
            return _not_run(cases), self._trouble(err, say.LOAD_TIMEOUT)
        if loaded.kind is Kind.HIT:
            return _not_run(cases), say.reference_called(self.noun, loaded.text)
        if loaded.kind is Kind.LOAD_ERROR and loaded.usage:
            raise LoadFailure(loaded.text)
        if loaded.kind in (Kind.LOAD_ERROR, Kind.PROBLEM):
            return _not_run(cases), loaded.text
        if loaded.kind is not Kind.LOADED:
            return _not_run(cases), say.CHILD_GONE.format(reason="检查进程发来了意外的消息")
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
                last = self._receive()
            except _TROUBLE:
                last = None
            if last is not None and last.kind is Kind.HIT:  # a call made after the last result was sent
                results[-1] = CaseResult(cases[-1].name, False, say.reference_called(self.noun, last.text))
        return results + _not_run(cases[len(results):])

    def _case(self, index, case):
        """``(CaseResult, fatal)`` for case ``index``; fatal stops the check."""
        name = case.name
        try:
            message = self._receive()
        except _TROUBLE as err:
            return CaseResult(name, False, self._trouble(err, say.TIMEOUT)), True
        if message.kind is Kind.HIT:
            return CaseResult(name, False, say.reference_called(self.noun, message.text)), True
        if message.case != index or message.kind not in _CASE_KINDS:
            return CaseResult(name, False, say.CHILD_GONE.format(reason="检查进程发来了意外的消息")), True
        if message.kind is Kind.UNFINISHED:
            return CaseResult(name, False, message.text, unfinished=True), True
        if message.kind in (Kind.FAIL, Kind.ERROR):
            return CaseResult(name, False, message.text), False
        try:
            value = wire.decode(message.value)
        except wire.ProtocolError as err:
            return CaseResult(name, False, say.CHILD_GONE.format(reason=f"检查进程发来的结果无法读取（{err}）")), True
        return self._judge(case, value), False

    def _trouble(self, err, timeout):
        """What went wrong, for one of :data:`_TROUBLE`; ``timeout`` is the template of a timeout."""
        if isinstance(err, parent.Timeout):
            return timeout.format(limit=self.options.time_limit)
        if isinstance(err, parent.MemoryExceeded):
            used, limit = err.args
            return say.MEMORY_EXCEEDED.format(used=used, limit=limit)
        return say.CHILD_GONE.format(reason=str(err))

    @staticmethod
    def _judge(case, value):
        try:
            return CaseResult(case.name, True, case.judge(value) or "")
        except Fail as err:
            return CaseResult(case.name, False, str(err))
        except Exception as err:  # noqa: BLE001  (a return value the judge cannot read)
            return CaseResult(case.name, False, say.unreadable_result(err))

    def _receive(self):
        return self.child.receive(self.options.time_limit, self.options.memory_limit)


_TROUBLE = (parent.Timeout, parent.MemoryExceeded, parent.ChildGone)
_CASE_KINDS = (Kind.RESULT, Kind.FAIL, Kind.UNFINISHED, Kind.ERROR)


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
