"""由测得的数值生成编者文字里的短语：快慢、长度列表这类词从数字里算出来，不手写。

计时每次构建都会变，所以页面不对计时下断言（那会让构建时好时坏），而是让句子的
措辞跟着数值走：``faster_or_slower(3.1, 7.7)`` 是 ``"更快"``，数值反过来就是 ``"更慢"``。
"""


def listing(values, empty="无"):
    """``[64, 128, 256]`` 写成 ``"64、128 和 256"``；空列表写成 ``empty``。"""
    words = [str(v) for v in values]
    if not words:
        return empty
    if len(words) == 1:
        return words[0]
    return "、".join(words[:-1]) + " 和 " + words[-1]


def faster_or_slower(ms, other_ms):
    """用时 ``ms`` 比 ``other_ms`` 少是 ``"更快"``，多是 ``"更慢"``，相等是 ``"一样快"``。"""
    if ms < other_ms:
        return "更快"
    if ms > other_ms:
        return "更慢"
    return "一样快"


def where_faster(lengths, ms, other_ms):
    """``ms`` 比 ``other_ms`` 快的那些长度，写成短语；一个也没有时说“没有一个长度”。

    Args:
        lengths: 序列长度，形如 ``[64, 128, 256]``。
        ms、other_ms: 与 ``lengths`` 等长的用时（毫秒）。
    """
    if not len(lengths) == len(ms) == len(other_ms):
        raise ValueError(f"长度与两列用时必须一样多；得到 {len(lengths)}、{len(ms)}、{len(other_ms)}")
    faster = [n for n, a, b in zip(lengths, ms, other_ms) if a < b]
    if not faster:
        return "没有一个长度"
    if len(faster) == len(lengths):
        return f"每个长度（{listing(faster)}）"
    return f"只有 {listing(faster)}"
