# exercise: scaled_dot_product_attention
# status: 1
# says: 应返回 2 个值
# Starts a process that would spin on after the check; the check ends the child's
# whole process group, and that process with it (tests/test_child_process.py looks).
import subprocess
import sys

SPINNER = "while True: pass  # attnbook: left behind by a hostile answer"


def scaled_dot_product_attention(query, key, value, mask=None):
    subprocess.Popen([sys.executable, "-c", SPINNER])
