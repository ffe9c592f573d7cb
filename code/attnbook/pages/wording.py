"""由测得的数值生成编者文字里的短语：快慢、长度列表这类词从数字里算出来，不手写。

计时每次构建都会变，所以页面不对计时下断言（那会让构建时好时坏），而是让句子的
措辞跟着数值走：``faster_or_slower(3.1, 7.7)`` 是 ``"更快"``，数值反过来就是 ``"更慢"``。
"""

import math


def listing(values, empty="无"):
    """``[64, 128, 256]`` 写成 ``"64、128 和 256"``；空列表写成 ``empty``。"""
    words = [str(v) for v in values]
    if len(words) < 2:
        return words[0] if words else empty
    return "、".join(words[:-1]) + " 和 " + words[-1]


def faster_or_slower(ms, other_ms):
    """用时 ``ms`` 比 ``other_ms`` 少是 ``"更快"``，多是 ``"更慢"``，相等是 ``"一样快"``。"""
    if ms < other_ms:
        return "更快"
    if ms > other_ms:
        return "更慢"
    return "一样快"


def where_faster(lengths, ms, other_ms, other):
    """在哪些长度上 ``ms`` 比 ``other_ms`` 快，写成谓语，接在主语之后：
    ``"在测到的每个长度（64 和 128）上都比 GRU 快"``、``"只在 64 上比 GRU 快"``，
    或 ``"在测到的每个长度（64 和 128）上都不比 GRU 快"``。

    Args:
        lengths: 序列长度，形如 ``[64, 128, 256]``。
        ms、other_ms: 与 ``lengths`` 等长的用时（毫秒）。
        other: 被比较的一方，如 ``"GRU"``。
    """
    if not len(lengths) == len(ms) == len(other_ms):
        raise ValueError(f"长度与两列用时必须一样多；得到 {len(lengths)}、{len(ms)}、{len(other_ms)}")
    if not lengths:
        raise ValueError("至少要有一个长度")
    faster = [n for n, a, b in zip(lengths, ms, other_ms) if a < b]
    if not faster:
        return f"在测到的每个长度（{listing(lengths)}）上都不比 {other} 快"
    if len(faster) == len(lengths):
        return f"在测到的每个长度（{listing(faster)}）上都比 {other} 快"
    return f"只在 {listing(faster)} 上比 {other} 快"


def agreement(max_diff):
    """两份结果的最大绝对差写成短语，接在“两者”“结果与一次算完”之后。

    ``0.0`` 是 ``"逐位相同（本次构建的最大差为 0）"``；其余是
    ``"在 float32 舍入之内一致（本次构建的最大差为 3.6e-07）"``。差超过 ``1e-5`` 已经不是
    float32 的舍入，抛出 ``ValueError``，负数与 NaN 也一样。
    """
    max_diff = float(max_diff)
    if not 0.0 <= max_diff < 1e-5:  # NaN fails both comparisons
        raise ValueError(f"最大差必须在 [0, 1e-5) 之内才谈得上舍入；得到 {max_diff!r}")
    if max_diff == 0.0:
        return "逐位相同（本次构建的最大差为 0）"
    return f"在 float32 舍入之内一致（本次构建的最大差为 {max_diff:.1e}）"


def growth(lengths, values):
    """``values`` 随长度怎样变，写成谓语，接在“吞吐”这样的主语之后。

    看整个范围两端之间的双对数斜率 s = log(末值/首值) / log(末长/首长)，与论断核对表
    判「训练吞吐随序列长度近乎线性扩展」的界相同（``book/claims.yml`` 的
    ``training-throughput``；``tests/test_wording.py`` 核对两者一致）：

    - 0.7 ≤ s ≤ 1.3：``"近乎线性地增长"``；s > 1.3：``"比线性增长得还快"``；
    - 0.1 < s < 0.7：``"在增长，但比线性慢"``；
    - -0.1 ≤ s ≤ 0.1：``"几乎没有变化"``；s < -0.1：``"不升反降"``。

    Args:
        lengths: 递增的序列长度，形如 ``[64, 128, 256]``。
        values: 与 ``lengths`` 等长的正数，例如每秒处理的位置数。
    """
    if len(lengths) != len(values) or len(lengths) < 2:
        raise ValueError(f"长度与数值必须一样多，且至少两个；得到 {len(lengths)}、{len(values)}")
    if not lengths[-1] > lengths[0] > 0 or not all(v > 0 for v in values):
        raise ValueError(f"长度须递增且为正，数值须为正；得到 {lengths}、{values}")
    slope = math.log(values[-1] / values[0]) / math.log(lengths[-1] / lengths[0])
    if slope > 1.3:
        return "比线性增长得还快"
    if slope >= 0.7:
        return "近乎线性地增长"
    if slope > 0.1:
        return "在增长，但比线性慢"
    return "不升反降" if slope < -0.1 else "几乎没有变化"


def growth_between_ends(lengths, values):
    """:func:`growth` 加上它看的范围，写成状语加谓语，接在“吞吐”之后：
    ``"从 n = 64 到 512，两端相比不升反降"``。中间不单调时再加 ``"（中间有升有降）"``，
    免得读者把两端的比较读成一路如此。参数与 :func:`growth` 相同。
    """
    phrase = f"从 n = {lengths[0]} 到 {lengths[-1]}，两端相比{growth(lengths, values)}"
    steps = [b - a for a, b in zip(values, values[1:])]
    if any(d > 0 for d in steps) and any(d < 0 for d in steps):
        phrase += "（中间有升有降）"
    return phrase
