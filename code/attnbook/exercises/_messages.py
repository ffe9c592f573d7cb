"""What the checkers say to the reader, written once.

The verdict words, the lines of a report, and the sentences that describe a value or
an exception live here, so the guard, the runner and every checker word them alike.
A hint that names one known mistake stays beside the code that recognises it.
"""

import os
import re
import sysconfig
import traceback

PASSED = "通过"
FAILED = "未通过"
UNFINISHED = "未完成"
INTERRUPTED = "已中断"
INTERRUPTED_LINE = "  检查被中断（Ctrl-C）：检查进程已经结束，没有判定。"
NOT_RUN = "未运行"
STUB_TODO = "在这里写你的答案"  # the text of the starter stubs' NotImplementedError
FORGOT_RETURN = "（是不是忘了 return？）"
CACHED_RESULT = "两组不同的输入得到了完全相同的结果：是不是返回了固定的（缓存的）结果？"

# --- the report ----------------------------------------------------------------------

# The lines after the header, and the messages below, are templates with named fields.
FAILED_LINE = "  ✗ 用例“{case}”：{message}"
NOTE_LINE = "  注：用例“{case}”：{message}"
PROBLEM_LINE = "  ✗ {problem}"
HINT_LINE = "  提示：{hint}"
NOT_RUN_LINE = "  其余 {n} 个用例未运行。"


def header(exercise_id, title, state, n_passed, n_cases):
    """The first line: ``练习 4.5.2“标题”：通过（8/8 个用例）``; 未完成 has no count."""
    count = "" if state in (UNFINISHED, INTERRUPTED) else f"（{n_passed}/{n_cases} 个用例）"
    return f"练习 {exercise_id}“{title}”：{state}{count}"


# --- what went wrong while the reader's code ran --------------------------------------

TIMEOUT = "超时：超过 {limit:g} 秒没有返回"
LOAD_TIMEOUT = "超时：载入答案（运行文件顶层的代码）超过 {limit:g} 秒"
MEMORY_EXCEEDED = "内存超过上限：检查进程多用了 {used:.0f} MiB（上限 {limit:g} MiB），已被结束"
CHILD_GONE = "{reason}（你的代码结束了检查进程，或让它崩溃了）"  # the child ended or garbled its messages mid-case
LOWER_PRECISION = ("{what}dtype 是 {got}，精度低于输入的 {wanted}：请按输入的 dtype 计算并返回结果"
                   "（低精度的结果不按更宽的容差判定）")


def reference_called(noun, name):
    if name.endswith(".solutions"):
        return f"你的{noun}导入了参考解答 {name}：请自己写出这一步。"
    return f"你的{noun}直接调用了参考实现 {name}：请自己写出这一步。"


def not_picklable(err):
    return (f"无法把答案交给检查进程（{type(err).__name__}: {error_text(err)}）："
            "它引用的某个对象不能复制到新的 Python 进程里")


def unfinished(noun, err):
    """The hint for a stub that still raises NotImplementedError."""
    where = _location(err)
    return (f"你的{noun}还没有写完（{where}抛出了 NotImplementedError）。"
            "把那行 raise 换成你的实现，再运行检查。")


def describe_error(err, noun="函数"):
    """``你的函数抛出了 TypeError: …（answer.py 第 12 行）``, without a traceback."""
    return f"你的{noun}抛出了 {type(err).__name__}: {error_text(err)}{reader_location(err)}"


def unreadable_result(err):
    return f"无法检查返回值（{type(err).__name__}: {error_text(err)}）"


# --- what was submitted or returned ---------------------------------------------------

VALUE_MISMATCH = "{what}数值不对：最大误差 {error:.1e}（容差 {tolerance:.0e}），出现在位置 {where}{hint}"


def wrong_kind(kind, signature, answer):
    """Why ``answer`` is not the function or Layer subclass the exercise asks for."""
    got = f"类 {answer.__name__}" if isinstance(answer, type) else type_name(answer)
    return f"{_wanted(kind, signature)}，得到 {got}"


def layer_instance(signature):
    return f"{_wanted('class', signature)}，得到的是它的一个实例：请传类本身，不要先调用它"


def _wanted(kind, signature):
    if kind == "class":
        return f"应提交类 {signature}（keras.layers.Layer 的子类）"
    return f"应提交函数 {signature}"


def type_name(value):
    """A value's kind: 'None', "字符串 'abc'", 'EagerTensor（形状 (2, 3)）'."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"字符串 {value[:30]!r}"
    name = getattr(value, "returned_type", None) or getattr(value, "type_name", None) or type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, type):
        return f"{name}（形状 {fmt_shape(shape)}）"
    return name


def fmt_shape(shape):
    return str(tuple(None if d is None else int(d) for d in shape))


def shape_mismatch(expected, got, what=""):
    return f"{what}形状不对：期望 {fmt_shape(expected)}，得到 {fmt_shape(got)}"


def not_a_tensor(what, value, whole=True):
    """whole: the value is the answer's whole return value, so None may mean no return."""
    if value is None:
        return f"{what}应是张量，得到 None{FORGOT_RETURN if whole else ''}"
    sep = "" if isinstance(value, str) else " "  # 得到字符串 'b'，得到 list
    return f"{what}应是张量（tf.Tensor 或 numpy 数组），得到{sep}{type_name(value)}"


def not_numeric(what, value, dtype):
    return f"{what}应是数值张量，得到 {type(value).__name__}（dtype {dtype}）"


def wrong_count(names, value):
    """For a function that must return ``len(names)`` values, e.g. (output, weights)."""
    expected = f"应返回 {len(names)} 个值（{', '.join(names)}）"
    if value is None:
        return f"{expected}，得到 None{FORGOT_RETURN}"
    if not isinstance(value, (tuple, list)):
        return f"{expected}，得到一个{'' if isinstance(value, str) else ' '}{type_name(value)}"
    return f"{expected}，得到 {len(value)} 个值"


def not_finite(what, name, where, nan_hint=""):
    """``注意力权重里出现了 NaN（位置 (0, 1, 2)）``; what is a label such as 注意力权重的."""
    return f"{what[:-1] + '里' if what else ''}出现了 {name}（位置 {where}）{nan_hint}"


# --- lookups -------------------------------------------------------------------------

BAD_LIMIT = "{name} 必须是有限的正数，得到 {value!r}。"


def conceptual_id(exercise_id, checkable):
    return f"练习 {exercise_id} 是思考题，没有检查器。可检查的练习：{'、'.join(checkable)}。"


def unknown_id(exercise_id, checkable):
    return f"没有编号为 {exercise_id!r} 的练习。可检查的练习：{'、'.join(checkable)}。"


def unknown_name(name, names):
    return (f"没有哪道练习要求名为 {name!r} 的函数或类（要求的名字有：{'、'.join(names)}）。"
            "请写明编号：check(\"4.5.2\", 你的函数)。")


# --- exceptions, in one line ----------------------------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../attnbook
_LIBRARY_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[key])
                       for key in ("stdlib", "platstdlib", "purelib", "platlib")})
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TF_NODE = re.compile(r"^\{\{function_node [^}]*\}\}\s*")
_ERROR_PREFIX = re.compile(r"^[A-Za-z_.]*(Error|Exception): ")
_USER_CODE_FILE = re.compile(r'File "([^"]+)", line (\d+)')  # in tf.function's "in user code:"
_TF_NAME = re.compile(r"\s*name:\s*$")  # TF op errors end with an empty " name: "


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
    where = _location(err)
    return f"（{where}）" if where else ""


def _location(err):
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(err.__traceback__)]
    frames += [(name, int(line)) for name, line in _USER_CODE_FILE.findall(str(err))]
    for filename, lineno in reversed(frames):
        if _is_reader_file(filename):
            if "ipykernel_" in filename or filename.startswith("<ipython"):
                return f"单元格第 {lineno} 行"
            return f"{os.path.basename(filename)} 第 {lineno} 行"
    return ""


def _is_reader_file(filename):
    if filename.startswith("<frozen") or filename == "<string>":
        return False
    path = os.path.abspath(filename)
    inside = (_PACKAGE_DIR, *_LIBRARY_DIRS)
    return not any(path == d or path.startswith(d + os.sep) for d in inside)
