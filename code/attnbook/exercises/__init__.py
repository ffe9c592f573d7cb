"""第 4.5 节练习的检查器：``check("4.5.2", 你的函数)``。

:func:`check` 返回 :class:`Verdict`，它的文字是一份简短的中文报告；以
``check(...)`` 结尾的 Notebook 单元格会显示它。判定词是常量 ``PASSED`` （通过）、
``FAILED`` （未通过）和 ``UNFINISHED`` （未完成：答案还是骨架），可以拿
``verdict.state`` 与它们比较。在终端里：

::

    python -m attnbook.exercises 4.5.2 answer.py      # 检查 answer.py 里的函数
    python -m attnbook.exercises --list               # 列出所有练习

每道练习的编号、标题和要提交的名字都在练习目录 ``attnbook.exercises.catalog``
（``CATALOG``）里。子模块 ``solutions`` 是每道编程题的参考解答（书里展示的就是
它们），``buggy`` 是练习“修好按 d_model 缩放的层”里那个有错的层。
"""

from ._cases import CaseResult, Verdict
from ._check import check, check_by_name
from ._messages import FAILED, PASSED, UNFINISHED
from .catalog import CATALOG, CONCEPTUAL, EXERCISES, Exercise

__all__ = [
    "check", "check_by_name", "Verdict", "CaseResult", "PASSED", "FAILED", "UNFINISHED",
    "Exercise", "CATALOG", "EXERCISES", "CONCEPTUAL",
]
