"""The claims ledger: every verdict is computed from recorded values, and can fail.

book/claims.yml quotes the manuscript and states a check for each claim; the evaluator
in book/_ext/resolving/claims.py decides it from the values the book's cells glued. The unit tests
here run the evaluator on values made up for the purpose (no build): a value that breaks
a check flips the verdict, and a check that names an unrecorded value, meets a NaN or is
malformed cannot decide and fails. The ``book`` tests at the end read the built ledger.
"""

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import section_texts
from book._ext.reading import editorial as editorial_ext
from book._ext.resolving import claims as claims_ext
from book._ext.shared import claim_checks, claim_tests
from buildfiles import EXECUTED, ROOT, soup

CLAIMS = claim_checks.load_claims(ROOT / "book" / "claims.yml")
BY_ID = {claim["id"]: claim for claim in CLAIMS}
IDS = set(BY_ID)
PAGES = sorted((ROOT / "book").rglob("*.md"))
CheckError = claim_checks.CheckError


def cell_tags():
    """``{claim id: [page]}`` for every code cell tag ``claim-<id>`` in the book's pages."""
    found = {}
    for page in PAGES:
        for tags in re.findall(r"^:?tags: \[(.*?)\]", page.read_text(encoding="utf-8"), re.M):
            for tag in (t.strip() for t in tags.split(",")):
                if tag.startswith(claims_ext.TAG_PREFIX):
                    found.setdefault(tag[len(claims_ext.TAG_PREFIX):], []).append(page.name)
    return found


def notes_on_claims():
    """Claim ids named by ``:correction:``, ``:qualifies:`` or ``:checks:`` (several, space-separated)."""
    return {claim_id for page in PAGES
            for ids in re.findall(r"^:(?:correction|qualifies|checks): (.+)$", page.read_text(encoding="utf-8"), re.M)
            for claim_id in re.split(r"[\s,]+", ids.strip())}


# --- claims.yml itself ------------------------------------------------------------------


def test_at_least_twenty_claims():
    assert len(CLAIMS) >= 20


OWNERS, QUOTE_ERRORS = claim_checks.claim_sections(CLAIMS, section_texts.SECTIONS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim["id"])
def test_quote_is_its_sections_manuscript_word_for_word(claim):
    """Each claim belongs to the one section whose manuscript has its quote (the build fails
    on the same errors, naming the claim: book/_ext/resolving/claims.py)."""
    assert claim["id"] in OWNERS, [e for e in QUOTE_ERRORS if repr(claim["id"]) in e]


@pytest.mark.parametrize("section", section_texts.SECTIONS, ids=section_texts.ids())
def test_claims_are_in_the_order_their_manuscript_first_makes_them(section):
    """The ledger says its rows follow the manuscript: each quote first appears after the last."""
    claims = [claim for claim in CLAIMS if OWNERS.get(claim["id"]) == section.number]
    where = [section.text.source.find(claim["quote"]) for claim in claims]
    out_of_order = [(a["id"], b["id"]) for a, b, i, j in zip(claims, claims[1:], where, where[1:]) if j < i]
    assert not out_of_order, out_of_order


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim["id"])
def test_every_claim_is_decided_by_a_check_or_names_its_literature(claim):
    assert ("check" in claim) != bool(claim.get("unverifiable") or claim.get("unsourced")), claim["id"]
    if "check" in claim:
        check = claim["check"]
        for key in ("holds", "partly", *check.get("let", {})):
            expression = check.get(key) or check.get("let", {}).get(key)
            if expression:
                claim_checks.parse_expression(expression)
        for template in [check.get("values", ""), *check["reason"].values()]:
            claim_checks.template_names(template)
    else:
        assert str(claim.get("reason", "")).strip(), f"{claim['id']}: a literature claim says why"


@pytest.mark.parametrize("claim", [c for c in CLAIMS if "check" in c], ids=lambda claim: claim["id"])
def test_every_value_a_check_reads_is_glued_by_a_page(claim):
    """Static: each name a check reads appears in a glue(...) call of some page (a name
    glued as an f-string, ``glue(f"scale_max_diff_{name}", …)``, matches by its ends)."""
    plain, patterns = set(), set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        plain |= set(re.findall(r'glue\("(\w+)"', text))
        patterns |= set(re.findall(r'glue\(f"(\w*)\{\w+\}(\w*)"', text))
    check = claim["check"]
    let = set(check.get("let") or {}) | ({"judged"} if "files" in check else set())   # judged: the ledger's
    names = set()
    for expression in [check["holds"], check.get("partly", ""), *(check.get("let") or {}).values()]:
        if expression:
            names |= set(claim_checks.parse_expression(expression)[1])
    for template in [check.get("values", ""), *check["reason"].values()]:
        names |= set(claim_checks.template_names(template))
    unknown = sorted(n for n in names - let - plain
                     if not any(n.startswith(a) and n.endswith(b) for a, b in patterns))
    assert not unknown, f"{claim['id']}: no page glues {unknown}"


def test_every_backing_names_a_claim():
    named = set(claim_tests.test_backings(ROOT / "tests")) | set(cell_tags()) | notes_on_claims()
    assert named - IDS == set(), "tests, cell tags or editor's notes name claims not in claims.yml"


def test_cited_literature_is_in_the_bibliography():
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    cited = {key for claim in CLAIMS for key in claim.get("unverifiable", [])}
    cited |= {key for claim in CLAIMS for key in re.findall(r"\{cite:[tp]\}`(\w+)`", str(claim.get("note", "")))}
    assert cited <= keys, cited - keys


def test_the_scan_finds_a_marked_test(tmp_path):
    """The backing scan itself can fail: it sees a marker, and only a marker."""
    (tmp_path / "test_x.py").write_text(
        'import pytest\n\n@pytest.mark.claim("a")\ndef test_a():\n    pass\n\n'
        '@pytest.mark.slow\ndef test_b():\n    pass\n', encoding="utf-8")
    assert claim_tests.test_backings(tmp_path) == {"a": [("tests/test_x.py", "test_a", 4)]}


# --- the evaluator: verdicts flip with the values ----------------------------------------

def bench_values(*files):
    """The ``bench_<name>`` values the cost page glues for these results files (none: the
    empty folder). ``files`` are paths of results files."""
    from attnbook import bench

    loaded = [(Path(path).name, bench.check_results(json.loads(Path(path).read_text(encoding="utf-8"))))
              for path in files]
    return {f"bench_{name}": values for name, values in bench.file_values(loaded).items()}


BENCH_DATA = ROOT / "book" / "data" / "bench"
CPU_FILES = sorted(BENCH_DATA.glob("*.json"))   # committed: produced on a CPU
GPU_FIXTURE = ROOT / "tests" / "fixtures" / "bench-gpu-test-fixture.json"   # made up, for tests only
NO_FILES = bench_values()
TIMINGS = {"timing_lengths": [64, 128, 256, 512], "build_cpu_count": 2,
           "build_machine": "2 个 CPU 核，TensorFlow 2.21.0",
           "forward_ms_gru": [3.1, 4.2, 9.7, 17.5], "forward_ms_attention": [1.4, 1.6, 2.9, 7.6],
           "train_ms_gru": [7.7, 10.8, 23.7, 46.3], "train_ms_attention": [2.0, 3.1, 6.6, 23.0], **NO_FILES}


def verdict(claim_id, **values):
    return claim_checks.evaluate(BY_ID[claim_id], values)


def cpu_branch(claim_id, **values):
    """The verdict this build's numbers alone would give a row that only a results file of
    parallel hardware may decide (``files: required:`` left out)."""
    claim = BY_ID[claim_id]
    files = {k: v for k, v in claim["check"]["files"].items() if k != "required"}
    return claim_checks.evaluate(dict(claim, check=dict(claim["check"], files=files)), values)


def segment_slopes(x, y):
    return [math.log(y2 / y1) / math.log(x2 / x1) for x1, x2, y1, y2 in zip(x, x[1:], y, y[1:])]


def throughput(train_ms_attention, train_ms_gru=TIMINGS["train_ms_gru"]):
    """The values the cost page glues for the throughput row, from training-step times."""
    ns = TIMINGS["timing_lengths"]
    values = {"build_cpu_count": 2, "timing_lengths": ns, **NO_FILES,
              "build_machine": "2 个 CPU 核，TensorFlow 2.21.0",
              "timing_segments": [f"{a}→{b}" for a, b in zip(ns, ns[1:])],
              "train_time_segment_slopes_attention": segment_slopes(ns, train_ms_attention)}
    for label, ms in [("attention", train_ms_attention), ("gru", train_ms_gru)]:
        values[f"train_throughput_{label}"] = [4 * n / (t / 1e3) for n, t in zip(ns, ms)]
        values[f"train_throughput_segment_slopes_{label}"] = segment_slopes(ns, values[f"train_throughput_{label}"])
    return values


def test_the_throughput_verdict_reads_each_segment_on_this_machine_only():
    """Throughput that rises 58 % from n = 64 to 256 and then falls (the audit's build):
    no segment is near-linear, and the reason says so segment by segment, on this machine."""
    rising_then_falling = throughput([3.0, 5.0, 7.6, 34.6])
    result = verdict("training-throughput", **rising_then_falling)
    assert result.kind == "literature" and "所以这一行无法在本书中验证" in result.reason   # no GPU file
    assert "2 个 CPU 核的构建机器既证实不了、也推翻不了它" in result.reason
    assert cpu_branch("training-throughput", **rising_then_falling).kind == "fails"
    assert "本次构建的数只描述构建机器：在本次构建的机器上（2 个 CPU 核，TensorFlow 2.21.0）" in result.reason
    assert "各段（64→128、128→256、256→512）的斜率依次是 0.26、0.40、-1.19，即上升、上升、下降" in result.reason
    assert "从 n = 64 到 512，注意力训练吞吐在两端之间的斜率（对数坐标下）是 -0.18，不升反降：n = 512 时的吞吐是 n = 64 时的 0.69 倍" in result.reason
    level = cpu_branch("training-throughput", **throughput([3.0, 5.0, 7.6, 24.0]))   # 8x n, 8x time
    assert "两端之间的斜率（对数坐标下）是 0.00，几乎没有变化：n = 512 时的吞吐是 n = 64 时的 1.00 倍" in level.reason
    assert "本书没有测的部分：并行硬件" in result.reason and "GPU" in result.reason
    assert "2 个 CPU 核" in result.values and "TensorFlow 2.21.0" in result.values


def test_the_throughput_verdict_reads_the_whole_range_not_one_noisy_segment():
    """Near-linear over the whole range (capped: parallel hardware is not measured); rising
    slower than linear; and one in-band segment after a jump (the review's build) decides nothing."""
    flat_time = cpu_branch("training-throughput", **throughput([2.0, 2.0, 2.0, 2.0]))
    assert flat_time.kind == "partly" and "两端之间的斜率（对数坐标下）是 1.00，在 1 ± 0.3 之内" in flat_time.reason
    assert flat_time.reason.endswith("本书没有数据。") and "本书没有测的部分：并行硬件" in flat_time.reason
    rising = cpu_branch("training-throughput", **throughput([2.0, 2.0, 4.0, 8.0]))   # 8x n, 4x time
    assert rising.kind == "partly" and "两端之间的斜率（对数坐标下）是 0.33：随 n 上升，但比线性慢" in rising.reason
    jump = cpu_branch("training-throughput", **throughput([3.19, 6.0, 47.3, 53.7]))   # in band only at 256→512
    assert jump.kind == "fails" and "即近乎线性、下降、近乎线性" not in jump.reason
    assert "各段（64→128、128→256、256→512）的斜率依次是" in jump.reason and "作为对照，GRU 在同一范围上是" in jump.reason


def test_attention_slower_at_one_length_makes_short_sequences_partly_true():
    """Speed against an RNN can be measured on one CPU: the row is judged on this build's
    machine, names it, and is capped (memory and other hardware are not measured)."""
    fast = verdict("short-sequences", **TIMINGS)   # faster everywhere, but memory is not measured there
    assert fast.kind == "partly" and fast.reason.startswith("时间上，在本次构建的机器上（2 个 CPU 核，TensorFlow 2.21.0）、批次大小 4 时，测到的几百步以内的每个长度上") and "没有测内存" in fast.reason
    slower = dict(TIMINGS, forward_ms_attention=[1.4, 1.6, 2.9, 30.8])   # the n = 512
    result = verdict("short-sequences", **slower)
    assert result.kind == "partly"
    assert "30.8" in result.values and "64、128、256" in result.reason
    never = dict(TIMINGS, forward_ms_attention=[99.0] * 4, train_ms_attention=[99.0] * 4)
    assert verdict("short-sequences", **never).kind == "fails"
    with_file = verdict("short-sequences", **dict(TIMINGS, **bench_values(*CPU_FILES)))   # batch 8: 1.63 at 512
    assert f"但别的配置不是处处至少快一倍：结果文件 {CPU_FILES[0].name} 在几百步以内" in with_file.reason   # this build: ≥ 2
    both_short = verdict("short-sequences", **dict(slower, **bench_values(*CPU_FILES)))   # this build: < 2 too
    assert f"别的配置也不是处处至少快一倍：结果文件 {CPU_FILES[0].name} 在几百步以内" in both_short.reason
    assert "判定要求处处不小于 2" in with_file.reason and "提交进本书的别的配置" not in with_file.reason


def test_every_results_file_that_falls_short_is_named(tmp_path):
    copy = tmp_path / "zz-copy.json"
    copy.write_text(CPU_FILES[0].read_text(encoding="utf-8"), encoding="utf-8")
    both = verdict("short-sequences", **dict(TIMINGS, **bench_values(CPU_FILES[0], copy)))
    assert f"结果文件 {CPU_FILES[0].name}、zz-copy.json 在几百步以内的时间之比有低于 2 的" in both.reason


def test_a_results_file_short_only_beyond_a_thousand_steps_is_not_named():
    """The row judges 几百步以内: another file whose GRU/attention ratio falls under 2 only
    at n ≥ 1000 is not named, and one that falls under 2 at n = 512 is."""
    values = bench_values(*CPU_FILES)
    lengths = [n for n in values["bench_timing_lengths"][0]] + [2048]
    long_only = dict(values, bench_timing_lengths=[lengths],
                     bench_forward_speedup=[[3.0] * (len(lengths) - 1) + [1.5]],
                     bench_train_speedup=[[3.0] * len(lengths)])
    passes = verdict("short-sequences", **dict(TIMINGS, **long_only)).reason
    assert "其余结果文件，几百步以内的时间之比也都不低于 2" in passes and "有低于 2 的" not in passes
    at_512 = dict(long_only, bench_forward_speedup=[[3.0] * (len(lengths) - 2) + [1.9, 3.0]])
    assert f"结果文件 {CPU_FILES[0].name} 在几百步以内" in verdict("short-sequences", **dict(TIMINGS, **at_512)).reason


COUNTED = {"score_counted_lengths": [250, 500, 1000, 2000],
           "score_counted_pairs": [250 ** 2, 500 ** 2, 1000 ** 2, 2000 ** 2]}
QUADRATIC = {**COUNTED, "build_cpu_count": 2, "build_machine": "2 个 CPU 核，TensorFlow 2.21.0",
             "variant_lengths": [2048, 4096, 8192], "variant_segments": ["2048→4096", "4096→8192"]}


@pytest.mark.parametrize("memory, kind, because", [
    ([1.92, 1.99], "partly", "都在 2 ± 0.3 之内，与按平方增长相符"),
    ([1.2, 1.9], "partly", "不是每一段都在 2 ± 0.3 之内"),
    ([3.0, 3.0], "partly", "不是每一段都在 2 ± 0.3 之内")])   # cubic growth is not quadratic
def test_the_quadratic_verdict_counts_the_work_and_reports_time_by_segment(memory, kind, because):
    """计算 is counted, memory measured, 显存 not measured; the time of full attention (a flat
    segment and a steep one, the audit's 19.2, 27.4 and 139.3 ms) decides nothing."""
    time = segment_slopes([2048, 4096, 8192], [19.2, 27.4, 139.3])
    result = verdict("quadratic-growth", variant_memory_segments_full=memory, variant_time_segments_full=time,
                     **QUADRATIC)
    assert result.kind == kind
    assert because in result.reason and "显存" in result.reason
    assert "相邻两个 n 之比依次是 2、2、2，实际算出的分数个数之比依次是 4.0、4.0、4.0" in result.reason
    assert "各段（2048→4096、4096→8192）斜率依次是 0.51、2.35" in result.reason
    for other_time in ([0.1, 0.1], [3.0, 3.0]):   # time is reported, not judged
        again = verdict("quadratic-growth", variant_memory_segments_full=memory,
                        variant_time_segments_full=other_time, **QUADRATIC)
        assert again.kind == kind
    windowed = dict(QUADRATIC, score_counted_pairs=[250 * 257, 500 * 257, 1000 * 257, 2000 * 257])
    assert verdict("quadratic-growth", variant_memory_segments_full=memory, variant_time_segments_full=time,
                   **windowed).kind == "fails"


# --- results files of other hardware: only parallel hardware decides -----------------------


def test_the_committed_results_files_are_cpu_and_do_not_decide_throughput():
    """The book's own file is from a CPU: no file decides, so the row cannot be judged in
    this book (无法在本书中验证); it names the file as a CPU that does not decide, and both
    machines' numbers are on the row."""
    assert CPU_FILES, "no results file committed under book/data/bench/"
    flat_time = throughput([2.0, 2.0, 2.0, 2.0])   # every segment near-linear on this build
    result = verdict("training-throughput", **dict(flat_time, **bench_values(*CPU_FILES)))
    assert result.kind == "literature" and "本书没有测的部分：并行硬件" in result.reason
    assert "本次构建的数只描述构建机器：在本次构建的机器上（2 个 CPU 核，TensorFlow 2.21.0）" in result.reason
    for path in CPU_FILES:
        assert f"结果文件 {path.name} 的设备是 CPU（" in result.reason and "不参与判定" in result.reason
        line = next(line for line in result.files if path.name in line)
        assert "CPU：" in line and "个逻辑核" in line and "提交 " in line and "吞吐斜率" in line
    assert "本行按结果文件" not in result.reason
    assert result.values.startswith("构建机器（2 个 CPU 核")   # this build's values, apart from the files'


def test_a_gpu_results_file_decides_throughput_and_the_row_names_it(tmp_path):
    """A file whose provenance says GPU is the one the row is judged on: its near-linear
    segments make the claim hold as far as times can tell (partly: a flat step time may be
    fixed overhead), though this build's CPU throughput falls."""
    falling = throughput([3.0, 5.0, 7.6, 34.6])
    assert verdict("training-throughput", **dict(falling, **bench_values(*CPU_FILES))).kind == "literature"
    result = verdict("training-throughput", **dict(falling, **bench_values(*CPU_FILES, GPU_FIXTURE)))
    assert result.kind == "partly", result.reason
    assert result.reason.startswith(f"在结果文件 {GPU_FIXTURE.name} 记录的 GPU（Test Fixture GPU")
    assert f"本行按结果文件 {GPU_FIXTURE.name} 判定" in result.reason and "固定开销" in result.reason
    assert "本书没有测的部分：并行硬件" not in result.reason
    assert "0.93、0.93" in result.reason   # the fixture's slopes, not this build's 0.26、0.40、-1.19
    assert "本次构建每个长度只计时几次" not in result.reason   # the build's timing count is not the file's
    assert "本次构建每个长度只计时几次" in cpu_branch("training-throughput", **falling).reason
    assert "不参与判定" in result.reason and len(result.files) == len(CPU_FILES) + 1
    slow_gpu = json.loads(GPU_FIXTURE.read_text(encoding="utf-8"))
    slow_gpu["rnn_vs_attention"]["attention_train_ms"] = [2.0, 4.0, 8.0, 16.0]   # flat throughput
    path = tmp_path / "gpu-flat.json"
    path.write_text(json.dumps(slow_gpu), encoding="utf-8")
    flat = verdict("training-throughput", **dict(falling, **bench_values(path)))
    assert flat.kind == "fails" and "本行按结果文件 gpu-flat.json 判定" in flat.reason


def test_a_gpu_results_file_decides_the_time_of_short_sequences_but_not_its_memory():
    slower = dict(TIMINGS, forward_ms_attention=[99.0] * 4, train_ms_attention=[99.0] * 4)
    assert verdict("short-sequences", **slower).kind == "fails"
    result = verdict("short-sequences", **dict(slower, **bench_values(GPU_FIXTURE)))
    assert result.kind == "partly"   # 4 times faster everywhere on the fixture, memory still unmeasured
    assert "本行的时间按结果文件" in result.reason and "结果文件也只记下了时间" in result.reason
    assert "GPU 是注意力的" not in result.values and "99.0" in result.values   # the build's values stay the build's


def test_of_two_gpu_files_the_first_by_name_decides_and_the_other_is_named(tmp_path):
    second = tmp_path / "zz-second-gpu.json"
    second.write_text(GPU_FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    values = dict(throughput([3.0, 5.0, 7.6, 34.6]), **bench_values(GPU_FIXTURE, second))
    result = verdict("training-throughput", **values)
    assert result.kind == "partly" and result.reason.count("本行按结果文件") == 1
    assert f"结果文件 {second.name} 也可以判定本行，本行按排在前面的 {GPU_FIXTURE.name} 判定。" in result.reason


def test_a_results_file_of_uneven_lists_cannot_decide():
    values = dict(TIMINGS, **bench_values(GPU_FIXTURE))
    values["bench_train_speedup"] = []
    with pytest.raises(CheckError, match="one item per results file"):
        verdict("short-sequences", **values)


def test_an_unmeasured_part_caps_a_holding_check_at_partly():
    claim = {"id": "x", "check": {"holds": "a > 0", "reason": {"holds": "量到的部分成立。", "fails": "不成立。"}}}
    assert claim_checks.evaluate(claim, {"a": 1}).kind == "holds"
    claim["check"]["unmeasured"] = "另一半没有测。"
    capped = claim_checks.evaluate(claim, {"a": 1})
    assert capped.kind == "partly" and capped.reason.endswith("本书没有测的部分：另一半没有测。")
    assert claim_checks.evaluate(claim, {"a": -1}).kind == "fails"


def test_the_nan_of_a_fully_masked_row_qualifies_the_row_and_decides_nothing():
    """softmax over a row of -inf is NaN by IEEE 754 on every build: it qualifies the
    manuscript's recipe (部分成立) but never decides; the recipe and the package's mask do."""
    masked = {"minus_inf_pad_weight": 0.0, "minus_inf_output_change": 0.0, "minus_inf_renormalized_diff": 3e-8,
              "pad_weight_masked": 0.0, "pad_output_change_masked": 0.0}
    for nan in (True, False):
        result = verdict("mask-to-minus-infinity", minus_infinity_row_is_nan=nan, **masked)
        assert result.kind == "partly" and result.label == "部分成立" and "编者限定的部分" in result.reason
        assert "IEEE" in result.reason and "NaN" in result.reason
    assert "NaN" in BY_ID["mask-to-minus-infinity"]["check"]["qualified"]
    leaky = dict(masked, minus_inf_output_change=0.2)
    assert verdict("mask-to-minus-infinity", minus_infinity_row_is_nan=True, **leaky).kind == "fails"
    not_renormalized = dict(masked, minus_inf_renormalized_diff=0.44)   # weights zeroed after softmax
    assert verdict("mask-to-minus-infinity", minus_infinity_row_is_nan=True, **not_renormalized).kind == "fails"


DIRECT = {"score_graph_matmul_ops": 1, "walkthrough_score_count": 128, "walkthrough_positions": 8,
          "walkthrough_weight_on_first": [0.125, 0.0132, 0.1294, 0.05, 0.09, 0.0360, 0.2, 0.1],
          "reach_positions": 64, "reach_near": [1, 8], "reach_far": [32, 63],
          "reach_near_attention": 0.086, "reach_far_attention": 0.067, "reach_ratio_attention": 0.78,
          "reach_near_rnn": 0.42, "reach_far_rnn": 9.3e-9, "reach_ratio_rnn": 2.2e-8, "reach_draws": 8,
          "reach_ratio_attention_min": 0.45, "reach_ratio_attention_max": 3.1, "reach_ratio_attention_median": 1.1,
          "order_gap_plain": 2.4e-7, "order_gap_positioned": 1.7}


def test_the_direct_path_verdict_reads_the_gradient_and_its_rnn_control():
    """"直达" from the structure; "不再产生衰减" from the layer having no positions (shuffling
    the input's positions only shuffles the output; a positional encoding, the control,
    breaks that), shown by ‖∂y_t/∂x_0‖ far against near, with an RNN beside it that shows
    the measurement can see decay. Decided by the code, and labelled so."""
    direct = verdict("direct-path", **DIRECT)
    assert direct.kind == "holds" and direct.label == "成立（由代码决定）"
    assert "由代码决定：" in direct.reason and "不是另一次独立的测量" in direct.reason
    assert "相距 32–63 的输出上引起的变化平均是相距 1–8 时的 0.78 倍" in direct.reason
    assert "2.2e-08" in direct.reason and "量不出" not in direct.reason
    decaying = verdict("direct-path", **dict(DIRECT, reach_ratio_attention_median=0.2))
    assert decaying.kind == "partly" and "注意力在远处的影响不到近处的一半" in decaying.reason
    assert "本次 0.2 倍" in decaying.reason
    blind_control = verdict("direct-path", **dict(DIRECT, reach_ratio_rnn=0.9))   # the control sees no decay
    assert blind_control.kind == "partly" and "显不出衰减" in blind_control.reason
    stepwise = verdict("direct-path", **dict(DIRECT, score_graph_matmul_ops=8))
    assert stepwise.kind == "fails" and "不是由同一个矩阵乘法一次算出的（打分图里的矩阵乘法算子 8 个）" in stepwise.reason
    assert "ALiBi" in direct.reason   # the scope: attention without a positional bias
    # A layer with a distance penalty (ALiBi with slope 0.01) keeps far reach above half the
    # near reach, which the gradient's threshold lets through; its shuffled output is not
    # the output shuffled, and the row is no longer 成立.
    penalised = verdict("direct-path", **dict(DIRECT, order_gap_plain=0.3, reach_ratio_attention_median=0.66))
    assert penalised.kind == "partly" and "它带着位置信息" in penalised.reason
    blind_order = verdict("direct-path", **dict(DIRECT, order_gap_positioned=1e-7))
    assert blind_order.kind == "partly" and "分不出层里有没有位置信息" in blind_order.reason


# --- guard: a row the pages restate may not be published as 不成立 -------------------------

GUARDED = {"scaling-prevents-saturation", "padding-steals-weight", "learned-routing"}


def test_the_rows_the_ledger_says_are_guarded_are_the_guarded_ones():
    assert {claim["id"] for claim in CLAIMS if claim.get("guard")} == GUARDED
    intro = (ROOT / "book" / "claims.md").read_text(encoding="utf-8")
    assert "构建守着这一行" in intro
    for claim_id in GUARDED:
        assert BY_ID[claim_id]["guard"] == ["holds", "partly"]
        assert "构建守着这一行" in verdict_of(claim_id).reason


def verdict_of(claim_id):
    """The row's verdict on values that hold it (the guard's sentence is in every branch)."""
    return claim_checks.evaluate(BY_ID[claim_id], {**SCALING_HOLDS, **PADDING_HOLDS, **ROUTING})


SCALING_HOLDS = {"scaling_d_k": [4, 8, 16, 32, 64, 128, 256, 512], "scaling_n_keys": 32, "scaling_n_queries": 256,
                 "scaling_max_weight_unscaled": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9],
                 "scaling_grad_norm_unscaled": [0.2, 0.19, 0.17, 0.15, 0.12, 0.1, 0.08, 0.06],
                 "scaling_grad_median_unscaled": [0.25, 0.2, 0.1, 0.05, 0.02, 0.01, 0.004, 0.0007],
                 "scaling_max_weight_head_depth": [0.17] * 8, "scaling_grad_norm_head_depth": [0.23] * 8}
PADDING_HOLDS = {"pad_weight_unmasked": 0.31, "pad_output_change_unmasked": 0.4}


def test_a_guarded_row_that_fails_fails_the_build():
    """The ledger promised that these rows are only ever published as 成立 or 部分成立. A
    page's ``assert leak.pad_weight_unmasked > 0`` does not keep that promise: one padded
    key among 256 passes it and makes the row 不成立. The guard evaluates the row's own
    check, so that build fails."""
    claim = BY_ID["padding-steals-weight"]
    verdicts, errors = claim_checks.evaluate_all([claim], PADDING_HOLDS)
    assert verdicts[claim["id"]].kind == "holds" and errors == []
    one_in_256 = {"pad_weight_unmasked": 1 / 256 * 0.9, "pad_output_change_unmasked": 0.02}
    assert one_in_256["pad_weight_unmasked"] > 0 and one_in_256["pad_output_change_unmasked"] > 0  # the old assert
    verdicts, errors = claim_checks.evaluate_all([claim], one_in_256)
    assert verdicts[claim["id"]].kind == "fails"
    assert errors and "guard" in errors[0] and "不成立" in errors[0]
    unguarded = {k: v for k, v in claim.items() if k != "guard"}
    assert claim_checks.evaluate_all([unguarded], one_in_256)[1] == []


def test_a_guard_must_name_verdicts():
    claim = dict(BY_ID["padding-steals-weight"], guard=["published"])
    verdicts, errors = claim_checks.evaluate_all([claim], PADDING_HOLDS)
    assert verdicts[claim["id"]] is None and "guard: must list" in errors[0]


VARIANTS = dict(QUADRATIC, variant_time_segments_full=[2.18, 2.13], variant_memory_segments_full=[1.95, 1.97],
                variant_time_segments_window=[0.85, 0.56], variant_memory_segments_window=[0.87, 0.92],
                variant_time_segments_linear=[0.46, 0.39], variant_memory_segments_linear=[0.65, 0.79],
                variant_time_segments_chunked=[1.8, 2.2], variant_memory_segments_chunked=[0.77, 0.80])


def test_the_variants_verdict_reads_memory_and_only_lists_time():
    """Memory against near-linear decides; time is listed, never judged (one build's
    per-segment time slopes are too noisy to tell O(n) from O(n²)); calling linear
    attention an approximation is corrected by definition: at most 部分成立."""
    result = verdict("linear-variants", **VARIANTS)
    assert result.kind == "partly" and "都不超过 1.3" in result.reason
    assert "编者限定的部分：" in result.reason and "时间只列在数值一栏，不参与判定" in result.reason
    for noisy in ([2.07, -0.86], [3.0, 3.0]):   # the review's noisy slopes, and quadratic time
        again = verdict("linear-variants", **dict(VARIANTS, variant_time_segments_linear=noisy))
        assert again.kind == result.kind and again.reason == result.reason
    one = verdict("linear-variants", **dict(VARIANTS, variant_memory_segments_window=[1.9, 1.9]))
    assert one.kind == "partly" and "不超过 1.3 的只有：线性注意力（" in one.reason
    steep = dict(VARIANTS, variant_memory_segments_window=[1.9, 1.9], variant_memory_segments_linear=[1.5, 1.4])
    assert verdict("linear-variants", **steep).kind == "fails"


def test_two_rows_read_full_attentions_time_the_same_way():
    """Rows that read the same measured slopes quote them alike, and neither calls them quadratic."""
    values = dict(VARIANTS, variant_time_segments_full=[0.51, 2.35])
    quadratic, variants = verdict("quadratic-growth", **values), verdict("linear-variants", **values)
    assert "0.51、2.35" in quadratic.reason
    for row in (quadratic, variants):
        assert "0.51、2.35" in row.values
        assert "完整注意力的平方增长" not in row.reason and "时间仍按平方涨" not in row.reason


STACK = {"stack_input_shape": [16, 10, 32], "stack_output_shape": [16, 10, 32], "stack_steps": 60,
         "stack_tail_steps": 10, "stack_loss_first": 0.251, "stack_loss_last": 0.032, "stack_loss_tail": 0.036,
         "stack_first_layer_change": 0.45, "stack_frozen_loss_first": 0.251, "stack_frozen_loss_last": 0.050,
         "stack_frozen_loss_tail": 0.054}


def test_the_stacking_verdict_needs_the_run_to_beat_its_frozen_control():
    """The loss falls with or without the first layer training (0.251 -> 0.050 frozen), so
    the control decides: the stacked run must end clearly below it, its first layer moved.
    Two layers are all the book stacks, so a run that beats its control is 部分成立."""
    stacked = verdict("stackable", **STACK)
    assert stacked.kind == "partly" and "两层可以像 Dense 一样串联、一起训练" in stacked.reason
    assert "本书没有测的部分：本书只把两层串起来训练" in stacked.reason
    no_gradient_across = dict(STACK, stack_loss_last=0.050, stack_loss_tail=0.054, stack_first_layer_change=0.0)
    result = verdict("stackable", **no_gradient_across)   # the control breaks the old check's holds
    assert result.kind == "partly" and STACK["stack_loss_last"] <= 0.5 * STACK["stack_loss_first"]
    assert "一起训练的误差没有低于冻结第一层的对照的八成、第一层的参数几乎没有变" in result.reason
    assert "冻结第一层的对照 0.054" in result.reason
    stalled = verdict("stackable", **dict(STACK, stack_loss_last=0.2))   # the tail against the control decides
    assert "两层可以像 Dense 一样串联、一起训练" in stalled.reason
    assert verdict("stackable", **dict(STACK, stack_output_shape=[16, 10, 8])).kind == "fails"


ROUTING = {"reversal_antidiagonal_share": 1.0, "reversal_token_accuracy": 1.0, "reversal_test_seen_in_train": 0,
           "reversal_untrained_antidiagonal_share": 0.04, "reversal_untrained_token_accuracy": 0.12}


def test_the_learned_routing_needs_its_untrained_control_off_the_diagonal():
    """An alignment the untrained model already has is not learned: the control decides.
    One toy task is all the book trains, so a learned alignment is 部分成立."""
    learned = verdict("learned-routing", **ROUTING)
    assert learned.kind == "partly" and "同一个模型不训练时只有 4.0%" in learned.reason
    assert "本书没有测的部分：别的任务与模型" in learned.reason
    built_in = verdict("learned-routing", **dict(ROUTING, reversal_untrained_antidiagonal_share=0.95))
    assert built_in.kind == "fails" and "不训练的对照也有 95.0%" in built_in.reason
    leaked = verdict("learned-routing", **dict(ROUTING, reversal_test_seen_in_train=3))
    assert leaked.kind == "partly" and "有测试序列在训练集里出现过" in leaked.reason


def test_saturation_by_full_dimension_is_not_borne_out_by_flat_weights():
    flat = {"scaling_d_k": [4, 8, 16, 32, 64, 128, 256, 512],
            "scaling_grad_norm_d_model": [0.18] * 8, "scaling_grad_norm_head_depth": [0.23] * 8,
            "scaling_max_weight_d_model": [0.06] * 8, "scaling_max_weight_head_depth": [0.17] * 8,
            "scaling_uniform_weight": 1 / 32, "scaling_n_keys": 32, "scaling_heads": 8}
    assert verdict("full-dim-saturates", **flat).kind == "fails"
    peaked = dict(flat, scaling_max_weight_d_model=[0.95] * 8)
    assert verdict("full-dim-saturates", **peaked).kind == "holds"


def test_a_row_sum_off_by_more_than_the_tolerance_fails():
    assert verdict("weights-sum-to-one", walkthrough_row_sum_max_deviation=1.2e-7,
                   walkthrough_min_weight=0.01).kind == "holds"
    assert verdict("weights-sum-to-one", walkthrough_row_sum_max_deviation=1e-3,
                   walkthrough_min_weight=0.01).kind == "fails"


def test_literature_claims_are_not_measured():
    result = claim_checks.evaluate(BY_ID["heads-specialise"], {})
    assert result.kind == "literature" and result.label == "无法在本书中验证" and result.reason


# --- the evaluator: a check that cannot decide fails ---------------------------------------


def test_a_value_no_cell_recorded_cannot_decide():
    values = dict(TIMINGS)
    del values["train_ms_attention"]
    with pytest.raises(CheckError, match="train_ms_attention.*no cell recorded"):
        verdict("short-sequences", **values)


def test_a_nan_value_cannot_decide():
    with pytest.raises(CheckError, match="NaN"):
        verdict("training-throughput", **dict(throughput([3.0, 5.0, 7.6, 34.6]),
                                              train_throughput_segment_slopes_attention=[0.26, math.nan, -1.19]))
    with pytest.raises(CheckError, match="NaN"):
        verdict("short-sequences", **dict(TIMINGS, train_ms_gru=[7.7, math.nan, 23.7, 46.3]))


def test_nan_stored_by_glue_is_read_back_as_nan(tmp_path):
    """attnbook.pages.glue stores NaN as the string "nan" in JSON; the ledger reads it back as NaN."""
    path = tmp_path / "page.glue.json"
    path.write_text(json.dumps({
        "slope": {"data": {"application/json": {"value": "nan"}, "text/plain": "nan"}},
        "ms": {"data": {"application/json": {"value": [1.5, "inf"]}}},
        "other": {"data": {"text/plain": "'no raw value'"}},
    }), encoding="utf-8")
    values = claims_ext.read_glue_values(path)
    assert math.isnan(values["slope"]) and values["ms"] == [1.5, math.inf] and "other" not in values


def check(holds, partly=None, reason=None):
    body = {"holds": holds, "reason": {"holds": "是", "partly": "部分", "fails": "否", **(reason or {})}}
    if partly:
        body["partly"] = partly
    return {"id": "made-up", "quote": "…", "check": body}


@pytest.mark.parametrize("expression", [
    "x.__class__", "open('f')", "__import__('os')", "(lambda: 1)()", "max(x, key=abs)",
    "[].append(1)", "_secret", "x := 1", "{'a': 1}", "f'{x}'",
])
def test_unsafe_or_unknown_syntax_is_refused(expression):
    with pytest.raises(CheckError):
        claim_checks.evaluate(check(expression), {"x": 1, "_secret": 2, "f": 3})


def test_a_check_that_is_not_true_or_false_cannot_decide():
    with pytest.raises(CheckError, match="not true or false"):
        claim_checks.evaluate(check("x + 1"), {"x": 1})


def test_a_check_that_raises_cannot_decide():
    with pytest.raises(CheckError, match="ZeroDivisionError"):
        claim_checks.evaluate(check("1 / x > 0"), {"x": 0})


def test_a_template_field_may_only_name_a_value():
    with pytest.raises(CheckError, match="template field"):
        claim_checks.evaluate(check("x > 0", reason={"holds": "{x.__class__}"}), {"x": 1})


def test_a_claim_with_neither_check_nor_literature_cannot_decide():
    with pytest.raises(CheckError, match="neither a check nor literature"):
        claim_checks.evaluate({"id": "bare", "quote": "…"}, {})


def test_comprehensions_see_the_values_and_templates_format_lists():
    claim = check("all(a < b for a, b in zip(xs, ys))", "any(a < b for a, b in zip(xs, ys))",
                  reason={"partly": "快的长度 {fast}"})
    claim["check"]["let"] = {"fast": "[n for n, a, b in zip(ns, xs, ys) if a < b]"}
    claim["check"]["values"] = "{xs:.1f} 对 {ys:.1f}；形状 {shape:shape}"
    result = claim_checks.evaluate(claim, {"xs": [1.0, 3.0], "ys": [2.0, 2.0], "ns": [64, 128], "shape": [2, 8]})
    assert (result.kind, result.reason, result.values) == ("partly", "快的长度 64", "1.0、3.0 对 2.0、2.0；形状 (2, 8)")


class _Env(SimpleNamespace):
    pass


def test_the_build_turns_every_undecidable_check_into_a_warning(tmp_path, monkeypatch):
    """The consistency check of the build (``env-check-consistency``) warns, so ``-W``
    fails the build, for a value no cell recorded (at the claim's line of claims.yml) and for
    a value glued on two pages (at the second page)."""
    (tmp_path / "claims.yml").write_text(
        "- id: a\n  quote: q\n  check:\n    holds: 'missing > 0'\n    reason: {holds: y, fails: n}\n"
        "- id: b\n  quote: q\n  check:\n    holds: 'twice > 0'\n    reason: {holds: y, fails: n}\n",
        encoding="utf-8")
    (tmp_path / "tests").mkdir()
    warnings = []
    monkeypatch.setattr(claims_ext.logger, "warning", lambda message, **kw: warnings.append((message, kw["location"])))
    env = _Env(srcdir=str(tmp_path), claim_cells={}, claim_pages={},
               claim_values={"p1": {"twice": 1}, "p2": {"twice": 2}})
    app = SimpleNamespace(env=env, srcdir=str(tmp_path), config=SimpleNamespace(claims_file="claims.yml", claims_tests="tests",
                                                          claims_run_tests=False))
    claims_ext._check_consistency(app, env)
    claims_yml = str(tmp_path / "claims.yml")
    assert ("claims ledger: claim 'a': holds names 'missing', a value no cell recorded", f"{claims_yml}:1") in warnings
    assert ("claims ledger: the value 'twice' is glued on both p1 and p2", ("p2", None)) in warnings
    assert env.claim_verdicts["a"] is None and env.claim_verdicts["b"]["kind"] == "holds"


def test_the_build_names_a_claim_whose_quote_the_manuscript_no_longer_has(tmp_path, monkeypatch):
    """An author's revision that drops a quoted sentence fails the build (a warning under -W)
    that names the claim; so does a quote that several sections' manuscripts have."""
    for name in ("_config.yml", "_toc.yml", "manuscript/4.5-attention.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "claims.yml").write_text(
        "- id: kept\n  quote: 一百万对的打分表\n  unsourced: true\n  reason: r\n"
        "- id: dropped\n  quote: 一千万对的打分表\n  unsourced: true\n  reason: r\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    warnings = []
    monkeypatch.setattr(claims_ext.logger, "warning", lambda message, **kw: warnings.append(message))
    env = _Env(srcdir=str(tmp_path), claim_cells={}, claim_pages={}, claim_values={})
    app = SimpleNamespace(env=env, srcdir=str(tmp_path), config=SimpleNamespace(
        claims_file="claims.yml", claims_tests="tests", claims_run_tests=False))
    claims_ext._check_consistency(app, env)
    named = [w for w in warnings if "quote" in w]
    assert len(named) == 1 and "'dropped'" in named[0] and "一千万对的打分表" in named[0], warnings


# --- where a long name in the ledger may wrap --------------------------------------------


@pytest.mark.parametrize("text, code, pieces", [
    ("tests/test_x.py::test_one_pair", True, ["tests/", "test_", "x", ".py::", "test_", "one_", "pair"]),
    ("_private.__init__", True, ["_private", ".__init__"]),  # not at a name's ends
    ("a/", True, ["a/"]),
    # text: only a run of 16 or more ASCII characters without a space, there after ( and , too
    ("scores = tf.matmul(wq(dec_state), x", False, ["scores = tf", ".matmul(", "wq(", "dec_", "state), x"]),
    ("d_k 从 4 到 512：0.0132、0.0266", False, ["d_k 从 4 到 512：0.0132、0.0266"]),
])
def test_names_break_only_at_their_separators(text, code, pieces):
    assert claims_ext.break_points(text, code) == pieces
    assert "".join(pieces) == text


# --- the built ledger -------------------------------------------------------------------


def ledger_rows():
    return soup("book/claims").select("table.claims-ledger tbody tr")


@pytest.mark.book
def test_every_row_shows_a_computed_verdict_and_its_values():
    rows = ledger_rows()
    assert len(rows) == len(CLAIMS)
    counts = {}
    for row, claim in zip(rows, CLAIMS):
        cells = row.find_all("td")
        values, status = cells[2].get_text(strip=True), cells[3].select_one(".claim-status").get_text(strip=True)
        assert status in {*claim_checks.VERDICTS.values(), *claim_checks.BY_CONSTRUCTION.values()}, row.get_text()
        assert bool(values.strip("—")) == ("check" in claim), row.get_text()
        counts[status] = counts.get(status, 0) + 1
    print("verdicts:", counts)


def printed(page, pattern):
    """The first match of ``pattern`` in the printed outputs of an executed page."""
    nb = json.loads((EXECUTED / f"{page}.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(o.get("text", "")) for cell in nb["cells"] for o in cell.get("outputs", []))
    found = re.search(pattern, text)
    assert found, pattern
    return found.group(1)


@pytest.mark.book
@pytest.mark.parametrize("claim_id, page, pattern", [
    ("training-throughput", "book/ch04/cost", r"注意力训练吞吐（位置/秒）：[^；]*；各段斜率：([-\d.、]+)"),
    ("quadratic-growth", "book/ch04/cost", r"完整注意力.*?各段斜率：时间 ([-\d.、]+)，"),
    ("linear-variants", "book/ch04/cost", r"滑动窗口.*?各段斜率：时间 ([-\d.、]+)，"),
    ("direct-path", "book/ch04/mechanism", r"注意力：.*?远处是近处的 ([-\d.e+]+) 倍"),
    ("short-sequences", "book/ch04/cost", r"n = 512：前向 GRU +[\d.]+ ms、注意力 +([\d.]+) ms"),
])
def test_the_rows_show_what_their_cells_print(claim_id, page, pattern):
    row = soup("book/claims").find("tr", id=f"claim-{claim_id}")
    assert printed(page, pattern) in row.find_all("td")[2].get_text(), row.get_text()


@pytest.mark.book
def test_every_verdict_but_holds_is_on_the_errata_page():
    not_holding = {row["id"] for row in ledger_rows()
                   if "claim-holds" not in row.select_one(".claim-status")["class"]}
    listed = {a["href"].split("#")[-1] for a in soup("book/errata").select("ul.claims-errata a[href]")
              if "claims.html#" in a["href"]}
    assert not_holding and listed == not_holding


# --- the environment collectors (parallel reads merge what each page holds) -------------------


def page_with_a_claim_cell(docname="p"):
    from docutils import nodes
    from docutils.utils import new_document

    doctree = new_document(docname)
    cell = nodes.container(nb_element="cell_code", cell_metadata={"tags": ["editorial", "claim-a", "claim-a"]})
    doctree += cell
    return doctree, cell


def test_the_collector_reads_tagged_cells_and_the_values_glued_on_the_page(tmp_path):
    (tmp_path / "ch").mkdir()
    (tmp_path / "ch" / "p.glue.json").write_text(json.dumps({
        "slope": {"data": {claims_ext.VALUE_MIME: {"value": 0.5}}},
        "stale": {"data": {claims_ext.VALUE_MIME: {"value": 1}}}}), encoding="utf-8")
    env = _Env(docname="ch/p", nb_metadata={"ch/p": {"glue": ["slope"]}},
               mystnb_config=SimpleNamespace(output_folder=str(tmp_path)))
    doctree, cell = page_with_a_claim_cell()
    collector = claims_ext.ClaimsCollector()
    collector.process_doc(SimpleNamespace(env=env), doctree)
    assert env.claim_cells == {"ch/p": [("a", "claim-a"), ("a", "claim-a-2")]}
    assert cell["ids"] == ["claim-a", "claim-a-2"]
    assert env.claim_values == {"ch/p": {"slope": 0.5}}   # only what this read glued
    collector.clear_doc(None, env, "ch/p")
    assert env.claim_cells == {} and env.claim_values == {}


def test_the_collectors_merge_what_parallel_readers_collected():
    for collector, stores in [(claims_ext.ClaimsCollector(), claims_ext.ClaimsCollector.STORES),
                              (editorial_ext.EditorialCollector(), editorial_ext.EditorialCollector.STORES)]:
        main = _Env(**{store: {"kept": 1} for store in stores})
        worker = _Env(**{store: {"read": 2, "other": 3} for store in stores})
        collector.merge_other(None, main, {"read"}, worker)
        assert all(getattr(main, store) == {"kept": 1, "read": 2} for store in stores)


# --- the marked tests decide too: they run on the build ------------------------------------

JUNIT = """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="tests.test_a" name="test_ok[1]"/>
<testcase classname="tests.test_a" name="test_ok[2]"><failure message="no"/></testcase>
<testcase classname="tests.test_b.TestGroup" name="test_fine"/>
<testcase classname="tests.test_b" name="test_skipped"><skipped message="later"/></testcase>
</testsuite></testsuites>"""


def test_a_junit_report_gives_each_test_its_worst_outcome():
    assert claim_tests.parse_junit(JUNIT) == {"tests/test_a.py::test_ok": "failed",
                                             "tests/test_b.py::test_fine": "passed",
                                             "tests/test_b.py::test_skipped": "skipped"}


def test_a_failing_test_makes_its_claim_fail_and_is_an_error():
    values = dict(COUNTED, score_pairs_n1000=1_000_000)
    passed = {"million-pairs": [("tests/test_cost.py::test_x", "passed")]}
    verdicts, errors = claim_checks.evaluate_all([BY_ID["million-pairs"]], values, passed)
    assert (verdicts["million-pairs"].kind, verdicts["million-pairs"].tests, errors) == ("holds", "passed", [])
    failed = {"million-pairs": [("tests/test_cost.py::test_x", "failed")]}
    verdicts, errors = claim_checks.evaluate_all([BY_ID["million-pairs"]], values, failed)
    assert verdicts["million-pairs"].kind == "fails" and "test_x" in verdicts["million-pairs"].reason
    assert errors and "did not pass on this build" in errors[0]


def test_the_marked_tests_run_once_per_change(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_t.py").write_text(
        "def test_good():\n    assert 1 + 1 == 2\n\n\ndef test_bad():\n    assert 1 + 1 == 3\n", encoding="utf-8")
    ids = ["tests/test_t.py::test_good", "tests/test_t.py::test_bad"]
    results = claim_tests.run_marked_tests(tmp_path, tmp_path / "tests", ids, tmp_path / "results")
    assert results == {ids[0]: "passed", ids[1]: "failed"}
    monkeypatch.setattr(claim_tests.subprocess, "Popen", lambda *a, **k: pytest.fail("ran again"))
    assert claim_tests.run_marked_tests(tmp_path, tmp_path / "tests", ids, tmp_path / "results") == results
    (tmp_path / "tests" / "test_t.py").write_text("def test_good():\n    pass\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="ran again"):
        claim_tests.run_marked_tests(tmp_path, tmp_path / "tests", ids, tmp_path / "results")


def test_a_test_that_cannot_run_counts_as_failed(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_t.py").write_text("def test_good(:\n    pass\n", encoding="utf-8")
    ids = ["tests/test_t.py::test_good"]
    assert claim_tests.run_marked_tests(tmp_path, tmp_path / "tests", ids, tmp_path / "r") == {ids[0]: "failed"}
