# exercise: scaled_dot_product_attention
# status: 1
# says: 超时：载入答案（运行文件顶层的代码）超过 2 秒
# args: --time-limit 2
while True:
    pass
