"""Grading: a case, a checker, a case's result and the verdict, which every checker shares."""

import dataclasses
from typing import Any, Callable

from . import _messages as say


class Fail(Exception):
    """A case fails; the exception's text is the reader-facing (Chinese) message."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One generated test of an answer.

    ``task`` is ``(function, args)``: the child process runs ``function(answer, *args)``
    (a function of :mod:`.running.tasks`, which only ever sees inputs) and sends back the
    result as plain data. ``judge(result)`` runs in the parent; it raises
    :class:`Fail` to fail the case, or returns a note (a string shown with a passed
    case) or None.
    """

    name: str
    task: tuple
    judge: Callable[[Any], Any]


@dataclasses.dataclass(frozen=True)
class Checker:
    """How to check one coding exercise of the catalog.

    make_cases(rng) returns the cases, with fresh random inputs from the NumPy
    generator ``rng``; with ``uses_policy`` it is ``make_cases(rng, compute_dtype)``,
    the compute dtype of the reader's Keras policy (the inputs' dtype of a layer).
    forbidden: ``(public name, function)`` pairs of reference code that the answer
    must not call. noun names the answer in messages (函数, 层, 测试).
    """

    make_cases: Callable[..., list]
    forbidden: tuple = ()
    noun: str = "函数"
    uses_policy: bool = False


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """一个用例的结果。

    Args:
        name: 用例名，如 ``"批次大小为 1"``。
        passed: 是否通过。
        message: 未通过的原因，或通过时的附注；没有就是空字符串。
        skipped: 这个用例没有运行（前面的用例已让检查停下）。
        unfinished: 答案还是骨架：运行时抛出了 ``NotImplementedError``。
    """

    name: str
    passed: bool
    message: str = ""
    skipped: bool = False
    unfinished: bool = False


@dataclasses.dataclass(frozen=True, repr=False)
class Verdict:
    """:func:`~attnbook.exercises.check` 的结果；``str`` 和 ``repr`` 都是中文报告。

    在 Notebook 里，以 ``check(...)`` 结尾的单元格会显示这份报告。``bool(verdict)``
    在全部用例通过时为 True。

    Args:
        exercise_id: 练习编号，如 ``"4.5.2"``。
        title: 练习标题。
        cases: 各用例的 :class:`CaseResult`，按运行顺序。
        problem: 一个用例都没法运行时的原因（比如该交函数却交了一个数），此时
            所有用例都标为未运行；否则为空字符串。
        interrupted: 检查被 Ctrl-C 中断了。
    """

    exercise_id: str
    title: str
    cases: list
    problem: str = ""
    interrupted: bool = False

    @property
    def passed(self):
        """全部用例都通过（并且检查没有被中断）。"""
        return bool(self.cases) and not self.interrupted and all(case.passed for case in self.cases)

    @property
    def state(self):
        """判定词：``PASSED`` （通过）、``FAILED`` （未通过）、``UNFINISHED`` （未完成）
        或 ``INTERRUPTED`` （已中断）。"""
        if self.interrupted:
            return say.INTERRUPTED
        if any(case.unfinished for case in self.cases):
            return say.UNFINISHED
        return say.PASSED if self.passed else say.FAILED

    def __bool__(self):
        return self.passed

    def __str__(self):
        n_passed = sum(case.passed for case in self.cases)
        lines = [say.header(self.exercise_id, self.title, self.state, n_passed, len(self.cases))]
        if self.interrupted:
            return "\n".join([*lines, say.INTERRUPTED_LINE])
        if self.state == say.UNFINISHED:
            hint = next(case.message for case in self.cases if case.unfinished)
            return "\n".join([*lines, say.HINT_LINE.format(hint=hint)])
        if self.problem:
            lines.append(say.PROBLEM_LINE.format(problem=self.problem))
        for case in self.cases:
            if not case.passed and not case.skipped:
                lines.append(say.FAILED_LINE.format(case=case.name, message=case.message))
            elif case.passed and case.message:
                lines.append(say.NOTE_LINE.format(case=case.name, message=case.message))
        n_skipped = sum(case.skipped for case in self.cases)
        if n_skipped and not self.problem:
            lines.append(say.NOT_RUN_LINE.format(n=n_skipped))
        return "\n".join(lines)

    __repr__ = __str__
