"""参考答案：每个有检查器的练习一个，名字与练习要求的一致。

书里用 literalinclude 展示这些函数；它们只用 TensorFlow 的基本算子，不调用 attnbook
里被检查的参考实现。``check("4.5.2", solutions.scaled_dot_product_attention)`` 会通过。
"""

from .._tf import tf
from .buggy import BuggyMultiHeadAttention


def attention_shapes(batch, n_q, n_k, d_model, num_heads):
    depth = d_model // num_heads  # 每头维度
    return {
        "query": (batch, num_heads, n_q, depth),
        "key": (batch, num_heads, n_k, depth),
        "value": (batch, num_heads, n_k, depth),
        "scores": (batch, num_heads, n_q, n_k),  # 每个头一张 n_q × n_k 的表
        "output": (batch, n_q, d_model),  # 各头拼回 d_model，再经输出投影
    }


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = tf.cast(tf.shape(key)[-1], query.dtype)
    scores = tf.einsum("...qd,...kd->...qk", query, key) / tf.sqrt(d_k)
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)  # 被遮住的键分不到权重
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)  # 整行都被遮住时得到全 0，而不是均匀分配
    output = tf.einsum("...qk,...kv->...qv", weights, value)
    return output, weights


def split_heads(x, num_heads):
    batch, seq, d_model = x.shape
    x = tf.reshape(x, (batch, seq, num_heads, d_model // num_heads))
    return tf.transpose(x, (0, 2, 1, 3))  # 把头轴换到序列轴前面


def merge_heads(x):
    batch, heads, seq, depth = x.shape
    x = tf.transpose(x, (0, 2, 1, 3))  # 先把序列轴换回头轴前面
    return tf.reshape(x, (batch, seq, heads * depth))


class FixedMultiHeadAttention(BuggyMultiHeadAttention):
    def attend(self, q, k, v):
        scores = tf.matmul(q, k, transpose_b=True)
        scores = scores / tf.math.sqrt(tf.cast(self.depth, scores.dtype))  # √depth，不是 √d_model
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.matmul(weights, v), weights


def shape_test(layer_cls):
    batch, n_q, n_k, d_model, heads = 2, 5, 7, 16, 4  # n_q ≠ n_k，heads > 1：错误才藏不住
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
    # 用 raise 而不是 assert：python -O 会删掉 assert，测试就什么也不查了
    if tuple(tensor.shape) != shape:
        raise AssertionError(f"{what}形状是 {tuple(tensor.shape)}，应为 {shape}")


def cross_attention(x, context, wq, wk, wv):
    q = x @ wq  # 查询来自 x：(batch, n_q, d_k)
    k = context @ wk  # 键和值来自 context：(batch, n_k, d_k)、(batch, n_k, d_v)
    v = context @ wv
    scores = tf.einsum("bqd,bkd->bqk", q, k) / tf.sqrt(tf.cast(q.shape[-1], q.dtype))
    weights = tf.nn.softmax(scores, axis=-1)  # (batch, n_q, n_k)
    return weights @ v, weights


def padding_mask(lengths, max_len):
    lengths = tf.cast(lengths, tf.int32)  # 与 tf.range 同一种整数类型
    positions = tf.range(max_len)  # (max_len,)
    real = positions[None, :] < lengths[:, None]  # (batch, max_len)
    return real[:, None, :]  # (batch, 1, max_len)：对每个查询都一样


def decoder_mask(lengths, n):
    i = tf.range(n)[:, None]  # 查询位置
    j = tf.range(n)[None, :]  # 键位置
    causal = j <= i  # (n, n)：不看未来
    real = j < tf.cast(lengths, tf.int32)[:, None, None]  # (batch, 1, n)：不看填充
    return causal & real  # (batch, n, n)


def score_table_bytes(n_q, n_k, batch=1, heads=1, dtype="float32"):
    bytes_per_score = tf.as_dtype(dtype).size  # float32 4 字节，bfloat16 2 字节
    return batch * heads * n_q * n_k * bytes_per_score


def linear_attention(query, key, value):
    phi_q = tf.nn.elu(query) + 1.0  # φ(x) = elu(x) + 1，处处为正
    phi_k = tf.nn.elu(key) + 1.0
    kv = tf.einsum("...kd,...kv->...dv", phi_k, value)  # φ(K)ᵀV：(..., d_k, d_v)，与 n 无关
    z = tf.reduce_sum(phi_k, axis=-2)  # Σ_j φ(k_j)：(..., d_k)
    numerator = tf.einsum("...qd,...dv->...qv", phi_q, kv)
    denominator = tf.einsum("...qd,...d->...q", phi_q, z)[..., None]
    return numerator / denominator
