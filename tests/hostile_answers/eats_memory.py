# exercise: scaled_dot_product_attention
# status: 1
# says: 内存超过上限
# args: --memory-limit 300
import numpy as np

hoard = []


def scaled_dot_product_attention(query, key, value, mask=None):
    while True:
        hoard.append(np.ones(2**23))  # 64 MiB a step, every page touched
