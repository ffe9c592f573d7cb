"""为什么要除以 √d_k：分数的尺度对 softmax 的影响，实测。

查询与键的元素取自 N(0, 1) 时，维度为 d_k 的点积方差是 d_k。不缩放，分数随 √d_k 增大，
softmax 进入饱和区：一个权重趋近 1，softmax 输入处的梯度随维度变小。除以 √d_k，分数在任何维度下方差都是 1。
除以 √d_model = √(heads · d_k) 是多头里的一种隐性错误，它把分数再缩小 √heads 倍，于是在每个
维度下 softmax 都比应有的更平。
"""

import numpy as np

from ._tf import tf

# The three ways to scale the scores, each as a function of (d_k, heads).
SCALINGS = {
    "unscaled": lambda d_k, heads: 1.0,
    "head_depth": lambda d_k, heads: np.sqrt(d_k),  # the right one: √d_k of one head
    "d_model": lambda d_k, heads: np.sqrt(heads * d_k),  # the mistake: √d_model
}
#: :func:`measure_scaling` 对每个维度报告的统计量。
METRICS = ("max_weight", "entropy", "grad_norm", "grad_norm_median")
DEPTHS = tuple(2**i for i in range(2, 10))  # 4 .. 512


def softmax_stats(logits, upstream):
    """``softmax(logits)`` 的逐行统计量，``logits`` 形状为 ``(rows, n_k)``。

    返回一个浮点数字典，除最后一项外都是对各行的平均：``max_weight`` 是最大的权重；
    ``entropy`` 是熵，单位 nat，均匀分布为 ``log n_k``，独热为 0；``grad_norm`` 是
    ``sum(weights * upstream)`` 对 ``logits`` 的梯度范数，用 ``tf.GradientTape``
    穿过 softmax 求得；``grad_norm_median`` 是各行梯度范数的中位数（少数没有饱和的行
    会把均值撑高，中位数看的是典型的一行）。``upstream`` 与 ``logits`` 同形。计算用 float64。
    """
    logits = tf.constant(logits, tf.float64)  # float64: saturated gradients stay > 0
    with tf.GradientTape() as tape:
        tape.watch(logits)
        weights = tf.nn.softmax(logits, axis=-1)
        loss = tf.reduce_sum(weights * upstream)
    norms = np.linalg.norm(tape.gradient(loss, logits).numpy(), axis=-1)  # one per row
    w = weights.numpy()
    entropy = -np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0), axis=-1)
    return {"max_weight": float(w.max(-1).mean()), "entropy": float(entropy.mean()),
            "grad_norm": float(norms.mean()), "grad_norm_median": float(np.median(norms))}


def measure_scaling(depths=DEPTHS, heads=8, n_queries=256, n_keys=32, seed=0):
    """每头维度 d_k 逐渐增大时，三种缩放方式下的 softmax 统计量。

    对每个 ``d_k``，用固定种子从 N(0, 1) 抽出查询 ``(n_queries, d_k)``、键
    ``(n_keys, d_k)`` 与上游梯度 ``(n_queries, n_keys)``；三种缩放用的是同一批样本。
    ``heads`` 决定错误缩放里的 ``d_model = heads · d_k``。

    返回普通数据：``{"d_k": [...], "heads": heads, "n_keys": n_keys, "n_queries": n_queries,
    "unscaled": {metric: [...]}, "head_depth": {...}, "d_model": {...}}``，
    :data:`METRICS` 里的每个统计量在每个维度上各有一个值。``unscaled`` 是不缩放，
    ``head_depth`` 是除以 √d_k，``d_model`` 是除以 √d_model。
    """
    result = {"d_k": [int(d) for d in depths], "heads": heads, "n_keys": n_keys, "n_queries": n_queries,
              **{name: {metric: [] for metric in METRICS} for name in SCALINGS}}
    for d_k in result["d_k"]:
        rng = np.random.default_rng([seed, d_k])
        q, k = rng.normal(size=(n_queries, d_k)), rng.normal(size=(n_keys, d_k))
        upstream = rng.normal(size=(n_queries, n_keys))
        scores = q @ k.T
        for name, scale in SCALINGS.items():
            stats = softmax_stats(scores / scale(d_k, heads), upstream)
            for metric in METRICS:
                result[name][metric].append(stats[metric])
    return result
