"""attnbook: the code of section 4.5, 注意力机制：让张量互相打分.

Importing the package loads TensorFlow quietly (see ``attnbook._tf``). The names below
are the ones the chapter and the exercises use.
"""

from ._tf import tf  # noqa: F401  (import first: it silences TensorFlow's start-up lines)
from .attention import MiniMultiHeadAttention, masked_softmax, scaled_dot_product_attention

__all__ = ["MiniMultiHeadAttention", "masked_softmax", "scaled_dot_product_attention", "set_seed"]


def set_seed(seed=0):
    """Fix Python's, NumPy's and TensorFlow's random seeds, so a rebuild prints the same numbers."""
    import keras

    keras.utils.set_random_seed(seed)
