"""Command line: ``python -m attnbook.exercises 4.5.2 answer.py [--name NAME]``.

The answer file is loaded and run only in the checker's child process; this process
judges what comes back and prints the report. Exit status: 0 only after a printed
report in which every case passed; 1 failed, unfinished, or the child ended without
a verdict; 2 a usage or loading error (one Chinese line, never a traceback); 130
interrupted (Ctrl-C).
"""

import argparse
import contextlib
import math
import os
import sys

from ._check import MEMORY_LIMIT, LoadFailure, check_file
from ._messages import INTERRUPTED
from .catalog import CONCEPTUAL, EXERCISES, get_exercise


class UsageError(Exception):
    """A mistake in the command line or the answer file; exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"命令行参数有误：{message}（用 --help 查看用法）")


def _positive(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"应是一个数，得到 {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"应是有限的正数，得到 {text!r}")
    return value


def _parser():
    parser = _Parser(prog="python -m attnbook.exercises", description="检查本书练习的答案。")
    parser.add_argument("exercise_id", nargs="?", help="练习编号，例如 4.5.2")
    parser.add_argument("path", nargs="?", help="答案所在的 .py 文件")
    parser.add_argument("--name", help="要检查的函数或类名（默认是练习要求的名字）")
    parser.add_argument("--time-limit", type=_positive, default=20.0,
                        help="载入答案和每个用例的时限（秒），默认 20")
    parser.add_argument("--memory-limit", type=_positive, default=MEMORY_LIMIT,
                        help=f"答案最多能多用的内存（MiB），默认 {MEMORY_LIMIT}")
    parser.add_argument("--list", action="store_true", help="列出所有可检查的练习")
    return parser


def list_exercises():
    """One line per checked exercise: id, title, the name the answer must have."""
    lines = [f"{ex.id:<7}{ex.title}（{ex.answer_name}）" for ex in EXERCISES.values()]
    lines.append(f"（{'、'.join(CONCEPTUAL)} 是思考题，没有检查器）")
    return "\n".join(lines)


def check_answer_file(path):
    """Raise :class:`UsageError` unless ``path`` is a readable UTF-8 ``.py`` file."""
    if "\0" in path:
        raise UsageError("文件名里有空字符（\\0）")
    if os.path.isdir(path):
        raise UsageError(f"{path} 是一个文件夹：请给出答案所在的 .py 文件")
    if not os.path.exists(path):
        raise UsageError(f"找不到文件：{path}")
    if not path.endswith(".py"):
        raise UsageError(f"答案文件应是 .py 文件，得到 {os.path.basename(path)}")
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as err:
        raise UsageError(f"读不了 {path}：{err.strerror}") from None
    base = os.path.basename(path)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UsageError(f"{base} 是 UTF-16 编码的：请存成 UTF-8")
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise UsageError(f"{base} 第 {line} 行有空字节（\\0）：这不是一个文本的 Python 文件")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise UsageError(f"{base} 第 {line} 行不是 UTF-8 编码：请存成 UTF-8") from None


def _print(text, stream):
    """Print, and tell a closed pipe (``--list | head -1``) from a failure."""
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):  # so Python does not complain again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        return False
    return True


def main(argv=None):
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    try:
        args = _parser().parse_args(argv)
        if args.list:
            return 0 if _print(list_exercises(), sys.stdout) else 2
        if args.exercise_id is None or args.path is None:
            raise UsageError("需要练习编号和答案文件，例如：python -m attnbook.exercises 4.5.2 answer.py")
        try:
            exercise = get_exercise(args.exercise_id)
            check_answer_file(args.path)
            verdict = check_file(exercise.id, args.path, args.name or exercise.answer_name,
                                 time_limit=args.time_limit, memory_limit=args.memory_limit)
        except (ValueError, LoadFailure) as err:
            raise UsageError(str(err)) from None
    except UsageError as err:
        _print(err, sys.stderr)
        return 2
    except KeyboardInterrupt:
        _print(INTERRUPTED, sys.stderr)
        return 130
    if not _print(verdict, sys.stdout):
        return 2
    if verdict.interrupted:
        return 130
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main())
