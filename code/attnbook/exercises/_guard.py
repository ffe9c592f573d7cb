"""Run the reader's code safely: in a daemon thread, with a time limit, and watching for
calls of the reference implementation that the exercise asks the reader to write.

The watch is a profile hook (``sys.setprofile``) installed in that thread only: it sees
every Python function call and compares its code object with the forbidden ones, so an
alias such as ``from attnbook import scaled_dot_product_attention as f`` is caught too.
"""

import ctypes
import os
import re
import sys
import sysconfig
import threading
import traceback

from ._core import Fail

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../attnbook
_LIBRARY_DIRS = tuple(
    {os.path.abspath(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TF_NODE = re.compile(r"^\{\{function_node [^}]*\}\}\s*")
_ERROR_PREFIX = re.compile(r"^[A-Za-z_.]*(Error|Exception): ")
_USER_CODE_FILE = re.compile(r'File "([^"]+)", line (\d+)')  # in tf.function's "in user code:"
_TF_NAME = re.compile(r"\s*name:\s*$")  # TF op errors end with an empty " name: "


class Timeout(Exception):
    """The reader's code did not return within the time limit."""


class ReferenceCalled(Exception):
    """The reader's code called a forbidden reference function (its public name)."""


def call_guarded(fn, forbidden, time_limit):
    """Return ``fn()``, computed in a daemon thread.

    forbidden: dict code object -> public name. Raises :class:`Timeout` (without
    waiting for the thread: it is a daemon, and it is told to stop),
    :class:`ReferenceCalled`, or whatever ``fn`` raised.
    """
    box, hits = {}, []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code in forbidden:
            hits.append(forbidden[frame.f_code])

    def target():
        if forbidden:
            sys.setprofile(hook)  # this thread only
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001  (reported to the reader)
            box["error"] = err
        finally:
            sys.setprofile(None)

    thread = threading.Thread(target=target, name="attnbook-exercise", daemon=True)
    thread.start()
    thread.join(time_limit)
    if thread.is_alive():
        _abandon(thread)
        raise Timeout()
    if hits:
        raise ReferenceCalled(hits[0])
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Abandoned(BaseException):
    """Raised inside a timed-out thread so that a runaway loop stops using the CPU."""


def _abandon(thread):
    """Ask ``thread`` to stop by raising :class:`_Abandoned` in it; do not wait for it.

    The exception arrives at the thread's next Python bytecode, so a loop in Python
    stops soon; a single long call into C (one huge matmul) runs to its end first.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Abandoned))


def describe_error(err, noun="函数"):
    """``你的函数抛出了 TypeError: …（answer.py 第 12 行）``, without a traceback."""
    return f"你的{noun}{_raised(err)}"


def _raised(err):
    return f"抛出了 {type(err).__name__}: {error_text(err)}{reader_location(err)}"


def error_text(err, limit=200):
    """The first informative line of an exception's message, cleaned of TF/Keras wrapping."""
    lines = [_ANSI.sub("", line).strip() for line in str(err).splitlines()]
    lines = [line for line in lines if line]
    if len(lines) > 1 and lines[0].startswith("Exception encountered when calling"):
        lines = lines[1:]  # Keras puts the original message on the next line
    if len(lines) > 1 and lines[0] == "in user code:":  # tf.function: the cause comes last
        lines = [_ERROR_PREFIX.sub("", lines[-1])]
    text = _TF_NAME.sub("", _TF_NODE.sub("", lines[0])) if lines else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reader_location(err):
    """``（answer.py 第 12 行）`` for the last traceback frame in the reader's own code."""
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(err.__traceback__)]
    frames += [(name, int(line)) for name, line in _USER_CODE_FILE.findall(str(err))]
    for filename, lineno in reversed(frames):
        if _is_reader_file(filename):
            if "ipykernel_" in filename or filename.startswith("<ipython"):
                return f"（单元格第 {lineno} 行）"
            return f"（{os.path.basename(filename)} 第 {lineno} 行）"
    return ""


def _is_reader_file(filename):
    if filename.startswith("<frozen") or filename == "<string>":
        return False
    path = os.path.abspath(filename)
    inside = (_PACKAGE_DIR, *_LIBRARY_DIRS)
    return not any(path == d or path.startswith(d + os.sep) for d in inside)


def run_case(case, answer, forbidden, time_limit, noun):
    """Run one case. Returns ``(message or None, passed, fatal)``; fatal stops the exercise."""
    try:
        result = call_guarded(lambda: case.run(answer), forbidden, time_limit)
    except Timeout:
        return f"超时：超过 {time_limit:g} 秒没有返回", False, True
    except ReferenceCalled as err:
        return f"你的{noun}直接调用了参考实现 {err.args[0]}：请自己写出这一步。", False, True
    except Fail as err:
        return str(err), False, False
    except NotImplementedError as err:  # a stub such as the starter notebook's
        return f"你的{noun}还没有写完：{_raised(err)}", False, True
    except BaseException as err:  # noqa: BLE001  (the reader's bug, even SystemExit)
        return describe_error(err, noun), False, False
    try:
        return case.judge(result), True, False
    except Fail as err:
        return str(err), False, False
    except Exception as err:  # noqa: BLE001  (a return value the judge cannot read)
        return f"无法检查返回值（{type(err).__name__}: {error_text(err)}）", False, False
