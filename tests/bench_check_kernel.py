"""Time ``check("4.5.2", answer)`` in a real Jupyter kernel, as a reader's notebook runs it.

One cell defines a correct answer, one check warms the kernel up, and each later check
is timed inside the kernel after a pause (the reader typing). Prints the median.

    python tests/bench_check_kernel.py [repeats]
"""

import sys

from jupyter_client.manager import start_new_kernel

CELLS = [
    "from attnbook.exercises import check\nimport time, statistics",
    '''import tensorflow as tf

def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = tf.cast(tf.shape(key)[-1], query.dtype)
    scores = tf.matmul(query, key, transpose_b=True) / tf.sqrt(d_k)
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)
    return tf.matmul(weights, value), weights''',
    'assert check("4.5.2", scaled_dot_product_attention).passed',
    '''times = []
for _ in range({repeats}):
    time.sleep(3.0)
    start = time.perf_counter()
    verdict = check("4.5.2", scaled_dot_product_attention)
    times.append(time.perf_counter() - start)
    assert verdict.passed, verdict
print(f"kernel check('4.5.2') warm: median {{statistics.median(times):.3f}} s, "
      f"min {{min(times):.3f}} s, max {{max(times):.3f}} s over {{len(times)}} runs")''',
]


def main(repeats=5):
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        for cell in CELLS:
            reply = client.execute_interactive(cell.format(repeats=repeats), timeout=900,
                                               output_hook=_print_stream)
            if reply["content"]["status"] != "ok":
                raise SystemExit(f"cell failed: {reply['content'].get('evalue')}")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _print_stream(message):
    if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
        sys.stdout.write(message["content"]["text"])


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
