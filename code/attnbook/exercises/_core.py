"""The pieces every checker shares: a case, its result, and the verdict of one check."""

import dataclasses
from typing import Any, Callable


class Fail(Exception):
    """A case fails; the exception's text is the reader-facing (Chinese) message."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One generated test of an answer.

    ``run(answer)`` is the only part that executes the reader's code: it runs in a
    guarded thread and returns what ``judge`` inspects. ``judge(result)`` runs in the
    caller's thread; it raises :class:`Fail` to fail the case, or returns a note (a
    string shown with a passed case) or None.
    """

    name: str
    run: Callable[[Any], Any]
    judge: Callable[[Any], Any]


@dataclasses.dataclass(frozen=True)
class Exercise:
    """One coding exercise: what to submit and how to generate its cases.

    make_cases(rng) returns the cases, with fresh random inputs from the NumPy
    generator ``rng``. forbidden: ``(public name, function)`` pairs of reference code
    that the answer must not call. kind: "function", or "class" for a keras Layer
    subclass. noun names the answer in messages (函数, 层, 测试).
    """

    id: str
    title: str
    answer_name: str
    signature: str
    make_cases: Callable[[Any], list] = dataclasses.field(repr=False)
    forbidden: tuple = dataclasses.field(default=(), repr=False)
    kind: str = "function"
    noun: str = "函数"


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """The outcome of one case; ``skipped`` marks a case that never ran."""

    name: str
    passed: bool
    message: str = ""
    skipped: bool = False


@dataclasses.dataclass(frozen=True, repr=False)
class Verdict:
    """What :func:`attnbook.exercises.check` returns; ``str`` and ``repr`` are the report.

    ``problem`` is set when no case could run at all (for example, the answer is not a
    function), and then every case is skipped.
    """

    exercise_id: str
    title: str
    cases: list  # of CaseResult, in the order the cases ran
    problem: str = ""

    @property
    def passed(self):
        return bool(self.cases) and all(case.passed for case in self.cases)

    def __bool__(self):
        return self.passed

    def __str__(self):
        n_passed = sum(case.passed for case in self.cases)
        state = "通过" if self.passed else "未通过"
        lines = [f"练习 {self.exercise_id}“{self.title}”：{state}（{n_passed}/{len(self.cases)} 个用例）"]
        if self.problem:
            lines.append(f"  ✗ {self.problem}")
        for case in self.cases:
            if not case.passed and not case.skipped:
                lines.append(f"  ✗ 用例“{case.name}”：{case.message}")
            elif case.passed and case.message:
                lines.append(f"  注：用例“{case.name}”：{case.message}")
        n_skipped = sum(case.skipped for case in self.cases)
        if n_skipped and not self.problem:
            lines.append(f"  其余 {n_skipped} 个用例未运行。")
        return "\n".join(lines)

    __repr__ = __str__


def call_case(name, args, judge, kwargs=None):
    """A case that calls the answer as ``answer(*args, **kwargs)`` and judges the result."""
    kwargs = kwargs or {}
    return Case(name, lambda answer: answer(*args, **kwargs), judge)


def twice_case(name, args_a, args_b, judge_a, judge_b, differ):
    """Call the answer on two different inputs of the same shape; catches constant answers.

    differ(result_a, result_b) raises :class:`Fail` when the two results are the same.
    """

    def judge(results):
        differ(*results)
        for label, judge_one, result in (("第 1 组输入", judge_a, results[0]), ("第 2 组输入", judge_b, results[1])):
            try:
                judge_one(result)
            except Fail as err:
                raise Fail(f"{label}：{err}") from None

    return Case(name, lambda answer: (answer(*args_a), answer(*args_b)), judge)
