"""Tests of the exercise checkers (attnbook.exercises).

Every reference solution passes; for every exercise a planted mistake fails with its
targeted diagnosis; cheating (a cached result, a call of the reference implementation),
hanging, raising and wrong return types are reported clearly; the command line exits
0 / 1 / 2.
"""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import attnbook
from attnbook import tf
from attnbook.exercises import CONCEPTUAL, EXERCISES, check, solutions
from attnbook.exercises.__main__ import main
from attnbook.exercises.buggy import BuggyMultiHeadAttention

S = solutions

GOOD_ANSWER = """
import tensorflow as tf

def scaled_dot_product_attention(query, key, value, mask=None):
    scores = tf.matmul(query, key, transpose_b=True) / tf.sqrt(float(query.shape[-1]))
    if mask is not None:
        scores = tf.where(mask, scores, -1e9)
    weights = tf.nn.softmax(scores, axis=-1)
    if mask is not None:
        weights = tf.where(mask, weights, 0.0)
    return weights @ value, weights
"""
WRONG_ANSWER = GOOD_ANSWER.replace(" / tf.sqrt(float(query.shape[-1]))", "")


@pytest.fixture(scope="module", autouse=True)
def cli_runs(tmp_path_factory):
    """Start the command-line runs first, in the background: each one loads TensorFlow."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "good.py").write_text(GOOD_ANSWER, encoding="utf-8")
    (folder / "wrong.py").write_text(WRONG_ANSWER, encoding="utf-8")
    (folder / "syntax.py").write_text("def scaled_dot_product_attention(:\n    pass\n", encoding="utf-8")
    commands = {name: ["4.5.2", f"{name}.py"] for name in ("good", "wrong", "syntax")}
    processes = {
        name: subprocess.Popen([sys.executable, "-m", "attnbook.exercises", *args], cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        for name, args in commands.items()
    }

    def result(name):
        out, err = processes[name].communicate(timeout=180)
        return processes[name].returncode, out, err

    yield result
    for process in processes.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


def report(exercise_id, answer, **kwargs):
    verdict = check(exercise_id, answer, **kwargs)
    assert not verdict.passed, str(verdict)
    return str(verdict)


# --- the registry and the solutions --------------------------------------------------


def test_registry_lists_the_coding_exercises_in_order():
    assert list(EXERCISES) == ["4.5.1", "4.5.2", "4.5.4", "4.5.5", "4.5.6", "4.5.7", "4.5.8",
                               "4.5.10", "4.5.11", "4.5.12", "4.5.14"]
    assert not set(CONCEPTUAL) & set(EXERCISES)


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_solution_passes(exercise_id):
    exercise = EXERCISES[exercise_id]
    verdict = check(exercise_id, getattr(solutions, exercise.answer_name))
    n = len(verdict.cases)
    assert verdict.passed and n >= 4, str(verdict)
    assert str(verdict) == repr(verdict) == f"练习 {exercise_id}“{exercise.title}”：通过（{n}/{n} 个用例）"


@pytest.mark.parametrize("exercise_id", [*CONCEPTUAL, "4.5.99", "", None])  # noqa: PT006
def test_unknown_or_conceptual_id_raises(exercise_id):
    match = "思考题" if exercise_id in CONCEPTUAL else "没有编号为"
    with pytest.raises(ValueError, match=match) as info:
        check(exercise_id, S.scaled_dot_product_attention)
    assert "4.5.1、4.5.2" in str(info.value)  # lists the valid ids


def test_seed_makes_the_report_reproducible():
    wrong = attention_variant(scale=False)
    assert str(check("4.5.2", wrong, seed=3)) == str(check("4.5.2", wrong, seed=3))
    assert str(check("4.5.2", wrong)) != str(check("4.5.2", wrong))  # fresh inputs by default


def test_time_limit_must_be_positive():
    with pytest.raises(ValueError, match="time_limit"):
        check("4.5.2", S.scaled_dot_product_attention, time_limit=0)


# --- 4.5.1 shapes --------------------------------------------------------------------


def shapes_depth_is_d_model(batch, n_q, n_k, d_model, num_heads):
    return {**S.attention_shapes(batch, n_q, n_k, d_model, num_heads), "query": (batch, num_heads, n_q, d_model)}


def shapes_swapped(batch, n_q, n_k, d_model, num_heads):
    return {**S.attention_shapes(batch, n_k, n_q, d_model, num_heads), "output": (batch, n_q, d_model)}


def shapes_without_transpose(batch, n_q, n_k, d_model, num_heads):
    return {**S.attention_shapes(batch, n_q, n_k, d_model, num_heads),
            "key": (batch, n_k, num_heads, d_model // num_heads)}


# --- 4.5.2 scaled dot-product attention ----------------------------------------------


def attention_variant(scale=True, mask_mode="normal", fill=-1e9, zero_empty_rows=True, axis=-1):
    """A scaled dot-product attention with one planted mistake."""
    def answer(query, key, value, mask=None):
        scores = tf.matmul(query, key, transpose_b=True)
        if scale:
            scores /= tf.sqrt(float(query.shape[-1]))
        if mask is not None and mask_mode != "ignored":
            mask = tf.logical_not(mask) if mask_mode == "inverted" else mask
            scores = tf.where(mask, scores, fill)
        weights = tf.nn.softmax(scores, axis=axis)
        if mask is not None and mask_mode != "ignored" and zero_empty_rows:
            weights = tf.where(mask, weights, 0.0)
        return weights @ value, weights

    return answer


# --- 4.5.4 / 4.5.5 heads -------------------------------------------------------------


def split_without_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return tf.reshape(x, (batch, num_heads, seq, d_model // num_heads))


def merge_without_transpose(x):
    batch, heads, seq, depth = x.shape
    return tf.reshape(x, (batch, seq, heads * depth))


# --- 4.5.7 shape tests ---------------------------------------------------------------


def shape_test_checks_nothing(layer_cls):
    layer_cls(16, 4)(tf.zeros((2, 5, 16)))


def shape_test_always_fails(layer_cls):
    raise AssertionError("形状不对")


# --- 4.5.8, masks, cost, linear attention ---------------------------------------------


def cross_roles_swapped(x, context, wq, wk, wv):
    return S.cross_attention(context, x, wq, wk, wv)


def padding_inverted(lengths, max_len):
    return tf.logical_not(S.padding_mask(lengths, max_len))


def padding_all_true(lengths, max_len):
    return tf.ones((len(lengths), 1, max_len), tf.bool)


def padding_float(lengths, max_len):
    return tf.cast(S.padding_mask(lengths, max_len), tf.float32)


def padding_two_d(lengths, max_len):
    return tf.sequence_mask(lengths, max_len)  # (batch, max_len): does not broadcast


def decoder_upper(lengths, n):
    i, j = tf.range(n)[:, None], tf.range(n)[None, :]
    return (j >= i) & (j < tf.reshape(lengths, (-1, 1, 1)))


def decoder_causal_only(lengths, n):
    return tf.broadcast_to(S.decoder_mask([n], n), (len(lengths), n, n))


def decoder_padding_only(lengths, n):
    return tf.broadcast_to(S.padding_mask(lengths, n), (len(lengths), n, n))


def bytes_in_mib(n_q, n_k, batch=1, heads=1, dtype="float32"):
    return S.score_table_bytes(n_q, n_k, batch, heads, dtype) / 2**20


def bytes_without_itemsize(n_q, n_k, batch=1, heads=1, dtype="float32"):
    return batch * heads * n_q * n_k


def linear_via_softmax(query, key, value):
    return S.scaled_dot_product_attention(query, key, value)[0]


def linear_with_table(query, key, value):
    a = tf.matmul(tf.nn.elu(query) + 1, tf.nn.elu(key) + 1, transpose_b=True)  # (n_q, n_k)
    return (a @ value) / tf.reduce_sum(a, -1, keepdims=True)


def linear_in_numpy(query, key, value):
    phi_q, phi_k = (tf.nn.elu(t).numpy() + 1 for t in (query, key))
    return phi_q @ (np.swapaxes(phi_k, -1, -2) @ value.numpy()) / (phi_q @ phi_k.sum(-2)[..., None])


PLANTED = [  # (exercise, wrong answer, what the report must say)
    ("4.5.1", shapes_depth_is_d_model, "看起来把 d_model 当成了每头维度"),
    ("4.5.1", shapes_swapped, "看起来把 n_q 和 n_k 弄反了"),
    ("4.5.1", shapes_without_transpose, "看起来只 reshape 没有 transpose"),
    ("4.5.2", attention_variant(scale=False), "看起来没有除以 √d_k"),
    ("4.5.2", attention_variant(mask_mode="ignored"), "看起来忽略了掩码"),
    ("4.5.2", attention_variant(mask_mode="inverted"), "看起来掩码用反了"),
    ("4.5.2", attention_variant(axis=-2), "看起来 softmax 用错了轴"),
    ("4.5.2", attention_variant(zero_empty_rows=False), "整行被遮住时得到了均匀的注意力权重"),
    ("4.5.2", attention_variant(fill=-np.inf, zero_empty_rows=False), "出现了 NaN"),
    ("4.5.4", split_without_transpose, "看起来只 reshape 没有 transpose"),
    ("4.5.5", merge_without_transpose, "看起来只 reshape 没有 transpose"),
    ("4.5.6", BuggyMultiHeadAttention, "注意力权重与按 √d_model 缩放的结果一致：那一行还没改对"),
    ("4.5.7", shape_test_checks_nothing, "变体“交叉注意力忽略了 context”没有被你的测试发现"),
    ("4.5.7", shape_test_always_fails, "你的测试把正确的 MiniMultiHeadAttention 判为错误：AssertionError: 形状不对"),
    ("4.5.8", cross_roles_swapped, "看起来查询与键/值的来源弄反了"),
    ("4.5.10", padding_inverted, "看起来掩码反了"),
    ("4.5.10", padding_all_true, "看起来没有用到 lengths"),
    ("4.5.10", padding_float, "掩码必须是布尔张量，得到 float32"),
    ("4.5.10", padding_two_d, "不能广播到分数的形状"),
    ("4.5.11", decoder_upper, "看起来用了上三角"),
    ("4.5.11", decoder_causal_only, "看起来忘了填充部分"),
    ("4.5.11", decoder_padding_only, "看起来忘了因果部分"),
    ("4.5.12", bytes_in_mib, "看起来单位不是字节"),
    ("4.5.12", bytes_without_itemsize, "看起来忘了乘每个数所占的字节数"),
    ("4.5.14", linear_via_softmax, "看起来算的是 softmax 注意力"),
    ("4.5.14", linear_via_softmax, "你的实现构造了 n×n 的张量"),
    ("4.5.14", linear_with_table, "你的实现构造了 n×n 的张量（算子 BatchMatMulV2 输出 (1, 256, 192)）"),
    ("4.5.14", linear_in_numpy, "请只用 TensorFlow 算子来写"),
]


@pytest.mark.parametrize("exercise_id, answer, needle", PLANTED,
                         ids=[f"{e}-{getattr(a, '__name__', 'answer')}" for e, a, _ in PLANTED])
def test_planted_mistake_fails_with_its_diagnosis(exercise_id, answer, needle):
    assert needle in report(exercise_id, answer)


def test_every_coding_exercise_has_a_planted_mistake():
    assert {exercise_id for exercise_id, _, _ in PLANTED} == set(EXERCISES)


def test_failure_report_lists_only_failed_cases():
    verdict = check("4.5.2", attention_variant(mask_mode="ignored"))
    lines = str(verdict).splitlines()
    failed = [case for case in verdict.cases if not case.passed]
    assert lines[0] == "练习 4.5.2“实现缩放点积注意力”：未通过（5/8 个用例）"
    assert lines[1:] == [f"  ✗ 用例“{case.name}”：{case.message}" for case in failed]
    assert [case.name for case in failed] == ["填充掩码", "因果掩码", "有一整行被遮住"]


def test_shape_and_value_messages_name_expected_got_and_where():
    text = report("4.5.4", lambda x, h: tf.transpose(split_without_transpose(x, h), (0, 1, 3, 2)))
    assert "形状不对：期望 (2, 3, 5, 4)，得到 (2, 3, 4, 5)" in text
    text = report("4.5.2", attention_variant(scale=False))
    assert "注意力权重的数值不对：最大误差 " in text and "（容差 " in text and "），出现在位置 (" in text


def test_buggy_layer_passes_where_the_bug_is_invisible():
    verdict = check("4.5.6", BuggyMultiHeadAttention)
    outcome = {case.name: case.passed for case in verdict.cases}
    assert outcome["单头（num_heads = 1）"] and not outcome["8 个头"]


def test_shape_test_that_raises_another_error_is_noted():
    def shape_test(layer_cls):
        layer = layer_cls(16, 4)
        x, context = tf.zeros((2, 5, 16)), tf.zeros((2, 7, 16))
        out, weights = layer(x, context, return_attention_scores=True)
        if out.shape != (2, 5, 16) or weights.shape != (2, 4, 5, 7):
            raise RuntimeError("shape")

    verdict = check("4.5.7", shape_test)
    assert verdict.passed
    assert "抛出的是 RuntimeError 而不是 AssertionError" in str(verdict)


def test_each_slipped_mutant_is_named():
    text = report("4.5.7", lambda layer_cls: None)
    for name in ("忘了合并多头", "交叉注意力忽略了 context", "注意力权重少了头轴", "输出投影的宽度不对"):
        assert f"变体“{name}”没有被你的测试发现" in text


# --- cheating ------------------------------------------------------------------------


def test_cached_output_fails():
    cache = {}

    def cached(query, key, value, mask=None):
        if "result" not in cache:
            cache["result"] = attention_variant()(query, key, value, mask)
        return cache["result"]

    assert "两组不同的输入得到了完全相同的结果" in report("4.5.2", cached)


def test_calling_the_reference_fails_even_under_another_name():
    from attnbook import scaled_dot_product_attention as my_attention

    for answer in (lambda q, k, v, mask=None: attnbook.scaled_dot_product_attention(q, k, v, mask),
                   lambda q, k, v, mask=None: my_attention(q, k, v, mask)):
        text = report("4.5.2", answer)
        assert "你的函数直接调用了参考实现 attnbook.scaled_dot_product_attention：请自己写出这一步。" in text
        assert "其余 7 个用例未运行。" in text
    assert "参考实现 attnbook.padding_mask" in report("4.5.10", lambda l, m: attnbook.padding_mask(l, m))
    assert "参考实现 attnbook.linear_attention" in report("4.5.14", attnbook.linear_attention)


def test_subclassing_the_reference_layer_fails():
    class Fixed(attnbook.MiniMultiHeadAttention):
        pass

    assert "你的层直接调用了参考实现 attnbook.MiniMultiHeadAttention" in report("4.5.6", Fixed)


# --- robustness ----------------------------------------------------------------------


def test_hanging_answer_times_out_quickly():
    def hangs(query, key, value, mask=None):
        while True:
            time.sleep(0.05)

    start = time.perf_counter()
    text = report("4.5.2", hangs, time_limit=1)
    assert time.perf_counter() - start < 5
    assert "超时：超过 1 秒没有返回" in text and "其余 7 个用例未运行。" in text
    time.sleep(0.5)  # the abandoned thread is told to stop and does not burn CPU forever
    assert "attnbook-exercise" not in [thread.name for thread in threading.enumerate()]


def raising_answer(query, key, value, mask=None):
    return query.shape[-1] + "oops"  # TypeError: the line the report must name


def test_raising_answer_reports_type_and_line():
    line = raising_answer.__code__.co_firstlineno + 1
    assert "你的函数抛出了 TypeError: " in report("4.5.2", raising_answer)
    assert f"（test_exercises.py 第 {line} 行）" in report("4.5.2", raising_answer)


def test_unfinished_stub_stops_at_the_first_case():
    def stub(query, key, value, mask=None):
        raise NotImplementedError("在这里写你的答案")

    lines = report("4.5.2", stub).splitlines()
    assert lines[1].startswith("  ✗ 用例“基本”：你的函数还没有写完：抛出了 NotImplementedError: 在这里写你的答案（")
    assert lines[2:] == ["  其余 7 个用例未运行。"]


@pytest.mark.parametrize(
    "returned, needle",
    [
        (None, "应返回 2 个值（output, weights），得到 None（是不是忘了 return？）"),
        (tf.zeros((2, 5, 8)), "应返回 2 个值（output, weights），得到一个 EagerTensor（形状 (2, 5, 8)）"),
        ("attention", "应返回 2 个值（output, weights），得到一个字符串 'attention'"),
        ((tf.zeros((2, 5, 8)),) * 3, "应返回 2 个值（output, weights），得到 3 个值"),
        ((tf.zeros((2, 5, 8)), "b"), "weights 应是张量（tf.Tensor 或 numpy 数组），得到字符串 'b'"),
    ],
    ids=["None", "one-tensor", "string", "three-values", "string-weights"],
)
def test_wrong_return_type_is_named(returned, needle):
    assert needle in report("4.5.2", lambda q, k, v, mask=None: returned)


def test_numpy_results_are_accepted():
    def numpy_padding_mask(lengths, max_len):
        return np.arange(max_len)[None, None, :] < np.asarray(lengths)[:, None, None]

    assert check("4.5.10", numpy_padding_mask).passed


@pytest.mark.parametrize(
    "exercise_id, answer, needle",
    [
        ("4.5.2", 42, "应提交函数 scaled_dot_product_attention(query, key, value, mask=None)"),
        ("4.5.6", S.FixedMultiHeadAttention(8, 2), "得到的是它的一个实例"),
        ("4.5.6", S.scaled_dot_product_attention, "keras.layers.Layer 的子类），得到 function"),
    ],
    ids=["int-for-function", "instance-for-class", "function-for-class"],
)
def test_answer_of_the_wrong_kind_fails_without_running(exercise_id, answer, needle):
    verdict = check(exercise_id, answer)
    assert not verdict.passed and all(case.skipped for case in verdict.cases)
    lines = str(verdict).splitlines()
    assert len(lines) == 2 and lines[1].startswith("  ✗ 应提交") and needle in lines[1]


# --- command line --------------------------------------------------------------------


def test_cli_passes_a_correct_file(cli_runs):
    code, out, err = cli_runs("good")
    assert code == 0, err
    assert out.strip() == "练习 4.5.2“实现缩放点积注意力”：通过（8/8 个用例）"


def test_cli_syntax_error_exits_2_without_traceback(cli_runs):
    code, out, err = cli_runs("syntax")
    assert code == 2
    assert "syntax.py 第 1 行有语法错误" in err and "Traceback" not in err + out


def test_cli_fails_a_wrong_file(cli_runs):
    code, out, err = cli_runs("wrong")
    assert code == 1, err
    assert out.startswith("练习 4.5.2“实现缩放点积注意力”：未通过（") and "看起来没有除以 √d_k" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["4.5.2", "missing.py"], "找不到文件：missing.py"),
        (["4.5.3", "{answer}"], "思考题"),
        (["4.5.2", "{answer}", "--name", "attend"], "answer.py 里没有名为 attend 的函数或类"),
        (["4.5.2"], "需要练习编号和答案文件"),
        (["--bogus"], "命令行参数有误"),
    ],
    ids=["missing-file", "conceptual-id", "missing-name", "missing-path", "bad-option"],
)
def test_cli_main_usage_errors_exit_2(tmp_path, capsys, argv, needle):
    (tmp_path / "answer.py").write_text(GOOD_ANSWER, encoding="utf-8")
    argv = [arg.format(answer=tmp_path / "answer.py") for arg in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert needle in captured.err and "Traceback" not in captured.err + captured.out


def test_cli_main_takes_another_name(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(GOOD_ANSWER.replace("def scaled_dot_product_attention", "def attend"),
                                        encoding="utf-8")
    assert main(["4.5.2", str(tmp_path / "answer.py"), "--name", "attend"]) == 0


def test_cli_main_lists_every_exercise(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for exercise in EXERCISES.values():
        assert f"{exercise.id}" in out and exercise.title in out and exercise.answer_name in out
