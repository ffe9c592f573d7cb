# exercise: scaled_dot_product_attention
# status: 1
# says: 导入了参考解答 attnbook.exercises.solutions
import os

import attnbook.exercises

path = os.path.join(os.path.dirname(attnbook.exercises.__file__), "solutions.py")
source = open(path, encoding="utf-8").read().replace("from .", "from attnbook.exercises.")
namespace = {}
exec(compile(source, "copied.py", "exec"), namespace)
scaled_dot_product_attention = namespace["scaled_dot_product_attention"]
