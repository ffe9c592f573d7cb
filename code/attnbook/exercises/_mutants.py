"""Wrong multi-head attention layers for the shape-test exercise: each has one shape bug.

Each mutant is MiniMultiHeadAttention with one step replaced; all take the same
constructor ``(d_model, num_heads)`` and call ``(x, context=None, attention_mask=None,
return_attention_scores=False)``.
"""

import keras

from .._tf import tf
from ..attention import MiniMultiHeadAttention, scaled_dot_product_attention


class _Mutant(MiniMultiHeadAttention):
    """The reference layer's forward pass, split into steps that a mutant can override."""

    def call(self, x, context=None, attention_mask=None, return_attention_scores=False):
        context = x if context is None else context
        batch = tf.shape(x)[0]
        source = self._key_value_source(x, context)
        q = self._split_heads(self.wq(x), batch)
        k = self._split_heads(self.wk(source), batch)
        v = self._split_heads(self.wv(source), batch)
        out, weights = scaled_dot_product_attention(q, k, v)  # (b, h, n_q, depth), (b, h, n_q, n_k)
        out, weights = self._finish(out, batch), self._weights(weights)
        return (out, weights) if return_attention_scores else out

    def _key_value_source(self, x, context):
        return context

    def _finish(self, out, batch):
        return self.wo(self._merge_heads(out, batch))

    def _weights(self, weights):
        return weights


class ForgetsMerge(_Mutant):
    """Returns the heads as they are: output ``(batch, heads, n_q, depth)``."""

    def _finish(self, out, batch):
        return out


class IgnoresContext(_Mutant):
    """Takes keys and values from x even in cross-attention: weights ``(b, h, n_q, n_q)``."""

    def _key_value_source(self, x, context):
        return x


class DropsHeadAxis(_Mutant):
    """Averages the weights over the heads: ``(batch, n_q, n_k)``."""

    def _weights(self, weights):
        return tf.reduce_mean(weights, axis=1)


class WrongOutputWidth(_Mutant):
    """Projects the output to the head depth instead of d_model: ``(batch, n_q, depth)``."""

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(d_model, num_heads, **kwargs)
        self.wo = keras.layers.Dense(self.depth, name="output")


MUTANTS = (  # (name in the report, class, what it does wrong)
    ("忘了合并多头", ForgetsMerge, "它的输出是 (batch, heads, n_q, depth)，没有拼回 (batch, n_q, d_model)"),
    ("交叉注意力忽略了 context", IgnoresContext,
     "它的键和值取自 x，注意力权重成了 (batch, heads, n_q, n_q)：用 n_q ≠ n_k 的交叉注意力检查注意力权重的形状"),
    ("注意力权重少了头轴", DropsHeadAxis, "它返回的注意力权重是 (batch, n_q, n_k)，少了头轴"),
    ("输出投影的宽度不对", WrongOutputWidth, "它的输出最后一维是每头维度而不是 d_model：试试 num_heads > 1"),
)
