# exercise: scaled_dot_product_attention
# status: 1
# says: 超时：超过 2 秒没有返回
# args: --time-limit 2
import time


class Slow:
    def __array__(self, *args, **kwargs):
        time.sleep(3600)


def scaled_dot_product_attention(query, key, value, mask=None):
    return Slow(), Slow()
