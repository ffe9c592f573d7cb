"""成本账的测量：页面与 ``python -m attnbook.bench`` 共用的函数。

三组测量：本书的层对比 Keras 的层（:func:`measure_mha`），四种注意力变体
（:func:`measure_variants`），GRU 对比注意力（:func:`measure_rnn_vs_attention` 与
:func:`measure_sequence_memory`）。每个函数都返回普通数据（字典与列表），不写文件、不画图，
可以直接交给 :func:`attnbook.plots.rnn_vs_attention_time` 与 :func:`attnbook.plots.variant_costs`。
在子进程里运行的函数（``run_variant``、``prepare_variant`` 等）定义在模块一级，
:func:`attnbook.cost.peak_memory` 才能 pickle 它们。
"""

import functools
import statistics

import keras
import numpy as np

from . import cost
from ._tf import tf
from .attention import MiniMultiHeadAttention, scaled_dot_product_attention
from .efficient import chunked_attention, linear_attention, sliding_window_attention

CHUNK_SIZE = 512  # keys per block of chunked attention
WINDOW = 128  # sliding window: each query sees 2·128 + 1 keys
MATMUL_SIZE = 2048  # the reference matmul is MATMUL_SIZE × MATMUL_SIZE, float32

SEQUENCE_LAYERS = {  # kind -> a new layer (d_model, heads): GRU against attention
    "rnn": lambda d_model, heads: keras.layers.GRU(d_model, return_sequences=True),
    "attention": lambda d_model, heads: MiniMultiHeadAttention(d_model, heads),
}
VARIANTS = {
    "full": lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    "chunked": lambda q, k, v: chunked_attention(q, k, v, CHUNK_SIZE),
    "window": lambda q, k, v: sliding_window_attention(q, k, v, WINDOW),
    "linear": lambda q, k, v: linear_attention(q, k, v),
}


# --- the four attention variants -----------------------------------------------------


@functools.cache
def compiled_variant(name):
    """The ``tf.function`` of one entry of :data:`VARIANTS`: ``(q, k, v) -> output``."""
    if name not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {name!r}.")
    return tf.function(VARIANTS[name], autograph=False)


def random_qkv(batch, heads, n, d, seed=0):
    """Standard-normal query, key and value, each ``(batch, heads, n, d)`` float32."""
    rng = np.random.default_rng(seed)
    return tuple(tf.constant(rng.standard_normal((batch, heads, n, d), np.float32)) for _ in range(3))


def run_variant(name, query, key, value):
    """Run the compiled variant ``name`` (module-level, so ``cost.peak_memory`` can pickle it)."""
    return compiled_variant(name)(query, key, value)


def prepare_variant(name, batch, heads, n, d):
    """Inputs of shape ``(batch, heads, n, d)`` after one small warm-up run of ``name``.

    The warm-up loads the kernels and library code that any first call would load. The
    real call is still the first at its shape: its trace and first execution add a part
    that does not grow with ``n``, which pulls the slopes of small readings down.
    Warming up at the real shape would remove it, but would leave memory the call can
    reuse (see :func:`attnbook.cost.peak_memory`).
    """
    run_variant(name, *random_qkv(1, 1, 64, d, seed=1)).numpy()
    return random_qkv(batch, heads, n, d)


def measure_variants(lengths, d=64, heads=1, batch=1, repeats=3, memory=True, log=print):
    """每种变体在每个长度上的时间（以及峰值内存增长）。

    返回 ``{name: {"n": [...], "time_ms": [...], "peak_mib": [...] 或 None}}``；时间是
    ``tf.function`` 下前向计算的中位数，内存是一次调用期间常驻内存的增长，取三个读数的
    中位数，每个读数在新的子进程里测（见 :func:`attnbook.cost.peak_memory`）。先测完
    全部时间，再测内存：内存读数不受别的进程影响，可以几个子进程同时测，而计时不能。
    """
    results = {}
    for name in VARIANTS:
        rows = {"n": list(lengths), "time_ms": [], "peak_mib": None}
        for n in lengths:
            q, k, v = prepare_variant(name, batch, heads, n, d)
            timing = cost.time_call(run_variant, name, q, k, v, repeats=repeats, warmup=1)
            rows["time_ms"].append(timing.median_ms)
            log(f"  {name:8s} n={n:6d}  {timing.median_ms:9.2f} ms")
        results[name] = rows
    if memory:
        peaks = _peak_growth(run_variant, prepare_variant, VARIANTS, lengths, lambda name, n: (batch, heads, n, d))
        for name in VARIANTS:
            results[name]["peak_mib"] = peaks[name]
            log(f"  {name:8s} peak MiB: " + ", ".join(f"{m:.1f}" for m in results[name]["peak_mib"]))
    return results


#: Readings per point: a reading of a few MiB moves by about 1 MiB between child processes
#: (allocator and page granularity), enough to tip a slope; the median of three holds still.
MEMORY_READINGS = 3


def _peak_growth(run, prepare, names, lengths, sizes):
    """``{name: [MiB at each length]}``: the peak memory growth of ``run(name, *inputs)``,
    ``inputs = prepare(name, *sizes(name, n))``, the median of ``MEMORY_READINGS`` readings,
    each in a new child process."""
    calls = [(run, (name,), prepare, (name, *sizes(name, n)))
             for name in names for n in lengths for _ in range(MEMORY_READINGS)]
    peaks = iter(cost.peak_memories(calls))
    def point():
        return statistics.median(next(peaks).growth_mib for _ in range(MEMORY_READINGS))

    return {name: [point() for _ in lengths] for name in names}


# --- MiniMultiHeadAttention against Keras ---------------------------------------------


def _forward_backward(layer, call, input_signature=None):
    def step(x):
        with tf.GradientTape() as tape:
            y = call(x)
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, layer.trainable_variables)
        return loss, grads

    return tf.function(step, autograph=False, input_signature=input_signature)


def _interleaved(calls, rounds, repeats):
    """Time each of ``calls`` (name -> (fn, args)) in turn, ``rounds`` times over, so that
    a change in the machine's load is spread over the rounds (not guaranteed to hit each
    call alike). Returns median seconds."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (fn, args) in calls.items():
            times[name] += cost.time_call(fn, *args, repeats=repeats, warmup=1).times_s
    return {name: float(np.median(t)) for name, t in times.items()}


def measure_mha(batch=8, n=512, d_model=256, heads=8, rounds=3, repeats=5, log=print):
    """并排比较 ``MiniMultiHeadAttention`` 与 ``keras.layers.MultiHeadAttention``。

    返回普通数据：两层每次前向、每次前向加反向调用的秒数中位数，二者之比（Keras 的
    时间除以本书的时间），前向计算的浮点运算量，同一次运行里测得的大矩阵乘法的速率，
    以及前向计算的速率占它的比例。
    """
    keras.utils.set_random_seed(0)
    x = tf.random.stateless_normal((batch, n, d_model), seed=(0, 0))
    mini = MiniMultiHeadAttention(d_model, heads)
    mini(x)
    ref = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=mini.depth)  # same shape, own weights
    ref(x, x)
    a = tf.random.stateless_normal((MATMUL_SIZE, MATMUL_SIZE), seed=(1, 2))  # reference: 2·size³ FLOPs
    forward = {"mini": (tf.function(lambda x: mini(x), autograph=False), (x,)),
               "keras": (tf.function(lambda x: ref(x, x), autograph=False), (x,)),
               "matmul": (tf.function(tf.matmul, autograph=False), (a, a))}
    both = {"mini": (_forward_backward(mini, lambda x: mini(x)), (x,)),
            "keras": (_forward_backward(ref, lambda x: ref(x, x)), (x,))}
    log("  forward (and the matmul reference) ...")
    fwd = _interleaved(forward, rounds, repeats)
    rate = 2 * MATMUL_SIZE**3 / fwd.pop("matmul") / 1e9
    log("  forward + backward ...")
    fb = _interleaved(both, rounds, repeats)
    flops = cost.mha_forward_flops(batch, n, d_model)
    return {
        "shape": {"batch": batch, "n": n, "d_model": d_model, "heads": heads},
        "forward_s": fwd, "forward_backward_s": fb,
        "forward_speedup_vs_keras": fwd["keras"] / fwd["mini"],
        "forward_backward_speedup_vs_keras": fb["keras"] / fb["mini"],
        "forward_gflop": flops / 1e9, "forward_gflops": flops / fwd["mini"] / 1e9,
        "matmul_gflops": rate, "forward_fraction_of_matmul": flops / fwd["mini"] / 1e9 / rate,
    }


# --- GRU against attention -----------------------------------------------------------


def measure_rnn_vs_attention(lengths, batch=8, d_model=64, heads=4, repeats=5, rounds=2, training=True,
                             log=print):
    """Keras 的 GRU 与 ``MiniMultiHeadAttention`` 在每个长度上的前向与训练步时间。

    GRU 必须走 ``n`` 个前后依赖的时步；注意力一次给所有位置打分。输入的形状是
    ``(batch, n, d_model)``。训练步是一次前向加反向（损失为输出的平方和，对层的参数
    求梯度，GRU 要沿时间反向传播）。每个长度上，各个函数依次计时一组（预热 1 次、
    计时 ``repeats`` 次），这样轮流 ``rounds`` 轮，取全部计时的中位数：机器负载的变化
    分摊到各轮，但不保证落在各个函数上一样多。返回的字典有 ``"n"``、``"rnn_ms"``、``"attention_ms"`` 三列；``training``
    为真时还有 ``"rnn_train_ms"`` 与 ``"attention_train_ms"`` 两列。时间以毫秒计。
    """
    keras.utils.set_random_seed(0)
    layers = {kind: make(d_model, heads) for kind, make in SEQUENCE_LAYERS.items()}
    # Any length, one trace: the lengths share one compiled function per layer.
    signature = [tf.TensorSpec((batch, None, d_model), tf.float32)]
    fns = {name: tf.function(lambda x, layer=layer: layer(x), autograph=False, input_signature=signature)
           for name, layer in layers.items()}
    if training:
        fns |= {f"{name}_train": _forward_backward(layer, lambda x, layer=layer: layer(x), signature)
                for name, layer in layers.items()}
    rows = {"n": list(lengths)} | {f"{name}_ms": [] for name in fns}
    for n in rows["n"]:
        x = tf.random.stateless_normal((batch, n, d_model), seed=(0, n))
        seconds = _interleaved({k: (fn, (x,)) for k, fn in fns.items()}, rounds=rounds, repeats=repeats)
        for name in fns:
            rows[f"{name}_ms"].append(1e3 * seconds[name])
        log(f"  n={n:5d}  " + "  ".join(f"{name} {1e3 * seconds[name]:8.2f} ms" for name in fns))
    return rows


@functools.cache
def sequence_layer(kind, d_model=64, heads=4):
    """一个新建的 GRU（``kind="rnn"``）或 MiniMultiHeadAttention（``kind="attention"``）的 ``tf.function``。"""
    keras.utils.set_random_seed(0)
    if kind not in SEQUENCE_LAYERS:
        raise ValueError(f"kind must be 'rnn' or 'attention', got {kind!r}.")
    layer = SEQUENCE_LAYERS[kind](d_model, heads)
    return tf.function(lambda x: layer(x), autograph=False)


def run_sequence_layer(kind, x):
    """用 :func:`sequence_layer` 的层处理 ``x``；定义在模块一级，子进程才能 pickle 它。"""
    return sequence_layer(kind, x.shape[-1])(x)


def prepare_sequence_layer(kind, batch, n, d_model):
    """先用一个小输入预热这一层，再返回形状为 ``(batch, n, d_model)`` 的输入。

    预热只加载算子与库；真正的调用仍是这个形状下的第一次，追踪与第一次执行会带来一段
    与 ``n`` 无关的内存开销，读数小时它把斜率往下拉（见 :func:`prepare_variant`）。
    """
    run_sequence_layer(kind, tf.zeros((1, 8, d_model))).numpy()
    return (tf.random.stateless_normal((batch, n, d_model), seed=(0, n)),)


def measure_sequence_memory(lengths, batch=1, d_model=64):
    """GRU 与注意力前向一次的峰值内存增长（MiB），取三个读数的中位数，每个读数在新的子进程里测。

    注意力要存（批次，头，n，n）的打分表，GRU 每一步只需固定大小的状态（输出序列与
    按序列长度存放的中间张量随 n 线性增长）。每个读数还含一段与 n 无关的开销，见
    ``prepare_sequence_layer`` 的说明。返回的字典有 ``"n"``、``"rnn_mib"`` 与
    ``"attention_mib"`` 三列。
    """
    peaks = _peak_growth(run_sequence_layer, prepare_sequence_layer, SEQUENCE_LAYERS, lengths,
                         lambda kind, n: (batch, n, d_model))
    return {"n": list(lengths)} | {f"{kind}_mib": mib for kind, mib in peaks.items()}
