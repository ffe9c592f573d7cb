# exercise: shape_test
# status: 1
# says: 你的测试把正确的层（基于 Keras 的 MultiHeadAttention）判为错误
# A "shape test" that checks no shape: it rejects every class but the package's own.
from attnbook import MiniMultiHeadAttention


def shape_test(layer_cls):
    assert layer_cls is MiniMultiHeadAttention, "不是包里的层"
