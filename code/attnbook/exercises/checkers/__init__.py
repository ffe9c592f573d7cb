"""The checkers: one module per group of exercises, each defining the ``Checker`` objects
that :mod:`..catalog` lists, with their NumPy references (:mod:`.numpy_ref`), the
correct and buggy layers a shape test is run on (:mod:`.correct_layers`,
:mod:`.mutants`), and the two case makers every checker uses.
"""

from .._cases import Case, Fail
from ..running import tasks


def call_case(name, args, judge, kwargs=None):
    """A case that calls the answer as ``answer(*args, **kwargs)`` and judges the result."""
    return Case(name, (tasks.call, (tuple(args), dict(kwargs or {}))), judge)


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

    return Case(name, (tasks.twice, (tuple(args_a), tuple(args_b))), judge)
