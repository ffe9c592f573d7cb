"""把单元格算出的值按名字记下来，页面的文字与论断核对表从这里取数，而不是手抄。

``glue(name, value)`` 与 myst-nb 的 ``glue(name, value, display=False)`` 写出同样格式的
输出（``application/papermill.record/`` 前缀的 MIME 类型，元数据里的 ``scrapbook``），
所以页面可以用 ``{glue:text}`name:.2f``` 把这个值插进文字；同时另存一份 JSON，供构建时
按名字读回原始数值。它只依赖 IPython，下载的笔记本在任何 Jupyter 里都能运行；不在
IPython 内核里运行时什么也不做，只把值原样返回。
"""

import math
import numbers
import re

GLUE_PREFIX = "application/papermill.record/"
#: 原始值的 MIME 类型。名字以 ``+json`` 结尾：笔记本格式只允许这样的类型存放 JSON 对象
#: （``application/papermill.record/application/json`` 会让笔记本校验失败）。
VALUE_MIME = "application/vnd.attnbook.value+json"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def glue(name, value):
    """按名字记下 ``value``，并原样返回它。

    Args:
        name: 名字，英文字母、数字与下划线（同一页里不能重复）。
        value: 数（``int``、``float``、``bool``）、字符串，或由它们组成的列表、元组。
            NumPy 与 TensorFlow 的标量先转成 Python 的数。

    Returns:
        ``value``，便于写成 ``x = glue("x", compute())``。

    Raises:
        ValueError: 名字不合规，或值不是上面列出的类型。
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"glue 的名字只能由英文字母、数字与下划线组成，且不以数字开头；得到 {name!r}")
    plain = _plain(value)
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python without IPython: nothing to record into
        return value
    shell = get_ipython()
    if shell is None:
        return value
    from IPython.display import display

    bundle = {GLUE_PREFIX + "text/plain": _text(plain), GLUE_PREFIX + VALUE_MIME: {"value": _json(plain)}}
    display(bundle, raw=True, metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})
    return value


def _plain(value):
    """``value`` as Python numbers, strings and lists; anything else is a ValueError."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "numpy"):  # a TensorFlow tensor
        value = value.numpy()
    if hasattr(value, "tolist"):  # a NumPy array or scalar
        return _plain(value.tolist())
    raise ValueError(f"glue 只记数、字符串与它们的列表；得到 {type(value).__name__}")


def _text(value):
    """What ``{glue:text}`` shows: a number as Python writes it, a string as it is."""
    if isinstance(value, list):
        return "、".join(_text(v) for v in value)
    return value if isinstance(value, str) else repr(value)


def _json(value):
    """JSON has no NaN or infinity: they are stored as the strings "nan", "inf", "-inf"."""
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value
