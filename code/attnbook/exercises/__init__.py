"""本书练习的检查器：``check("4.5.2", 你的函数)``，编号是节号加题号。

:func:`check` 返回 :class:`Verdict`，它的文字是一份简短的中文报告；以
``check(...)`` 结尾的 Notebook 单元格会显示它。判定词是常量 ``PASSED`` （通过）、
``FAILED`` （未通过）、``UNFINISHED`` （未完成：答案还是骨架）和 ``INTERRUPTED``
（已中断：检查被 Ctrl-C 打断），可以拿
``verdict.state`` 与它们比较。在终端里：

::

    python -m attnbook.exercises 4.5.2 answer.py      # 检查 answer.py 里的函数
    python -m attnbook.exercises --list               # 列出所有练习

每道练习的编号、标题和要提交的名字都在练习目录 ``attnbook.exercises.catalog``
（``CATALOG``）里。子模块 ``solutions`` 是每道编程题的参考解答（书里展示的就是
它们），``buggy`` 是练习“修好按 d_model 缩放的层”里那个有错的层。

**防什么，不防什么**：检查器要护住的是读者的 Jupyter 内核和老师批改用的命令行：
答案出什么事，内核都不能崩溃、卡住或被改掉，报告都要说清楚；答案也不能靠走捷径
通过。下面每一条都有 ``tests/hostile_answers/`` 里的答案去试：

- 答案只在一个新的子进程（检查进程）里运行，本进程一行读者的代码也不运行：退出、
  自杀、让进程崩溃都只结束检查进程（``exits_inside_the_answer.py``、
  ``kills_itself.py``、``sys_exit_at_top.py``、``array_raises_system_exit.py``）。
- 判定在本进程里做，期望值从不进入检查进程；检查进程只发回普通数据（JSON），每条
  消息都先核对再读，不认识的、太大的一律不收：改掉模块、翻调用栈、伪造消息都改不了
  判定（``patches_the_comparison.py``、``patches_numpy_all.py``、
  ``reads_the_callers_frames.py``、``forges_a_message.py``、``sends_a_huge_message.py``）。
- 载入答案和每个用例都有时限，检查进程的内存增长有上限，超了就结束它
  （``hangs_at_top.py``、``array_sleeps.py``、``eats_memory.py``）。
- 每次检查用一个没运行过答案的检查进程，检查完连同它的整个进程组一起结束：答案
  留下的线程和进程活不过这次检查（``spins_a_thread_and_fails.py``、
  ``leaves_a_process_behind.py``）。
- 每道题点名的参考实现（包里对应这道题的函数、层和层的步骤）装了绊线（从任何线程
  调用都会被发现），参考解答的导入和打开有审计钩子
  （``reference_without_profiler.py``、``reference_from_a_thread.py``、
  ``imports_the_solutions.py``、``execs_the_solutions_file.py``）。

不防的：检查进程不是安全沙箱。答案以读者（或老师）自己的权限运行，能读写删文件、
上网，也能自己另开会话躲过进程组的结束；它另起的进程用的内存不计入上限。绊线和
审计钩子拦的是顺手的捷径，拦不住存心绕过它们的人（参考解答本来就印在书里）。老师
批改不信任的文件，应在容器或虚拟机里运行命令行。
"""

from ._cases import CaseResult, Verdict
from ._check import check, check_by_name
from ._messages import FAILED, INTERRUPTED, PASSED, UNFINISHED
from .catalog import CATALOG, CONCEPTUAL, EXERCISES, Exercise

__all__ = [
    "check", "check_by_name", "Verdict", "CaseResult", "PASSED", "FAILED", "UNFINISHED", "INTERRUPTED",
    "Exercise", "CATALOG", "EXERCISES", "CONCEPTUAL",
]
