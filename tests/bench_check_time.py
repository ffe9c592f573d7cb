"""Time ``check("4.5.2", answer)`` on a correct answer in a warm interpreter.

The answer is defined in ``__main__``, as a notebook cell defines it. The first check
warms the process (and the checker's spare child, where there is one); the next ones
are timed. Prints the median and the spread in seconds.

    python tests/bench_check_time.py [repeats]
"""

import statistics
import sys
import time

ANSWER = '''
import tensorflow as tf

def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = tf.cast(tf.shape(key)[-1], query.dtype)
    scores = tf.matmul(query, key, transpose_b=True) / tf.sqrt(d_k)
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)
    return tf.matmul(weights, value), weights
'''


def main(repeats=5):
    from attnbook.exercises import check

    namespace = sys.modules["__main__"].__dict__
    exec(compile(ANSWER, "<cell>", "exec"), namespace)  # noqa: S102  (a notebook cell)
    answer = namespace["scaled_dot_product_attention"]
    first = check("4.5.2", answer)
    assert first.passed, first
    times = []
    for _ in range(repeats):
        time.sleep(2.0)  # the reader types between two checks
        start = time.perf_counter()
        verdict = check("4.5.2", answer)
        times.append(time.perf_counter() - start)
        assert verdict.passed, verdict
    print(f"check('4.5.2') warm: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s, max {max(times):.3f} s over {repeats} runs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
