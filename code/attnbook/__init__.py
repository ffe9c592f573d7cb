"""attnbook: the code of section 4.5, 注意力机制：让张量互相打分.

Importing the package loads TensorFlow quietly (see ``attnbook._tf``). The names below
are the ones the chapter and the exercises use.
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
    """Fix Python's, NumPy's and TensorFlow's random seeds, so a rebuild prints the same numbers."""
    import keras

    keras.utils.set_random_seed(seed)
