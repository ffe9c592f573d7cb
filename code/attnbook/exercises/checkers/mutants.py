"""Wrong multi-head attention layers for the shape-test exercise: each has one shape bug.

Each mutant is MiniMultiHeadAttention with one step replaced: the attention core
``_compute_attention`` or the output step ``_project_output``; ``call`` (input and mask
checks included) is the reference layer's. All take the same constructor
``(d_model, num_heads)`` and call ``(x, context=None, attention_mask=None,
return_attention_scores=False)``.
"""

import keras

from ..._tf import tf
from ...attention import MiniMultiHeadAttention


class ForgetsMerge(MiniMultiHeadAttention):
    """Returns the heads as they are: output ``(batch, heads, n_q, depth)``."""

    def _project_output(self, out, batch):
        return out


class IgnoresContext(MiniMultiHeadAttention):
    """Attends the queries (made from x) to themselves even in cross-attention:
    weights ``(b, h, n_q, n_q)``."""

    def _compute_attention(self, query, key, value, mask=None):
        # The mask fits (n_q, n_k), not this layer's (n_q, n_q): drop it, so that the bug
        # shows as a wrong shape rather than as a broadcasting error.
        return super()._compute_attention(query, query, query)


class DropsHeadAxis(MiniMultiHeadAttention):
    """Averages the weights over the heads: ``(batch, n_q, n_k)``."""

    def _compute_attention(self, query, key, value, mask=None):
        out, weights = super()._compute_attention(query, key, value, mask)
        return out, tf.reduce_mean(weights, axis=1)


class WrongOutputWidth(MiniMultiHeadAttention):
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
