"""Tests of the exercise catalog and checkers (attnbook.exercises).

The catalog agrees with the exercises page and the generated starter page; every
reference solution passes and every starter stub is 未完成; planted mistakes fail
with their targeted diagnosis; cheating (a cached result, a call of the reference
implementation), hanging, raising and wrong return types are reported clearly; a
layer built under mixed_bfloat16 is accepted; the command line exits 0 / 1 / 2.

Exercise ids are never typed here: they come from the catalog, by answer name.
"""

import importlib
import os
import pkgutil
import re
import subprocess
import sys
import time
import unicodedata
from types import SimpleNamespace

import keras
import numpy as np
import pytest
import yaml
from myst_nb.core.read import read_myst_markdown_notebook

import attnbook
from attnbook import exercises, tf
from attnbook.exercises import (CATALOG, CONCEPTUAL, EXERCISES, FAILED, PASSED, UNFINISHED, check,
                                check_by_name, solutions)
from attnbook.exercises.__main__ import main
from attnbook.exercises.buggy import BuggyMultiHeadAttention
import exercise_answers as A
from book._ext.config import exercise_starter as STARTER
from book._ext.reading import numbering
from book._ext.shared.sections import Book
from buildfiles import ROOT

S = solutions
PAGE = ROOT / "book" / "ch04" / "exercises.md"
ID = {ex.answer_name: ex.id for ex in EXERCISES.values()}  # "split_heads" -> its id
SDPA = ID["scaled_dot_product_attention"]

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
    commands = {name: [SDPA, f"{name}.py"] for name in ("good", "wrong", "syntax")}
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


def renamed(fn, name):
    """``fn`` under another ``__name__``, as a reader's own function would be."""
    def answer(*args, **kwargs):
        return fn(*args, **kwargs)

    answer.__name__ = name
    return answer


def report(exercise_id, answer, **kwargs):
    verdict = check(exercise_id, answer, **kwargs)
    assert not verdict.passed, str(verdict)
    return str(verdict)


# --- the catalog and the book --------------------------------------------------------


def display_width(line):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def exercise_blocks(text):
    """``(label, title, body)`` of every ``{exercise}`` block of a MyST page, in order."""
    block = re.compile(r"^(`{3,})\{exercise\}[ \t]*([^\n]*)\n:label:[ \t]*(\S+)\n(.*?)^\1[ \t]*$", re.M | re.S)
    return [(m.group(3), m.group(2).strip(), m.group(4)) for m in block.finditer(text)]


def solution_blocks(text):
    """``(label, [answer names that its cells check_by_name])`` of every solution block."""
    block = re.compile(r"^```\{solution-start\}[ \t]*(\S+)\n(.*?)^```\{solution-end\}", re.M | re.S)
    cell = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)
    result = []
    for m in block.finditer(text):
        cells = cell.findall(m.group(2))
        assert not any(re.search(r"\bcheck\(", c) for c in cells), f"{m.group(1)}: a solution retypes an id"
        result.append((m.group(1), [n for c in cells for n in re.findall(r"check_by_name\(solutions\.(\w+)\)", c)]))
    return result


def test_catalog_ids_follow_the_order_of_the_book():
    """The catalog keys the exercises by section and numbers them by position, 4.5.1, 4.5.2 …:
    the numbers numbering.py gives the {exercise} blocks of that section's pages, by the
    section the toc puts the exercises page under (_config.yml writes no number)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "exercise" not in config["sphinx"]["config"].get("enumerable_prefix", {})
    book = Book(ROOT)
    page = PAGE.relative_to(ROOT).with_suffix("").as_posix()
    labels = [label for label, _, _ in exercise_blocks(PAGE.read_text(encoding="utf-8"))]
    sphinx = {page: {"exercise": {label: (i,) for i, label in enumerate(labels, 1)}}}
    numbered = numbering.labels_by_section(book, sphinx, {})
    ours = [ex for ex in CATALOG if ex.section == book.of(page).number]
    assert ours and [ex.label for ex in ours] == labels
    assert [".".join(map(str, numbered[page, "exercise", ex.label])) for ex in ours] == [ex.id for ex in ours]
    assert {ex.section for ex in CATALOG} <= {section.number for section in book.sections}
    assert list(EXERCISES) == [ex.id for ex in CATALOG if ex.coding]
    assert CONCEPTUAL and set(CONCEPTUAL) == {ex.id for ex in CATALOG} - set(EXERCISES)


def test_catalog_names_are_unique_and_well_formed():
    assert len({ex.label for ex in CATALOG}) == len(CATALOG)
    assert len(ID) == len(EXERCISES)
    for ex in CATALOG:
        assert ex.kind in ("function", "class", "thinking"), ex
        assert bool(ex.signature and ex.doc and ex.checker) == ex.coding, ex
        assert not ex.coding or re.fullmatch(r"[A-Za-z_]\w*\(.*\)", ex.signature), ex


def test_exercises_page_has_the_catalog_blocks_in_order():
    text = PAGE.read_text(encoding="utf-8")
    assert [(label, title) for label, title, _ in exercise_blocks(text)] == [(ex.label, ex.title) for ex in CATALOG]
    assert text.count("{exercise}") == len(CATALOG)  # no block the pattern above missed
    for other in (ROOT / "book").rglob("*.md"):  # Sphinx numbers exercises across the book
        assert other == PAGE or "{exercise}" not in other.read_text(encoding="utf-8"), other


@pytest.mark.parametrize("exercise", CATALOG, ids=[ex.id for ex in CATALOG])
def test_exercise_block_names_its_own_id_and_signature(exercise):
    body = dict((label, body) for label, _, body in exercise_blocks(PAGE.read_text(encoding="utf-8")))[exercise.label]
    calls = re.findall(r'check\("([^"]*)", (\w+)\)', body)
    assert calls == ([(exercise.id, exercise.answer_name)] if exercise.coding else [])
    for shown in re.findall(r"^def (\w+\(.*\)):$", body, re.M):
        assert shown == exercise.signature


def test_each_coding_exercise_has_one_solution_that_checks_it():
    solved = solution_blocks(PAGE.read_text(encoding="utf-8"))
    assert [label for label, _ in solved] == [ex.label for ex in CATALOG]
    for (label, names), exercise in zip(solved, CATALOG):
        assert names == ([exercise.answer_name] if exercise.coding else []), label


def test_every_checker_serves_exactly_one_exercise_of_the_catalog():
    """The catalog holds the Checker objects themselves; each one the checkers subpackage
    defines is the checker of one coding exercise, and no exercise's checker lives elsewhere."""
    from attnbook.exercises import checkers
    from attnbook.exercises._cases import Checker

    defined = []
    for info in pkgutil.iter_modules(checkers.__path__):
        module = importlib.import_module(f"attnbook.exercises.checkers.{info.name}")
        defined += [value for value in vars(module).values() if isinstance(value, Checker)]
    used = [ex.checker for ex in EXERCISES.values()]
    assert all(isinstance(checker, Checker) for checker in used)
    assert sorted(map(id, defined)) == sorted(map(id, used)) and len(set(map(id, used))) == len(used)
    assert all(ex.checker is None for ex in CATALOG if not ex.coding)


def test_starter_stubs_have_a_chinese_docstring_and_fit_the_code_box():
    """As tests/test_docstrings.py asks of the code the pages show from the package."""
    for exercise in EXERCISES.values():
        docstring = exercise.stub.splitlines()[1]
        assert re.search(r"[\u4e00-\u9fff]", docstring), exercise.stub
        wide = [line for line in exercise.stub.splitlines() if display_width(line) > 80]
        assert not wide, wide


# --- the starter page ----------------------------------------------------------------




def starter_code_cells():
    notebook = read_myst_markdown_notebook(STARTER.render(CATALOG, "4.5"))
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_starter_page_has_a_stub_and_a_check_cell_per_coding_exercise():
    cells = starter_code_cells()
    assert "from attnbook.exercises import check" in cells[0]
    assert cells[1::2] == [ex.stub.rstrip() for ex in EXERCISES.values()]
    assert cells[2::2] == [f'check("{ex.id}", {ex.answer_name})' for ex in EXERCISES.values()]
    assert STARTER.render(CATALOG, "4.5") == STARTER.render(CATALOG, "4.5")
    assert STARTER.render(CATALOG, "4.6").count("code-cell") == 1  # a section without exercises: the import alone


def test_each_sections_starter_page_is_rewritten_only_when_it_changes(tmp_path):
    """The starter is the page named exercises-starter under a section in the toc; a toc
    without one (a test's small copy) gets nothing written."""
    for name in ("_config.yml", "manuscript/4.5-attention.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    toc = "format: jb-book\nroot: book/index\nchapters:\n  - file: book/ch04/attention\n    sections:\n      - file: {}\n"
    app = SimpleNamespace(srcdir=tmp_path)
    (tmp_path / "_toc.yml").write_text(toc.format("book/ch04/exercises-starter"), encoding="utf-8")
    page = tmp_path / "book" / "ch04" / "exercises-starter.md"
    page.parent.mkdir(parents=True)
    page.write_text("stale", encoding="utf-8")
    STARTER.write_pages(app, None)
    assert page.read_text(encoding="utf-8") == STARTER.render(CATALOG, "4.5")
    written = page.stat().st_mtime_ns
    time.sleep(0.01)
    STARTER.write_pages(SimpleNamespace(srcdir=tmp_path), None)
    assert page.stat().st_mtime_ns == written
    (tmp_path / "_toc.yml").write_text(toc.format("book/ch04/other"), encoding="utf-8")
    page.unlink()
    STARTER.write_pages(SimpleNamespace(srcdir=tmp_path), None)  # a book without the page: nothing written
    assert not page.exists()


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_starter_stub_is_unfinished_not_a_crash(exercise_id):
    cells = starter_code_cells()
    i = 1 + 2 * list(EXERCISES).index(exercise_id)
    namespace = {}
    exec(cells[0], namespace)  # noqa: S102  (the page's own import cell)
    exec(compile(cells[i], "starter.py", "exec"), namespace)  # noqa: S102
    verdict = eval(cells[i + 1], namespace)  # noqa: S307
    assert verdict.state == UNFINISHED and not verdict.passed, str(verdict)
    lines = str(verdict).splitlines()
    assert lines[0].endswith(f"：{UNFINISHED}") and len(lines) == 2, lines
    assert lines[1].startswith("  提示：") and "starter.py 第 " in lines[1] and "NotImplementedError" in lines[1]


def test_unfinished_report_in_full():
    def stub(query, key, value, mask=None):
        raise NotImplementedError("在这里写你的答案")

    line = stub.__code__.co_firstlineno + 1
    verdict = check(SDPA, stub)
    assert [(case.unfinished, case.skipped) for case in verdict.cases] == [(True, False)] + [(False, True)] * 7
    assert str(verdict) == (
        f"练习 {SDPA}“实现缩放点积注意力”：未完成\n"
        f"  提示：你的函数还没有写完（test_exercises.py 第 {line} 行抛出了 NotImplementedError）。"
        "把那行 raise 换成你的实现，再运行检查。")


def test_verdict_words_are_constants():
    assert (PASSED, FAILED, UNFINISHED) == ("通过", "未通过", "未完成")
    assert check_by_name(S.split_heads).state == PASSED
    assert check_by_name(renamed(split_without_transpose, "split_heads")).state == FAILED


# --- the solutions, and any wrong answer -----------------------------------------------


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_solution_passes(exercise_id):
    exercise = EXERCISES[exercise_id]
    verdict = check_by_name(getattr(solutions, exercise.answer_name))
    n = len(verdict.cases)
    assert verdict.passed and n >= 4, str(verdict)
    assert str(verdict) == repr(verdict) == f"练习 {exercise_id}“{exercise.title}”：通过（{n}/{n} 个用例）"


def answer_returning_none(exercise):
    if exercise.kind == "class":
        class Layer(keras.layers.Layer):
            def __init__(self, *args, **kwargs):
                super().__init__()

            def call(self, *args, **kwargs):
                return None

        return Layer
    return lambda *args, **kwargs: None


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_an_answer_returning_nothing_fails_without_a_traceback(exercise_id):
    verdict = check(exercise_id, answer_returning_none(EXERCISES[exercise_id]))
    assert verdict.state == FAILED and "Traceback" not in str(verdict), str(verdict)


@pytest.mark.parametrize("exercise_id", [*CONCEPTUAL, "4.5.99", "", None])  # noqa: PT006
def test_unknown_or_conceptual_id_raises(exercise_id):
    match = "思考题" if exercise_id in CONCEPTUAL else "没有编号为"
    with pytest.raises(ValueError, match=match) as info:
        check(exercise_id, S.scaled_dot_product_attention)
    assert "、".join(list(EXERCISES)[:2]) in str(info.value)  # lists the valid ids


def test_check_by_name_needs_a_name_some_exercise_asks_for():
    with pytest.raises(ValueError, match="没有哪道练习要求名为 'my_attention'") as info:
        check_by_name(renamed(S.split_heads, "my_attention"))
    assert "scaled_dot_product_attention" in str(info.value)


def test_seed_makes_the_report_reproducible():
    wrong = attention_variant(scale=False)
    assert str(check(SDPA, wrong, seed=3)) == str(check(SDPA, wrong, seed=3))
    assert str(check(SDPA, wrong)) != str(check(SDPA, wrong))  # fresh inputs by default


@pytest.mark.parametrize("limit", [0, -1, float("nan"), float("inf"), "5", True])
def test_time_limit_must_be_a_finite_positive_number(limit):
    with pytest.raises(ValueError, match="time_limit 必须是有限的正数"):
        check(SDPA, S.scaled_dot_product_attention, time_limit=limit)


# --- planted mistakes: shapes -------------------------------------------------------


def shapes_depth_is_d_model(batch, n_q, n_k, d_model, num_heads):
    return {**A.attention_shapes(batch, n_q, n_k, d_model, num_heads), "query": (batch, num_heads, n_q, d_model)}


def shapes_swapped(batch, n_q, n_k, d_model, num_heads):
    return {**A.attention_shapes(batch, n_k, n_q, d_model, num_heads), "output": (batch, n_q, d_model)}


def shapes_without_transpose(batch, n_q, n_k, d_model, num_heads):
    return {**A.attention_shapes(batch, n_q, n_k, d_model, num_heads),
            "key": (batch, n_k, num_heads, d_model // num_heads)}


# --- scaled dot-product attention ----------------------------------------------------


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


# --- heads ---------------------------------------------------------------------------


def split_without_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return tf.reshape(x, (batch, num_heads, seq, d_model // num_heads))


def merge_without_transpose(x):
    batch, heads, seq, depth = x.shape
    return tf.reshape(x, (batch, seq, heads * depth))


# --- shape tests ---------------------------------------------------------------------


def shape_test_checks_nothing(layer_cls):
    layer_cls(16, 4)(tf.zeros((2, 5, 16)))


def shape_test_always_fails(layer_cls):
    raise AssertionError("形状不对")


# --- cross-attention, masks, cost, linear attention ----------------------------------


def cross_roles_swapped(x, context, wq, wk, wv):
    return A.cross_attention(context, x, wq, wk, wv)


def padding_inverted(lengths, max_len):
    return tf.logical_not(A.padding_mask(lengths, max_len))


def padding_all_true(lengths, max_len):
    return tf.ones((len(lengths), 1, max_len), tf.bool)


def padding_float(lengths, max_len):
    return tf.cast(A.padding_mask(lengths, max_len), tf.float32)


def padding_two_d(lengths, max_len):
    return tf.sequence_mask(lengths, max_len)  # (batch, max_len): does not broadcast


def decoder_upper(lengths, n):
    i, j = tf.range(n)[:, None], tf.range(n)[None, :]
    return (j >= i) & (j < tf.reshape(lengths, (-1, 1, 1)))


def decoder_causal_only(lengths, n):
    return tf.broadcast_to(A.decoder_mask([n], n), (len(lengths), n, n))


def decoder_padding_only(lengths, n):
    return tf.broadcast_to(A.padding_mask(lengths, n), (len(lengths), n, n))


def bytes_in_mib(n_q, n_k, batch=1, heads=1, dtype="float32"):
    return A.score_table_bytes(n_q, n_k, batch, heads, dtype) / 2**20


def bytes_without_itemsize(n_q, n_k, batch=1, heads=1, dtype="float32"):
    return batch * heads * n_q * n_k


def linear_via_softmax(query, key, value):
    return A.scaled_dot_product_attention(query, key, value)[0]


def linear_with_table(query, key, value):
    a = tf.matmul(tf.nn.elu(query) + 1, tf.nn.elu(key) + 1, transpose_b=True)  # (n_q, n_k)
    return (a @ value) / tf.reduce_sum(a, -1, keepdims=True)


def linear_with_rank4_table(query, key, value):
    phi_q, phi_k = tf.nn.elu(query) + 1, tf.nn.elu(key) + 1
    table = tf.matmul(phi_q[..., :, None, :], tf.linalg.matrix_transpose(phi_k)[..., None, :, :])  # (..., n_q, 1, n_k)
    return tf.squeeze(tf.matmul(table, value[..., None, :, :]), -2) / tf.reduce_sum(table, -1)


def linear_quadratic_when_eager(query, key, value):
    if tf.executing_eagerly():
        return linear_with_table(query, key, value)
    return A.linear_attention(query, key, value)


def linear_in_numpy(query, key, value):
    phi_q, phi_k = (tf.nn.elu(t).numpy() + 1 for t in (query, key))
    return phi_q @ (np.swapaxes(phi_k, -1, -2) @ value.numpy()) / (phi_q @ phi_k.sum(-2)[..., None])


PLANTED = [  # (the answer's name, a wrong answer, what the report must say)
    ("attention_shapes", shapes_depth_is_d_model, "看起来把 d_model 当成了每头维度"),
    ("attention_shapes", shapes_swapped, "看起来把 n_q 和 n_k 弄反了"),
    ("attention_shapes", shapes_without_transpose, "看起来只 reshape 没有 transpose"),
    ("scaled_dot_product_attention", attention_variant(scale=False), "看起来没有除以 √d_k"),
    ("scaled_dot_product_attention", attention_variant(mask_mode="ignored"), "看起来忽略了掩码"),
    ("scaled_dot_product_attention", attention_variant(mask_mode="inverted"), "看起来掩码用反了"),
    ("scaled_dot_product_attention", attention_variant(axis=-2), "看起来 softmax 用错了轴"),
    ("scaled_dot_product_attention", attention_variant(zero_empty_rows=False), "整行被遮住时得到了均匀的注意力权重"),
    ("scaled_dot_product_attention", attention_variant(fill=-np.inf, zero_empty_rows=False), "出现了 NaN"),
    ("scaled_dot_product_attention", attention_variant(fill=-30.0, zero_empty_rows=False),
     "被掩码遮住的位置，注意力权重应恰好为 0，得到 "),
    ("split_heads", split_without_transpose, "看起来只 reshape 没有 transpose"),
    ("merge_heads", merge_without_transpose, "看起来只 reshape 没有 transpose"),
    ("FixedMultiHeadAttention", BuggyMultiHeadAttention, "注意力权重与按 √d_model 缩放的结果一致：那一行还没改对"),
    ("shape_test", shape_test_checks_nothing, "变体“交叉注意力忽略了 context”没有被你的测试发现"),
    ("shape_test", shape_test_always_fails, "你的测试把正确的 MiniMultiHeadAttention 判为错误：AssertionError: 形状不对"),
    ("cross_attention", cross_roles_swapped, "看起来查询与键/值的来源弄反了"),
    ("padding_mask", padding_inverted, "看起来掩码反了"),
    ("padding_mask", padding_all_true, "看起来没有用到 lengths"),
    ("padding_mask", padding_float, "掩码必须是布尔张量，得到 float32"),
    ("padding_mask", padding_two_d, "不能广播到分数的形状"),
    ("decoder_mask", decoder_upper, "看起来用了上三角"),
    ("decoder_mask", decoder_causal_only, "看起来忘了填充部分"),
    ("decoder_mask", decoder_padding_only, "看起来忘了因果部分"),
    ("score_table_bytes", bytes_in_mib, "看起来单位不是字节"),
    ("score_table_bytes", bytes_without_itemsize, "看起来忘了乘每个数所占的字节数"),
    ("linear_attention", linear_via_softmax, "看起来算的是 softmax 注意力"),
    ("linear_attention", linear_via_softmax, "你的实现构造了随 n_q × n_k 增长的张量"),
    ("linear_attention", linear_with_table, "用 tf.function 追踪时你的实现构造了随 n_q × n_k 增长的张量"
                                            "（算子 BatchMatMulV2 输出 (1, 512, 384)；"),
    ("linear_attention", linear_with_rank4_table, "（算子 BatchMatMulV2 输出 (1, 512, 1, 384)；"),
    ("linear_attention", linear_quadratic_when_eager, "直接（eager）运行时你的实现构造了随 n_q × n_k 增长的张量"),
    ("linear_attention", linear_in_numpy, "请只用 TensorFlow 算子来写"),
]


@pytest.mark.parametrize("name, answer, needle", PLANTED,
                         ids=[f"{ID[n]}-{getattr(a, '__name__', 'answer')}" for n, a, _ in PLANTED])
def test_planted_mistake_fails_with_its_diagnosis(name, answer, needle):
    assert needle in report(ID[name], answer)


def test_failure_report_lists_only_failed_cases():
    verdict = check(SDPA, attention_variant(mask_mode="ignored"))
    lines = str(verdict).splitlines()
    failed = [case for case in verdict.cases if not case.passed]
    assert lines[0] == f"练习 {SDPA}“实现缩放点积注意力”：未通过（5/8 个用例）"
    assert lines[1:] == [f"  ✗ 用例“{case.name}”：{case.message}" for case in failed]
    assert [case.name for case in failed] == ["填充掩码", "因果掩码", "有一整行被遮住"]


def test_shape_and_value_messages_name_expected_got_and_where():
    text = report(ID["split_heads"], lambda x, h: tf.transpose(split_without_transpose(x, h), (0, 1, 3, 2)))
    assert "形状不对：期望 (2, 3, 5, 4)，得到 (2, 3, 4, 5)" in text
    text = report(SDPA, attention_variant(scale=False))
    assert "注意力权重的数值不对：最大误差 " in text and "（容差 " in text and "），出现在位置 (" in text


def test_buggy_layer_passes_where_the_bug_is_invisible():
    verdict = check(ID["FixedMultiHeadAttention"], BuggyMultiHeadAttention)
    outcome = {case.name: case.passed for case in verdict.cases}
    assert outcome["单头（num_heads = 1）"] and not outcome["8 个头"]


def test_shape_test_that_raises_another_error_is_noted():
    def shape_test(layer_cls):
        layer = layer_cls(16, 4)
        x, context = tf.zeros((2, 5, 16)), tf.zeros((2, 7, 16))
        out, weights = layer(x, context, return_attention_scores=True)
        if out.shape != (2, 5, 16) or weights.shape != (2, 4, 5, 7):
            raise RuntimeError("shape")

    verdict = check(ID["shape_test"], shape_test)
    assert verdict.passed
    assert "抛出的是 RuntimeError 而不是 AssertionError" in str(verdict)


def test_each_slipped_mutant_is_named():
    text = report(ID["shape_test"], lambda layer_cls: None)
    for name in ("忘了合并多头", "交叉注意力忽略了 context", "注意力权重少了头轴", "输出投影的宽度不对"):
        assert f"变体“{name}”没有被你的测试发现" in text


# --- cheating ------------------------------------------------------------------------


def test_cached_output_fails():
    cache = {}

    def cached(query, key, value, mask=None):
        if "result" not in cache:
            cache["result"] = attention_variant()(query, key, value, mask)
        return cache["result"]

    assert "两组不同的输入得到了完全相同的结果" in report(SDPA, cached)


def test_calling_the_reference_fails_even_under_another_name():
    from attnbook import scaled_dot_product_attention as my_attention

    for answer in (lambda q, k, v, mask=None: attnbook.scaled_dot_product_attention(q, k, v, mask),
                   lambda q, k, v, mask=None: my_attention(q, k, v, mask)):
        text = report(SDPA, answer)
        assert "你的函数直接调用了参考实现 attnbook.scaled_dot_product_attention：请自己写出这一步。" in text
        assert "其余 7 个用例未运行。" in text
    from attnbook.exercises.checkers import numpy_ref

    numpy_answer = lambda q, k, v, mask=None: numpy_ref.attention(q, k, v, mask)  # noqa: E731
    assert "直接调用了参考实现 attnbook.exercises.checkers.numpy_ref.attention" in report(SDPA, numpy_answer)
    assert "参考实现 attnbook.padding_mask" in report(ID["padding_mask"], lambda l, m: attnbook.padding_mask(l, m))
    assert "参考实现 attnbook.linear_attention" in report(ID["linear_attention"], attnbook.linear_attention)


def test_the_references_private_core_is_tripwired_too():
    """The four steps live in attention._attend and the layer's _compute_attention; a
    one-line call to either is the reference, not an answer (review round 4)."""
    from attnbook import attention
    from attnbook.minimal import MiniMultiHeadAttention as Minimal

    attend = lambda q, k, v, mask=None: attention._attend(q, k, v, mask)  # noqa: E731
    step = lambda q, k, v, mask=None: attnbook.MiniMultiHeadAttention._compute_attention(  # noqa: E731
        None, q, k, v, mask)
    assert "参考实现 attnbook.attention._attend" in report(SDPA, attend)
    assert "参考实现 attnbook.MiniMultiHeadAttention._compute_attention" in report(SDPA, step)
    cross = lambda x, c, wq, wk, wv: attention._attend(x @ wq, c @ wk, c @ wv)  # noqa: E731
    assert "参考实现 attnbook.attention._attend" in report(ID["cross_attention"], cross)

    def shapes_by_running(batch, n_q, n_k, d_model, num_heads):
        Minimal(d_model, num_heads)(tf.zeros((batch, n_q, d_model)))
        return A.attention_shapes(batch, n_q, n_k, d_model, num_heads)

    assert "参考实现 attnbook.minimal.MiniMultiHeadAttention" in report(ID["attention_shapes"], shapes_by_running)


def test_handing_the_fix_to_the_reference_layers_steps_or_attention_fails():
    """A fix that rebuilds call from the reference layer's own steps, or sends each head to
    the public attention, writes no attention of its own (review round 10)."""
    class FromSteps(attnbook.MiniMultiHeadAttention):
        def call(self, x, context=None, return_attention_scores=False):
            context = x if context is None else context
            batch = tf.shape(x)[0]
            q, k, v = (self._split_heads(dense(t), batch) for dense, t in
                       ((self.wq, x), (self.wk, context), (self.wv, context)))
            out, weights = self._compute_attention(q, k, v)
            out = self._project_output(out, batch)
            return (out, weights) if return_attention_scores else out

    class Delegates(BuggyMultiHeadAttention):
        def attend(self, q, k, v):
            return attnbook.scaled_dot_product_attention(q, k, v)

    fixed = ID["FixedMultiHeadAttention"]
    assert "参考实现 attnbook.MiniMultiHeadAttention._split_heads" in report(fixed, FromSteps)
    assert "参考实现 attnbook.scaled_dot_product_attention" in report(fixed, Delegates)
    buggy_split = lambda x, num_heads: BuggyMultiHeadAttention.split_heads(  # noqa: E731
        SimpleNamespace(num_heads=num_heads, depth=x.shape[-1] // num_heads), x)
    assert "参考实现 attnbook.exercises.buggy.BuggyMultiHeadAttention.split_heads" in report(ID["split_heads"], buggy_split)


def test_subclassing_the_reference_layer_fails():
    class Fixed(attnbook.MiniMultiHeadAttention):
        pass

    assert "你的层直接调用了参考实现 attnbook.MiniMultiHeadAttention" in report(ID["FixedMultiHeadAttention"], Fixed)


# --- mixed precision -----------------------------------------------------------------


def test_layer_built_under_mixed_bfloat16_is_accepted(mixed_bfloat16):
    class Fixed(A.FixedMultiHeadAttention):
        def call(self, x, context=None, return_attention_scores=False):
            dtypes = (self.wq.compute_dtype, self.wq.variable_dtype)
            if dtypes != ("bfloat16", "float32"):  # it really runs in bfloat16, in the child
                raise TypeError(f"built as {dtypes}")
            return super().call(x, context, return_attention_scores)

    verdict = check(ID["FixedMultiHeadAttention"], Fixed)
    assert verdict.passed, str(verdict)
    assert keras.config.dtype_policy().name == "mixed_bfloat16"  # the reader's policy is kept
    keras.config.set_dtype_policy("float32")  # the same layer under float32 fails: the child used the policy
    assert "built as ('float32', 'float32')" in report(ID["FixedMultiHeadAttention"], Fixed)


def in_bfloat16(attention):
    def answer(query, key, value, mask=None):
        return tuple(tf.cast(t, tf.bfloat16) for t in attention(query, key, value, mask))

    return answer


@pytest.mark.parametrize(
    "name, answer, needle",
    [
        ("FixedMultiHeadAttention", BuggyMultiHeadAttention, "那一行还没改对"),
        ("shape_test", S.shape_test, None),
        ("scaled_dot_product_attention", in_bfloat16(A.scaled_dot_product_attention), "精度低于输入的 float32"),
        ("scaled_dot_product_attention", in_bfloat16(attention_variant(scale=False)), "精度低于输入的 float32"),
    ],
    ids=["buggy-layer", "shape-test", "bfloat16-attention", "bfloat16-unscaled"],
)
def test_bfloat16_tolerance_still_tells_right_from_wrong(mixed_bfloat16, name, answer, needle):
    verdict = check(ID[name], answer)
    assert verdict.passed == (needle is None), str(verdict)
    assert needle is None or needle in str(verdict)


# --- robustness ----------------------------------------------------------------------


def gone(pid, within=5.0):
    """Whether process ``pid`` has ended (within a few seconds)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_hanging_answer_times_out_quickly_and_its_process_ends(tmp_path):
    pid_file = tmp_path / "pid"

    def hangs(query, key, value, mask=None):
        pid_file.write_text(str(os.getpid()))
        while True:
            time.sleep(0.05)

    start = time.perf_counter()
    text = report(SDPA, hangs, time_limit=1)
    assert time.perf_counter() - start < 5
    assert "超时：超过 1 秒没有返回" in text and "其余 7 个用例未运行。" in text
    pid = int(pid_file.read_text())
    assert pid != os.getpid() and gone(pid)  # it ran in the child, and the child was killed


def raising_answer(query, key, value, mask=None):
    return query.shape[-1] + "oops"  # TypeError: the line the report must name


def test_raising_answer_reports_type_and_line():
    line = raising_answer.__code__.co_firstlineno + 1
    assert "你的函数抛出了 TypeError: " in report(SDPA, raising_answer)
    assert f"（test_exercises.py 第 {line} 行）" in report(SDPA, raising_answer)


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
    assert needle in report(SDPA, lambda q, k, v, mask=None: returned)


def test_none_inside_a_returned_pair_is_not_blamed_on_a_missing_return():
    text = report(SDPA, lambda q, k, v, mask=None: (tf.zeros((2, 5, 8)), None))
    assert "weights 应是张量，得到 None" in text and "忘了 return" not in text


def test_numpy_results_are_accepted():
    def numpy_padding_mask(lengths, max_len):
        return np.arange(max_len)[None, None, :] < np.asarray(lengths)[:, None, None]

    assert check(ID["padding_mask"], numpy_padding_mask).passed


@pytest.mark.parametrize(
    "exercise_id, answer, needle",
    [
        (SDPA, 42, "应提交函数 scaled_dot_product_attention(query, key, value, mask=None)"),
        (ID["FixedMultiHeadAttention"], S.FixedMultiHeadAttention(8, 2), "得到的是它的一个实例"),
        (ID["FixedMultiHeadAttention"], S.scaled_dot_product_attention, "keras.layers.Layer 的子类），得到 function"),
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
    assert out.strip() == f"练习 {SDPA}“实现缩放点积注意力”：通过（8/8 个用例）"


def test_cli_syntax_error_exits_2_without_traceback(cli_runs):
    code, out, err = cli_runs("syntax")
    assert code == 2
    assert "syntax.py 第 1 行有语法错误" in err and "Traceback" not in err + out


def test_cli_fails_a_wrong_file(cli_runs):
    code, out, err = cli_runs("wrong")
    assert code == 1, err
    assert out.startswith(f"练习 {SDPA}“实现缩放点积注意力”：未通过（") and "看起来没有除以 √d_k" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        ([SDPA, "missing.py"], "找不到文件：missing.py"),
        ([CONCEPTUAL[0], "{answer}"], "思考题"),
        ([SDPA, "{answer}", "--name", "attend"], "answer.py 里没有名为 attend 的函数或类"),
        ([SDPA], "需要练习编号和答案文件"),
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


def test_cli_main_reports_a_stub_as_unfinished(tmp_path, capsys):
    (tmp_path / "stub.py").write_text(EXERCISES[SDPA].stub, encoding="utf-8")
    assert main([SDPA, str(tmp_path / "stub.py")]) == 1
    assert capsys.readouterr().out.splitlines()[0].endswith(f"：{UNFINISHED}")


def test_cli_main_takes_another_name(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(GOOD_ANSWER.replace("def scaled_dot_product_attention", "def attend"),
                                        encoding="utf-8")
    assert main([SDPA, str(tmp_path / "answer.py"), "--name", "attend"]) == 0


def test_cli_main_lists_every_exercise(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for exercise in EXERCISES.values():
        assert f"{exercise.id}" in out and exercise.title in out and exercise.answer_name in out
