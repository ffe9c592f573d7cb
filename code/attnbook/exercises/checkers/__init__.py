"""The checkers: one module per group of exercises, each defining the ``Checker`` objects
that :mod:`..catalog` lists, with their NumPy references (:mod:`.numpy_ref`), the
correct and buggy layers a shape test is run on (:mod:`.correct_layers`,
:mod:`.mutants`), and the two case makers every checker uses.
"""

from .._cases import Case, Fail
from .._compare import differ_check
from ..running import tasks


def call_case(name, args, judge, kwargs=None):
    """A case that calls the answer as ``answer(*args, **kwargs)`` and judges the result."""
    return Case(name, (tasks.call, (tuple(args), dict(kwargs or {}))), judge)


def twice_case(args_a, args_b, judge_of, name="两组不同的输入"):
    """Call the answer on two different inputs of the same shape; catches constant answers.

    judge_of(*args) is the judge of one input's result; equal results fail first.
    """
    judges = judge_of(*args_a), judge_of(*args_b)

    def judge(results):
        differ_check(*results)
        for label, judge_one, result in zip(("第 1 组输入", "第 2 组输入"), judges, results):
            try:
                judge_one(result)
            except Fail as err:
                raise Fail(f"{label}：{err}") from None

    return Case(name, (tasks.twice, (tuple(args_a), tuple(args_b))), judge)
