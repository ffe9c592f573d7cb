"""参考解答：每道编程题一个，名字与练习要求的一致。

书里用 literalinclude 展示这些函数，并用 ``check_by_name`` 在构建时检查它们。
它们只用 TensorFlow 的基本算子，不调用 attnbook 里被检查的参考实现。
"""

from .._tf import tf
from .buggy import BuggyMultiHeadAttention


def attention_shapes(batch, n_q, n_k, d_model, num_heads):
    """预测多头交叉注意力每一步的形状，不运行层。

    Args:
        batch: 批次大小。
        n_q: 查询序列（``x``）的长度。
        n_k: 键和值序列（``context``）的长度。
        d_model: 模型宽度，能被 ``num_heads`` 整除。
        num_heads: 头数。

    Returns:
        dict: ``query``、``key``、``value``、``scores``、``output`` 各自的
        形状（整数元组）。
    """
    depth = d_model // num_heads  # 每头维度
    return {
        "query": (batch, num_heads, n_q, depth),
        "key": (batch, num_heads, n_k, depth),
        "value": (batch, num_heads, n_k, depth),
        "scores": (batch, num_heads, n_q, n_k),  # 每个头一张 n_q × n_k 的表
        "output": (batch, n_q, d_model),  # 各头拼回 d_model，再经输出投影
    }


def scaled_dot_product_attention(query, key, value, mask=None):
    """缩放点积注意力：softmax(Q Kᵀ / √d_k) V。

    Args:
        query: 查询，``(..., n_q, d_k)``。
        key: 键，``(..., n_k, d_k)``。
        value: 值，``(..., n_k, d_v)``。
        mask: 布尔掩码，可广播到 ``(..., n_q, n_k)``；True 表示可以看。

    Returns:
        tuple: ``(output, weights)``，形状 ``(..., n_q, d_v)`` 与
        ``(..., n_q, n_k)``。被遮住的权重为 0，整行被遮住时输出也是 0。
    """
    d_k = tf.cast(tf.shape(key)[-1], query.dtype)
    scores = tf.einsum("...qd,...kd->...qk", query, key) / tf.sqrt(d_k)
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)  # 被遮住的键分不到权重
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        # 整行都被遮住时得到全 0，而不是均匀分配
        weights = tf.where(mask, weights, 0.0)
    output = tf.einsum("...qk,...kv->...qv", weights, value)
    return output, weights


def split_heads(x, num_heads):
    """把最后一维拆成多个头，头轴放在序列轴前面。

    Args:
        x: ``(batch, seq, d_model)``，``d_model`` 能被 ``num_heads`` 整除。
        num_heads: 头数。

    Returns:
        ``(batch, num_heads, seq, d_model // num_heads)``。
    """
    batch, seq, d_model = x.shape
    x = tf.reshape(x, (batch, seq, num_heads, d_model // num_heads))
    return tf.transpose(x, (0, 2, 1, 3))  # 把头轴换到序列轴前面


def merge_heads(x):
    """:func:`split_heads` 的逆：把各个头的输出拼回最后一维。

    Args:
        x: ``(batch, num_heads, seq, depth)``。

    Returns:
        ``(batch, seq, num_heads * depth)``。
    """
    batch, heads, seq, depth = x.shape
    x = tf.transpose(x, (0, 2, 1, 3))  # 先把序列轴换回头轴前面
    return tf.reshape(x, (batch, seq, heads * depth))


class FixedMultiHeadAttention(BuggyMultiHeadAttention):
    """修好的层：分数按每头维度 √depth 缩放，其余与有错的层相同。"""

    def attend(self, q, k, v):
        """每个头的注意力。

        Args:
            q: ``(batch, heads, n_q, depth)``。
            k: ``(batch, heads, n_k, depth)``。
            v: ``(batch, heads, n_k, depth)``。

        Returns:
            tuple: 输出 ``(batch, heads, n_q, depth)`` 与注意力权重
            ``(batch, heads, n_q, n_k)``。
        """
        scores = tf.matmul(q, k, transpose_b=True)
        depth = tf.cast(self.depth, scores.dtype)
        scores = scores / tf.math.sqrt(depth)  # √depth，不是 √d_model
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.matmul(weights, v), weights


def shape_test(layer_cls):
    """检查一个多头注意力层在自注意力与交叉注意力下的输出和权重形状。

    Args:
        layer_cls: 层的类，用 ``layer_cls(d_model, num_heads)`` 构造。

    Raises:
        AssertionError: 某个形状不对。
    """
    # n_q ≠ n_k，heads > 1：错误才藏不住
    batch, n_q, n_k, d_model, heads = 2, 5, 7, 16, 4
    layer = layer_cls(d_model, heads)
    x = tf.random.normal((batch, n_q, d_model))
    context = tf.random.normal((batch, n_k, d_model))

    out, weights = layer(x, return_attention_scores=True)
    expect_shape("自注意力的输出", out, (batch, n_q, d_model))
    expect_shape("自注意力的注意力权重", weights, (batch, heads, n_q, n_q))

    out, weights = layer(x, context, return_attention_scores=True)
    expect_shape("交叉注意力的输出", out, (batch, n_q, d_model))
    expect_shape("交叉注意力的注意力权重", weights, (batch, heads, n_q, n_k))


def expect_shape(what, tensor, shape):
    """``tensor`` 的形状不是 ``shape`` 时抛出 ``AssertionError``。

    Args:
        what: 报告里对这个张量的称呼，如 ``"自注意力的输出"``。
        tensor: 要检查的张量。
        shape: 期望的形状（整数元组）。

    Raises:
        AssertionError: 形状不对，报告期望与实际的形状。
    """
    # 用 raise 而不是 assert：python -O 会删掉 assert，测试就什么也不查了
    got = tuple(tensor.shape)
    if got != shape:
        raise AssertionError(f"{what}形状是 {got}，应为 {shape}")


def cross_attention(x, context, wq, wk, wv):
    """单头交叉注意力：查询来自 ``x``，键和值来自 ``context``。

    Args:
        x: ``(batch, n_q, d_x)``。
        context: ``(batch, n_k, d_c)``。
        wq: 查询的投影矩阵，``(d_x, d_k)``。
        wk: 键的投影矩阵，``(d_c, d_k)``。
        wv: 值的投影矩阵，``(d_c, d_v)``。

    Returns:
        tuple: ``(output, weights)``，形状 ``(batch, n_q, d_v)`` 与
        ``(batch, n_q, n_k)``。
    """
    q = x @ wq  # 查询来自 x：(batch, n_q, d_k)
    k = context @ wk  # 键来自 context：(batch, n_k, d_k)
    v = context @ wv  # 值也来自 context：(batch, n_k, d_v)
    d_k = tf.cast(q.shape[-1], q.dtype)
    scores = tf.einsum("bqd,bkd->bqk", q, k) / tf.sqrt(d_k)
    weights = tf.nn.softmax(scores, axis=-1)  # (batch, n_q, n_k)
    return weights @ v, weights


def padding_mask(lengths, max_len):
    """填充掩码：真实位置为 True，填充位置为 False。

    Args:
        lengths: 每条序列的真实长度，``(batch,)``。
        max_len: 填充后的长度。

    Returns:
        布尔张量 ``(batch, 1, max_len)``，可广播到 ``(batch, n_q, max_len)``。
    """
    lengths = tf.cast(lengths, tf.int32)  # 与 tf.range 同一种整数类型
    positions = tf.range(max_len)  # (max_len,)
    real = positions[None, :] < lengths[:, None]  # (batch, max_len)
    return real[:, None, :]  # (batch, 1, max_len)：对每个查询都一样


def decoder_mask(lengths, n):
    """解码器自注意力的掩码：既不看未来，也不看填充。

    Args:
        lengths: 每条序列的真实长度，``(batch,)``。
        n: 序列长度（查询与键相同）。

    Returns:
        布尔张量 ``(batch, n, n)``：第 i 个查询可以看第 j 个键，当且仅当
        ``j <= i`` 并且 ``j < lengths[b]``。
    """
    i = tf.range(n)[:, None]  # 查询位置
    j = tf.range(n)[None, :]  # 键位置
    causal = j <= i  # (n, n)：不看未来
    lengths = tf.cast(lengths, tf.int32)[:, None, None]
    real = j < lengths  # (batch, 1, n)：不看填充
    return causal & real  # (batch, n, n)


def score_table_bytes(n_q, n_k, batch=1, heads=1, dtype="float32"):
    """一张 ``(batch, heads, n_q, n_k)`` 的打分表占多少字节。

    Args:
        n_q: 查询的个数。
        n_k: 键的个数。
        batch: 批次大小。
        heads: 头数。
        dtype: 分数的类型，字符串（如 ``"bfloat16"``）或 ``tf.DType``。

    Returns:
        int: 字节数。
    """
    # float32 每个数 4 字节，bfloat16 2 字节
    bytes_per_score = tf.as_dtype(dtype).size
    return batch * heads * n_q * n_k * bytes_per_score


def linear_attention(query, key, value):
    """非因果的线性注意力，特征映射 φ(x) = elu(x) + 1。

    Args:
        query: ``(..., n_q, d_k)``。
        key: ``(..., n_k, d_k)``。
        value: ``(..., n_k, d_v)``。

    Returns:
        ``(..., n_q, d_v)``；计算中没有 n_q × n_k 的张量。
    """
    phi_q = tf.nn.elu(query) + 1.0  # φ(x) = elu(x) + 1，处处为正
    phi_k = tf.nn.elu(key) + 1.0
    # φ(K)ᵀV：(..., d_k, d_v)，与 n 无关
    kv = tf.einsum("...kd,...kv->...dv", phi_k, value)
    z = tf.reduce_sum(phi_k, axis=-2)  # Σ_j φ(k_j)：(..., d_k)
    numerator = tf.einsum("...qd,...dv->...qv", phi_q, kv)
    denominator = tf.einsum("...qd,...d->...q", phi_q, z)[..., None]
    return numerator / denominator
