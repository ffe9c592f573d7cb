"""Exercise checkers for section 4.5: ``check("4.5.2", my_function)``.

``check`` returns a :class:`Verdict` whose text is a short report in Chinese; a notebook
cell that ends with ``check(...)`` shows it. From a terminal::

    python -m attnbook.exercises 4.5.2 answer.py      # 检查 answer.py 里的函数
    python -m attnbook.exercises --list               # 列出所有练习

Submodules: ``solutions`` (one reference answer per exercise, shown in the book) and
``buggy`` (the layer with the wrong line, for 4.5.6).
"""

from ._core import CaseResult, Exercise, Verdict
from ._registry import CONCEPTUAL, EXERCISES, check

__all__ = ["CONCEPTUAL", "EXERCISES", "CaseResult", "Exercise", "Verdict", "check"]
