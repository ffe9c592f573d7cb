"""Command line: ``python -m attnbook.exercises 4.5.2 answer.py [--name NAME]``.

Loads ``answer.py`` as a module, takes the object the exercise asks for (or ``--name``),
checks it and prints the report. Exit status: 0 passed, 1 failed or unfinished, 2 a
usage or loading error (reported in one Chinese line, without a traceback).
"""

import argparse
import importlib.util
import os
import sys

from ._messages import error_text, reader_location
from ._runner import check
from .catalog import CONCEPTUAL, EXERCISES, get_exercise


class UsageError(Exception):
    """A mistake in the command line or the answer file; exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"命令行参数有误：{message}\n{self.format_usage().strip()}")


def _parser():
    parser = _Parser(prog="python -m attnbook.exercises", description="检查第 4.5 节练习的答案。")
    parser.add_argument("exercise_id", nargs="?", help="练习编号，例如 4.5.2")
    parser.add_argument("path", nargs="?", help="答案所在的 .py 文件")
    parser.add_argument("--name", help="要检查的函数或类名（默认是练习要求的名字）")
    parser.add_argument("--time-limit", type=float, default=20.0, help="每个用例的时限（秒），默认 20")
    parser.add_argument("--list", action="store_true", help="列出所有可检查的练习")
    return parser


def list_exercises():
    """One line per checked exercise: id, title, the name the answer must have."""
    lines = [f"{ex.id:<7}{ex.title}（{ex.answer_name}）" for ex in EXERCISES.values()]
    lines.append(f"（{'、'.join(CONCEPTUAL)} 是思考题，没有检查器）")
    return "\n".join(lines)


def load_answer(path, name):
    """The object ``name`` from the Python file ``path``; :class:`UsageError` if impossible."""
    if not os.path.isfile(path):
        raise UsageError(f"找不到文件：{path}")
    module_name = "_attnbook_answer_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(path))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # the answer may import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        raise UsageError(f"{os.path.basename(path)} 第 {err.lineno} 行有语法错误：{err.msg}") from None
    except Exception as err:  # noqa: BLE001  (any error while the file runs)
        raise UsageError(f"加载 {os.path.basename(path)} 时出错：{type(err).__name__}: "
                         f"{error_text(err)}{reader_location(err)}") from None
    if not hasattr(module, name):
        raise UsageError(f"{os.path.basename(path)} 里没有名为 {name} 的函数或类（可以用 --name 指定别的名字）")
    return getattr(module, name)


def main(argv=None):
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    try:
        args = _parser().parse_args(argv)
        if args.list:
            print(list_exercises())
            return 0
        if args.exercise_id is None or args.path is None:
            raise UsageError("需要练习编号和答案文件，例如：python -m attnbook.exercises 4.5.2 answer.py")
        try:
            exercise = get_exercise(args.exercise_id)
            answer = load_answer(args.path, args.name or exercise.answer_name)
            verdict = check(exercise.id, answer, time_limit=args.time_limit)
        except ValueError as err:
            raise UsageError(str(err)) from None
    except UsageError as err:
        print(err, file=sys.stderr)
        return 2
    print(verdict)
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main())
