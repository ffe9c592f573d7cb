"""成本账：计时、峰值内存增长、按 n² 增长的打分表，以及运算量的估算。

每个函数都返回普通数据（数字、元组、字典，或能用 ``dataclasses.asdict`` 转成字典的
冻结数据类），页面可以直接打印，基准测试可以写成 JSON。计时是运行它的那台机器上的
墙钟时间，只能在同一次运行里并排比较。
"""

import dataclasses
import multiprocessing
import statistics
import time
import traceback

import numpy as np

from . import _checks, _child_process

# --- the ledger: plain arithmetic ----------------------------------------------------


def score_table(n, batch=1, heads=1, bytes_per_score=4, n_k=None):
    """完整打分表 ``(batch, heads, n, n_k)`` 的大小；默认 ``n_k = n``，即自注意力。

    返回一个字典：``pairs`` 是一个序列、一个头里的查询-键对数 n · n_k；``entries``
    是 batch · heads · pairs；``bytes`` 与 ``mib`` 按每个分数 ``bytes_per_score`` 字节
    计算（float32 为 4）；另外原样带回 ``n``、``n_k``、``batch``、``heads``。
    ``score_table(1000)["pairs"]`` 是 1,000,000。参数不是正整数时抛出 ``ValueError``。
    """
    n_k = n if n_k is None else n_k
    for name, value in [("n", n), ("n_k", n_k), ("batch", batch), ("heads", heads),
                        ("bytes_per_score", bytes_per_score)]:
        _checks.positive_int(name, value)
    pairs = n * n_k
    entries = batch * heads * pairs
    nbytes = entries * bytes_per_score
    return {"n": n, "n_k": n_k, "batch": batch, "heads": heads, "pairs": pairs,
            "entries": entries, "bytes": nbytes, "mib": nbytes / 2**20}


def mha_forward_flops(batch, n, d_model, n_k=None):
    """多头注意力一次前向计算的浮点运算次数。

    计入四个投影（查询、键、值、输出，各 ``2 · 行数 · d_model²``，查询与输出的行数是
    ``batch · n``，键与值的是 ``batch · n_k``）和两个乘积 ``Q Kᵀ`` 与 ``weights · V``
    （各 ``2 · batch · n · n_k · d_model``，已对各头求和）。softmax、偏置和变形不计入，
    所以这是工作量的下界。一次乘加算 2 次运算。
    """
    n_k = n if n_k is None else n_k
    for name, value in [("batch", batch), ("n", n), ("d_model", d_model), ("n_k", n_k)]:
        _checks.positive_int(name, value)
    projections = 2 * batch * d_model**2 * (2 * n + 2 * n_k)
    products = 2 * (2 * batch * n * n_k * d_model)
    return projections + products


def loglog_slope(x, y):
    """``log y`` 对 ``log x`` 的最小二乘斜率：若 y ∝ xᵏ，得到 k。

    线性成本约为 1，打分表约为 2。``x`` 与 ``y`` 须是等长的一维序列，``x`` 至少有两个
    不同的正值，``y`` 全为正，否则抛出 ``ValueError``。
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and equally long, got {x.shape} and {y.shape}.")
    if np.unique(x).size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError(f"need at least two distinct positive x and positive y, got x={x.tolist()} "
                         f"and y={y.tolist()}.")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def segment_slopes(x, y):
    """相邻两点之间的双对数斜率：第 i 项是从 ``x[i]`` 到 ``x[i + 1]`` 这一段的
    ``loglog_slope``。

    :func:`loglog_slope` 用一条直线拟合全部点，会把曲线的形状抹平：一段平、一段陡的
    曲线，拟合出的斜率可能落在两者之间，哪一段都不像。这里逐段给出斜率，看曲线在哪里
    上升、在哪里下降。``x`` 与 ``y`` 的要求与 :func:`loglog_slope` 相同，并且 ``x``
    须严格递增，否则抛出 ``ValueError``。

    Returns:
        ``len(x) - 1`` 个浮点数的列表。
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    loglog_slope(x, y)  # the same checks of shape and sign
    if np.any(np.diff(x) <= 0):
        raise ValueError(f"x must be strictly increasing, got {x.tolist()}.")
    return [loglog_slope(x[i:i + 2], y[i:i + 2]) for i in range(len(x) - 1)]


# --- timing --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Timing:
    """一次调用的墙钟时间（秒）：中位数与每次重复的时间，不含预热。"""

    median_s: float
    times_s: tuple
    warmup: int

    @property
    def median_ms(self):
        return 1e3 * self.median_s


def time_call(fn, *args, repeats=7, warmup=2, **kwargs):
    """给 ``fn(*args, **kwargs)`` 计时：先预热 ``warmup`` 次，再计时 ``repeats`` 次。

    预热调用吸收一次性的开销，例如 ``tf.function`` 的追踪。每次计时的调用都等到结果
    算完为止（TensorFlow 的结果用 ``.numpy()`` 取回：这一步把结果复制成 NumPy 数组，
    所以计时里也含这次复制，输出越大，它占的份额越大）。返回一个 :class:`Timing`；
    中位数能抵消个别一次慢；机器持续繁忙时，中位数也会跟着变。``repeats`` 不是正整数
    或 ``warmup`` 不是非负整数时，抛出 ``ValueError``。
    """
    _checks.positive_int("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer, got {warmup!r}.")
    for _ in range(warmup):
        _wait(fn(*args, **kwargs))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        _wait(fn(*args, **kwargs))
        times.append(time.perf_counter() - start)
    return Timing(median_s=statistics.median(times), times_s=tuple(times), warmup=warmup)


def _wait(result):
    """Block until every tensor in ``result`` (any nesting) has been computed."""
    if isinstance(result, (list, tuple, dict)):
        for item in result.values() if isinstance(result, dict) else result:
            _wait(item)
    elif hasattr(result, "numpy"):
        result.numpy()


# --- peak memory ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PeakMemory:
    """一次调用在新进程里占用的常驻内存，单位为字节。

    ``baseline_bytes`` 是调用前（``setup`` 之后）的基线，``peak_bytes`` 是峰值，
    ``growth_bytes`` 是二者之差，即书中说的峰值内存增长。``method`` 说明它们是怎么读到的：
    在 Linux 上通常是调用前的常驻内存与调用期间的峰值常驻内存；退回 ``ru_maxrss`` 时，
    峰值是进程生命期内的最大值，其他系统上基线也是（见 :func:`peak_memory`）。
    """

    baseline_bytes: int
    peak_bytes: int
    growth_bytes: int
    method: str

    @property
    def growth_mib(self):
        return self.growth_bytes / 2**20


def peak_memory(fn, *args, setup=None, setup_args=(), timeout_s=600):
    """测量 ``fn(*args, *setup(*setup_args))`` 的峰值常驻内存与峰值内存增长。

    调用在一个新的子进程里运行，所以本进程已占的内存、本进程之前的测量留在分配器里的
    内存，都不会掩盖或抬高结果；子进程从一个已导入 TensorFlow 的 forkserver 分叉而来（见
    ``attnbook._child_process``）。可选的 ``setup`` 先在同一个子进程里运行，例如构造输入、
    预热，它本身的用量不计入结果；但它释放后留在分配器里的内存，这次调用可以复用而不再
    增长：留下的可复用内存有多少，峰值内存增长就可能少算多少。所以预热只宜用远小于被测
    尺寸的输入；在接近、等于或大于被测的尺寸上预热过，增长会被大幅低估，甚至接近 0。
    ``fn``、``setup`` 与所有参数都必须能被 pickle：用模块级函数和普通数据，不能用 lambda。

    TensorFlow 不经过 Python 的分配器申请内存，``tracemalloc`` 看不到它，操作系统统计的
    常驻页面却看得到。在 Linux 上，峰值计数器（VmHWM）通常在调用前一刻清零
    （``/proc/self/clear_refs``）；其他系统上用进程生命期内的最大值（``ru_maxrss``）：
    峰值只会偏大，调用前的基线也取的是这个最大值（``setup`` 包括在内），所以峰值内存
    增长可能偏小，甚至为 0。在 Linux 上，``clear_refs`` 写不进时（某些容器里），峰值同样
    退回 ``ru_maxrss``，基线却是当前常驻内存，增长可能偏大，但不会偏小。``PeakMemory.method`` 记下
    这一次用的是哪一种。

    返回一个 :class:`PeakMemory`。调用失败或超过 ``timeout_s`` 秒时抛出
    ``RuntimeError``。
    """
    receiver, sender = multiprocessing.Pipe(duplex=False)
    process = _child_process.start(_measure_in_child, sender, fn, args, setup, setup_args)
    sender.close()
    try:
        if not receiver.poll(timeout_s):
            raise RuntimeError(f"peak_memory: the call did not finish within {timeout_s} s.")
        status, payload = receiver.recv()
    except EOFError:
        status, payload = "error", "the measuring process died (out of memory?)"
    finally:
        process.join(timeout=10)
        _child_process.end(process)  # timed out, or stuck on the way out
        receiver.close()
    if status == "error":
        raise RuntimeError(f"peak_memory: the call failed in the child process:\n{payload}")
    return PeakMemory(**payload)


def start_measuring():
    """在后台启动测内存用的 forkserver，让第一次 :func:`peak_memory` 不必等它导入 TensorFlow。

    forkserver 在自己的进程里导入 attnbook，本进程照常往下执行；不支持 forkserver 的
    平台上什么也不做。
    """
    _child_process.ensure_running()


def peak_memories(calls, workers=2):
    """对 ``calls`` 里的每个 ``(fn, args, setup, setup_args)`` 调用 :func:`peak_memory`。

    每个读数都在自己的子进程里测，互不干扰，所以最多 ``workers`` 个子进程同时运行。
    返回与 ``calls`` 同序的 :class:`PeakMemory` 列表。
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(peak_memory, fn, *args, setup=setup, setup_args=setup_args)
                   for fn, args, setup, setup_args in calls]
        return [future.result() for future in futures]


def _measure_in_child(sender, fn, args, setup, setup_args):
    try:
        extra = tuple(setup(*setup_args)) if setup is not None else ()
        reset = _reset_peak()
        method = "VmHWM after clear_refs" if reset else "ru_maxrss"
        baseline = _resident_bytes()
        _wait(fn(*args, *extra))
        peak = 1024 * _proc_status_kib("VmHWM") if reset else _maxrss_bytes()
        payload = dict(baseline_bytes=baseline, peak_bytes=peak,
                       growth_bytes=max(0, peak - baseline), method=method)
        sender.send(("ok", payload))
    except BaseException:  # noqa: BLE001  (report everything to the parent)
        sender.send(("error", traceback.format_exc()))
    finally:
        sender.close()


def _proc_status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def _reset_peak():
    """Reset the kernel's peak-RSS counter of this process; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _resident_bytes():
    try:
        return 1024 * _proc_status_kib("VmRSS")
    except OSError:
        return _maxrss_bytes()


def _maxrss_bytes():
    import resource
    import sys

    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else 1024 * maxrss  # macOS: bytes; else KiB


def format_bytes(nbytes):
    """用能让数值不小于 1 的最大二进制单位写出字节数，如 ``'39.1 KiB'``。"""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}.")
    value, unit = float(nbytes), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"


__all__ = ["PeakMemory", "Timing", "format_bytes", "loglog_slope", "mha_forward_flops", "peak_memories",
           "peak_memory", "segment_slopes", "start_measuring", "score_table", "time_call"]
