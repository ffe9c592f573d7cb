"""attnbook.pages.wording: the words of a sentence follow the measured values."""

import pytest

from attnbook.pages.wording import (agreement, faster_or_slower, growth, growth_between_ends, listing,
                                   where_faster)
from book._ext.shared import claim_checks
from buildfiles import ROOT


def test_listing_joins_with_the_chinese_enumeration_comma():
    assert listing([64, 128, 256]) == "64、128 和 256"
    assert listing([512]) == "512"
    assert listing([]) == "无"


def test_faster_or_slower_follows_the_numbers():
    assert faster_or_slower(3.1, 7.7) == "更快"
    assert faster_or_slower(7.7, 3.1) == "更慢"
    assert faster_or_slower(2.0, 2.0) == "一样快"


def test_where_faster_names_the_lengths():
    assert where_faster([64, 128], [1.0, 2.0], [3.0, 4.0], "GRU") == "在测到的每个长度（64 和 128）上都比 GRU 快"
    assert where_faster([64, 128, 512], [1.0, 5.0, 9.0], [3.0, 4.0, 8.0], "GRU") == "只在 64 上比 GRU 快"
    assert where_faster([64, 128], [5.0, 5.0], [3.0, 5.0], "GRU") == "在测到的每个长度（64 和 128）上都不比 GRU 快"
    with pytest.raises(ValueError, match="一样多"):
        where_faster([64, 128], [1.0], [3.0, 4.0], "GRU")


def test_agreement_says_bit_for_bit_only_for_a_zero_difference():
    assert agreement(0.0) == "逐位相同（本次构建的最大差为 0）"
    assert agreement(3.5762786865234375e-07) == "在 float32 舍入之内一致（本次构建的最大差为 3.6e-07）"
    for bad in (2e-5, -1e-7, float("nan")):
        with pytest.raises(ValueError):
            agreement(bad)


GROWTH = {  # throughput at n = 64 … 512 -> the phrase
    (80000.0, 160000.0, 320000.0, 640000.0): "近乎线性地增长",
    (80000.0, 100000.0, 120000.0, 160000.0): "在增长，但比线性慢",
    (80000.0, 90000.0, 70000.0, 82000.0): "几乎没有变化",
    (80000.0, 170000.0, 120000.0, 30000.0): "不升反降",
    (10000.0, 80000.0, 640000.0, 5120000.0): "比线性增长得还快",
}


def test_growth_reads_the_slope_between_the_ends():
    for throughput, phrase in GROWTH.items():
        assert growth([64, 128, 256, 512], list(throughput)) == phrase
    for bad in ([64], [512, 64]):
        with pytest.raises(ValueError):
            growth(bad, [1.0] * len(bad))


def test_growth_between_ends_names_the_range_and_a_non_monotone_middle():
    ns = [64, 128, 256, 512]
    assert growth_between_ends(ns, [8.0, 7.0, 6.0, 5.0]) == "从 n = 64 到 512，两端相比不升反降"
    assert growth_between_ends(ns, [8.0, 9.0, 6.0, 5.0]) == "从 n = 64 到 512，两端相比不升反降（中间有升有降）"
    assert growth_between_ends(ns, [1.0, 2.0, 2.0, 8.0]).endswith("近乎线性地增长")


def test_growth_uses_the_ledgers_bounds_for_the_throughput_claim():
    """The section page says how the build machine's throughput grew with these words;
    the ledger judges 「训练吞吐随序列长度近乎线性扩展」 with its own check. Run both on the
    same throughputs: 近乎线性 exactly where the check holds, growth where it is partly,
    and the check's own word (不升反降 or 几乎没有变化) where it fails."""
    claims = {c["id"]: c for c in claim_checks.load_claims(ROOT / "book" / "claims.yml")}
    check = dict(claims["training-throughput"]["check"])
    check = {k: v for k, v in check.items() if k not in ("files", "unmeasured")}
    claim = dict(claims["training-throughput"], check=check)
    ns = [64, 128, 256, 512]
    base = {"timing_lengths": ns, "timing_segments": ["64→128", "128→256", "256→512"],
            "train_throughput_gru": [1000.0, 1500.0, 1700.0, 1800.0], "build_cpu_count": 2,
            "build_machine": "2 个 CPU 核", "judged": [],
            "bench_train_throughput_segment_slopes_attention": [], "bench_train_throughput_segment_slopes_gru": [],
            "bench_train_time_segment_slopes_attention": [], "bench_timing_segments": [], "bench_file": [],
            "bench_device": [], "bench_train_throughput_attention": [], "bench_train_throughput_gru": [],
            "bench_timing_lengths": []}
    for throughput, phrase in GROWTH.items():
        thr = list(throughput)
        values = dict(base, train_throughput_attention=thr,
                      train_throughput_segment_slopes_attention=[0.0] * 3,
                      train_throughput_segment_slopes_gru=[0.0] * 3,
                      train_time_segment_slopes_attention=[0.0] * 3)
        verdict = claim_checks.evaluate(claim, values)
        expected = {"holds": ["近乎线性地增长"], "partly": ["在增长，但比线性慢", "比线性增长得还快"]}
        words = expected.get(verdict.kind) or [w for w in ("不升反降", "几乎没有变化") if w in verdict.reason]
        assert growth(ns, thr) in words, (throughput, verdict.kind, verdict.reason)
