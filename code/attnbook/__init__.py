"""attnbook：这本可执行教程的配套代码，书里各节展示、读者在练习里导入的就是它。

导入本包时会加载 TensorFlow，并滤掉它启动时打印的那几行日志（见 ``attnbook._tf``）。
下面这些名字是第 4.5 节（注意力机制）的正文与练习最常用的，都可以直接从顶层导入：
缩放点积注意力与多头注意力层（``attnbook.attention``），掩码（``attnbook.masks``），
以及三种前向计算不存完整打分表的长序列注意力（``attnbook.efficient``；滑动窗口只在窗口远小于序列长度时才省）。
"""

import importlib.metadata

from ._tf import tf  # noqa: F401  (import first: it silences TensorFlow's start-up lines)
from .attention import MiniMultiHeadAttention, masked_softmax, scaled_dot_product_attention
from . import cost
from .efficient import chunked_attention, elu_plus_one, linear_attention, sliding_window_attention
from .masks import causal_mask, combine_masks, padding_mask, padding_mask_from_tokens

try:
    #: 配套包的版本号，取自安装时的包元数据（``importlib.metadata``），例如 ``"0.2.0"``。
    __version__ = importlib.metadata.version(__name__)
except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
    __version__ = "0+unknown"

__all__ = [
    "MiniMultiHeadAttention", "masked_softmax", "scaled_dot_product_attention",
    "padding_mask", "padding_mask_from_tokens", "causal_mask", "combine_masks",
    "chunked_attention", "linear_attention", "sliding_window_attention", "elu_plus_one",
    "cost", "set_seed",
]


def set_seed(seed=0):
    """固定 Python、NumPy 与 TensorFlow 的随机种子，让随机输入与初始参数每次相同。

    计时、内存读数与舍入量级（约 1e-7）的浮点误差不受种子控制，会随机器与构建而变。
    """
    import keras

    keras.utils.set_random_seed(seed)
