"""缩放点积注意力，以及建立在它之上的多头注意力层。"""

import keras

from . import _checks
from ._tf import tf


def masked_softmax(scores, mask=None):
    """沿最后一轴做 softmax，被掩码遮住的位置权重恰好为 0。

    ``scores`` 是分数，形状 ``(..., n_q, n_k)``；``mask`` 是可选的布尔掩码，
    可广播到同一形状，True 表示可以看。一个键都不能看的行得到全 0 权重，
    而不是 NaN。半精度（float16、bfloat16）的分数先转成 float32 归一，
    再转回原来的类型。

    Raises:
        ValueError: ``scores`` 不是浮点张量，或 ``mask`` 不是布尔张量、不能广播到
            ``scores`` 的形状。
    """
    scores = _checks.as_float_tensor("scores", scores, min_rank=1)
    return _masked_softmax(scores, None if mask is None else _checks.check_mask(mask, scores.shape))


def _masked_softmax(scores, mask):
    """:func:`masked_softmax` on inputs already checked (the core's, the variants')."""
    dtype = scores.dtype
    if dtype in _checks.HALF_DTYPES:
        scores = tf.cast(scores, tf.float32)
    if mask is not None:
        # A finite floor instead of -inf: a fully masked row stays finite (uniform),
        # and the tf.where below turns it, like every masked entry, into exact zeros.
        scores = tf.where(mask, scores, scores.dtype.min)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, tf.zeros_like(weights))
    return tf.cast(weights, dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    """缩放点积注意力 softmax(Q Kᵀ / √d_k) V。

    与正文的四步在数学上相同，只是先把 Q 除以 √d_k，再乘 Kᵀ。

    Args:
        query: 查询，``(..., n_q, d_k)``。
        key: 键，``(..., n_k, d_k)``。
        value: 值，``(..., n_k, d_v)``。
        mask: 可选的布尔掩码，可广播到 ``(..., n_q, n_k)``；
            True 表示“这个查询可以看这个键”（Keras 的约定）。

    Returns:
        ``(output, weights)``：输出 ``(..., n_q, d_v)`` 与注意力权重
        ``(..., n_q, n_k)``。被遮住的权重恰好为 0；至少有一个键可看的行，
        权重总和为 1；一个键都不能看的行，权重和输出都是 0。

    Raises:
        ValueError: 秩小于 2、不是浮点类型或三者类型不同、``d_k`` 或
            ``n_k`` 对不上，或者掩码不是布尔型、不能广播。
    """
    query, key, value = _checks.check_qkv(query, key, value)
    if mask is not None:
        mask = _checks.score_mask(mask, query, key)
    return _attend(query, key, value, mask)


def scale_query(query):
    """``query`` ``(..., n_q, d_k)`` 除以 √d_k，形状不变。

    先缩放 Q 再乘 Kᵀ，与先乘后除在数学上相同，却只需缩放 n_q·d_k 个数，而不是打分表的
    n_q·n_k 个数（n_k > d_k 时更省）。本包的注意力与各种变体都用它缩放。
    """
    return query * tf.math.rsqrt(tf.cast(tf.shape(query)[-1], query.dtype))


def _attend(query, key, value, mask=None):
    """正文的四步，不做检查：调用者须已检查过输入与掩码。

    ``query`` ``(..., n_q, d_k)``，``key`` ``(..., n_k, d_k)``，
    ``value`` ``(..., n_k, d_v)``；``mask`` 是可广播到
    ``(..., n_q, n_k)`` 的布尔张量或 None。返回 ``(output, weights)``，
    形状同 :func:`scaled_dot_product_attention`。
    """
    # 1. 点积与 2. 缩放合成一步：(Q / √d_k)·Kᵀ 等于 (Q·Kᵀ) / √d_k。
    # scaled：缩放后的分数，(..., n_q, n_k)
    scaled = tf.matmul(scale_query(query), key, transpose_b=True)
    weights = _masked_softmax(scaled, mask)  # 3. 归一：每行总和为 1
    output = tf.matmul(weights, value)  # 4. 加权：(..., n_q, d_v)
    return output, weights


@keras.saving.register_keras_serializable(package="attnbook")
class MiniMultiHeadAttention(keras.layers.Layer):
    """配套包的扩展层：在原稿的最小层之上加了交叉注意力、掩码与输入检查。

    ``d_model`` 须能被 ``num_heads`` 整除，每头维度 ``depth`` 是二者之商。

    - 自注意力 ``layer(x)``：x 为 ``(batch, n, features)``，
      输出 ``(batch, n, d_model)``。
    - 交叉注意力 ``layer(x, context)``：查询来自 x ``(batch, n_q, features)``，
      键与值来自 context ``(batch, n_k, features_c)``，
      输出 ``(batch, n_q, d_model)``。
    - ``attention_mask``：布尔掩码，可广播到 ``(batch, n_q, n_k)``，
      True 表示可以看。
    - ``return_attention_scores=True``：另外返回注意力权重
      ``(batch, num_heads, n_q, n_k)``。

    参数相同、输入宽度等于 ``d_model`` 时，它与
    ``keras.layers.MultiHeadAttention`` 的结果在 float32 舍入之内一致，
    那一层取 ``key_dim=depth``。输入宽度不同时，Keras 那一层默认投影回
    输入的宽度，要另取 ``output_shape=d_model`` 才可比。这由仓库里的测试
    ``tests/test_attention.py::test_matches_keras_multi_head_attention``
    核对，本站的页面上没有展示这项比较。
    参数或输入不合法时抛出 ``ValueError``。
    """

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        d_model, num_heads = _checks.heads(d_model, num_heads)
        self.d_model, self.h = d_model, num_heads
        self.depth = d_model // num_heads  # 每头的键维度
        dense = dict(units=d_model, dtype=self.dtype_policy)
        self.wq = keras.layers.Dense(name="query", **dense)
        self.wk = keras.layers.Dense(name="key", **dense)
        self.wv = keras.layers.Dense(name="value", **dense)
        self.wo = keras.layers.Dense(name="output", **dense)  # 拼接后的输出投影

    def build(self, x_shape, context_shape=None):
        context_shape = x_shape if context_shape is None else context_shape
        self.wq.build(x_shape)
        self.wk.build(context_shape)
        self.wv.build(context_shape)
        self.wo.build(tuple(x_shape[:-1]) + (self.d_model,))

    def _split_heads(self, x, batch):
        # (batch, seq, d_model) 切成 (batch, heads, seq, depth)：
        # 先拆维度，再换轴
        x = tf.reshape(x, (batch, -1, self.h, self.depth))
        return tf.transpose(x, perm=[0, 2, 1, 3])

    def _merge_heads(self, x, batch):
        # (batch, heads, seq, depth) 拼回 (batch, seq, d_model)：
        # 先换轴，再合并维度
        x = tf.transpose(x, perm=[0, 2, 1, 3])
        return tf.reshape(x, (batch, -1, self.h * self.depth))

    def call(self, x, context=None, attention_mask=None,
             return_attention_scores=False):
        x, context = self._check_inputs(x, context)
        mask = self._check_attention_mask(attention_mask, x, context)
        batch = tf.shape(x)[0]
        q = self._split_heads(self.wq(x), batch)
        k = self._split_heads(self.wk(context), batch)
        v = self._split_heads(self.wv(context), batch)
        # out：(batch, heads, n_q, depth)；weights：(batch, heads, n_q, n_k)
        out, weights = self._compute_attention(q, k, v, mask)
        out = self._project_output(out, batch)
        return (out, weights) if return_attention_scores else out

    def _compute_attention(self, query, key, value, mask=None):
        """各头的四步（不再检查），仿 Keras 的 ``_compute_attention``。

        ``query`` ``(batch, heads, n_q, depth)``，``key``、``value``
        ``(batch, heads, n_k, depth)``，``mask`` ``(batch, 1, n_q, n_k)`` 或
        None。返回 ``(out, weights)``：``(batch, heads, n_q, depth)`` 与
        ``(batch, heads, n_q, n_k)``。
        """
        return _attend(query, key, value, mask)

    def _project_output(self, out, batch):
        # 各头拼回 (batch, n_q, d_model)，再做输出投影
        return self.wo(self._merge_heads(out, batch))

    def _check_inputs(self, x, context):
        x = _checks.as_float_tensor("x", x, min_rank=3, max_rank=3)
        if context is None:
            return x, x
        context = _checks.as_float_tensor("context", context,
                                          min_rank=3, max_rank=3)
        if _checks.dims_differ(x.shape[0], context.shape[0]):
            raise ValueError(
                "x and context must have the same batch size, got "
                f"x {tuple(x.shape)} and context {tuple(context.shape)}."
            )
        return x, context

    def _check_attention_mask(self, attention_mask, x, context):
        # 掩码只在这里检查一次；返回 (batch, 1, n_q, n_k)，各头共用，或 None
        if attention_mask is None:
            return None
        mask = _checks.score_mask(attention_mask, x, context, "attention_mask")
        return mask[:, None, :, :]  # (batch, n_q, n_k) -> (batch, 1, n_q, n_k)

    def compute_output_shape(self, x_shape, context_shape=None):
        """输出的形状 ``(batch, n_q, d_model)``。

        ``x_shape`` 是 ``(batch, n_q, features)``。
        """
        return tuple(x_shape[:-1]) + (self.d_model,)

    def compute_output_spec(self, x, context=None, attention_mask=None,
                            return_attention_scores=False):
        """符号输入（KerasTensor）的输出，序列长度不会变成 ``None``。

        Returns:
            输出 ``(batch, n_q, d_model)``；``return_attention_scores=True``
            时另有注意力权重 ``(batch, num_heads, n_q, n_k)``，其中 ``n_k``
            取自 ``context``，自注意力时取自 ``x``。
        """
        shape = self.compute_output_shape(x.shape)
        output = keras.KerasTensor(shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        n_k = (x if context is None else context).shape[1]
        scores = (x.shape[0], self.h, x.shape[1], n_k)  # 每个头一张权重表
        return output, keras.KerasTensor(scores, dtype=self.compute_dtype)

    def get_config(self):
        """返回本层的配置，``from_config`` 可据此重建本层。"""
        return {**super().get_config(), "d_model": self.d_model,
                "num_heads": self.h}
