"""Tests of the cost ledger (attnbook.cost), the cost figures and the benchmark's bookkeeping."""

import dataclasses
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnbook import cost, tf  # noqa: E402
from attnbook.bench import evaluate_targets  # noqa: E402
from attnbook.measurements import measure_variants  # noqa: E402
from attnbook.plots import setup  # noqa: E402
from attnbook.plots.cost import VARIANT_STYLE, rnn_vs_attention_time, variant_costs  # noqa: E402

# --- the ledger ----------------------------------------------------------------------


@pytest.mark.claim("million-pairs")
def test_score_table_one_million_pairs_at_n_1000():
    table = cost.score_table(1000)
    assert table["pairs"] == 1_000_000
    assert table["bytes"] == 4_000_000


def test_score_table_counts_batch_heads_and_dtype():
    table = cost.score_table(16384, batch=2, heads=8, bytes_per_score=2, n_k=100)
    assert table["pairs"] == 16384 * 100
    assert table["entries"] == 2 * 8 * 16384 * 100
    assert table["bytes"] == 2 * table["entries"]
    assert table["mib"] == pytest.approx(table["bytes"] / 2**20)


@pytest.mark.claim("quadratic-growth")
def test_score_table_grows_with_n_squared():
    sizes = [cost.score_table(n)["bytes"] for n in (1000, 2000, 4000)]
    assert cost.loglog_slope([1000, 2000, 4000], sizes) == pytest.approx(2.0)


@pytest.mark.parametrize("kwargs", [dict(n=0), dict(n=10, batch=-1), dict(n=2.5), dict(n=True)])
def test_score_table_rejects_bad_sizes(kwargs):
    with pytest.raises(ValueError, match="must be a positive integer"):
        cost.score_table(**kwargs)


def test_mha_forward_flops_counts_every_matmul():
    batch, n, n_k, d = 3, 5, 7, 16
    matmuls = [  # (rows, inner, columns) of each product
        (batch * n, d, d), (batch * n_k, d, d), (batch * n_k, d, d),  # Q, K, V projections
        (batch * n, d, n_k),  # Q Kᵀ, all heads together: Σ_h n · depth · n_k
        (batch * n, n_k, d),  # weights · V
        (batch * n, d, d),  # output projection
    ]
    expected = sum(2 * r * k * c for r, k, c in matmuls)
    assert cost.mha_forward_flops(batch, n, d, n_k=n_k) == expected
    assert cost.mha_forward_flops(8, 512, 256) == 8 * 8 * 512 * 256**2 + 4 * 8 * 512**2 * 256


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0])
def test_loglog_slope_recovers_the_power(power):
    x = np.array([64, 128, 1024, 4096])
    assert cost.loglog_slope(x, 3.0 * x**power) == pytest.approx(power)


@pytest.mark.parametrize(
    "x, y, match",
    [([1, 2], [1, 2, 3], "equally long"), ([4, 4], [1, 2], "two distinct"), ([1, 2], [0, 1], "positive")],
)
def test_loglog_slope_rejects_bad_data(x, y, match):
    with pytest.raises(ValueError, match=match):
        cost.loglog_slope(x, y)


def test_segment_slopes_show_the_shape_a_single_fit_hides():
    """A flat segment then a steep one: the fit lands between, the segments do not."""
    x = [2048, 4096, 8192]
    y = [19.2, 19.2 * 2**0.5, 19.2 * 2**0.5 * 2**2.5]
    assert cost.segment_slopes(x, y) == pytest.approx([0.5, 2.5])
    assert 0.5 < cost.loglog_slope(x, y) < 2.5
    straight = np.array([64, 128, 256, 512])
    assert cost.segment_slopes(straight, 3.0 * straight**2) == pytest.approx([2.0, 2.0, 2.0])


@pytest.mark.parametrize(
    "x, y, match",
    [([1, 2], [1, 2, 3], "equally long"), ([1, 2], [0, 1], "positive"), ([4, 2], [1, 2], "increasing"),
     ([1, 2, 2], [1, 2, 3], "increasing")],
)
def test_segment_slopes_reject_bad_data(x, y, match):
    with pytest.raises(ValueError, match=match):
        cost.segment_slopes(x, y)


# --- timing --------------------------------------------------------------------------


class FakeClock:
    """perf_counter() stand-in: every call of the timed function takes the next duration."""

    def __init__(self, durations):
        self.durations, self.now, self.calls = list(durations), 0.0, 0

    def perf_counter(self):
        return self.now

    def work(self, x):
        self.calls += 1
        self.now += self.durations.pop(0)
        return tf.constant(x)


def test_time_call_skips_warmups_and_takes_the_median(monkeypatch):
    clock = FakeClock([9.0, 9.0, 0.3, 0.1, 0.5, 0.2, 5.0])
    monkeypatch.setattr(cost.time, "perf_counter", clock.perf_counter)
    timing = cost.time_call(clock.work, 1.0, repeats=5, warmup=2)
    assert clock.calls == 7
    assert timing.times_s == pytest.approx((0.3, 0.1, 0.5, 0.2, 5.0))
    assert timing.median_s == pytest.approx(0.3) and timing.median_ms == pytest.approx(300.0)
    assert dataclasses.asdict(timing)["warmup"] == 2


def test_time_call_waits_for_nested_tensors():
    fetched = []

    class Result:
        def numpy(self):
            fetched.append(self)

    cost.time_call(lambda: {"a": [Result(), (Result(),)], "b": 3}, repeats=2, warmup=0)
    assert len(fetched) == 4


@pytest.mark.parametrize("kwargs, match", [(dict(repeats=0), "repeats"), (dict(warmup=-1), "warmup")])
def test_time_call_rejects_bad_counts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cost.time_call(lambda: None, **kwargs)


# --- peak memory ---------------------------------------------------------------------


@pytest.mark.slow
def test_peak_memory_sees_memory_the_call_touches():
    nbytes = 400 * 2**20
    peak = cost.peak_memory(np.ones, nbytes // 8)  # float64: 8 bytes each, all written
    assert 0.9 * nbytes < peak.growth_bytes < 1.5 * nbytes
    assert peak.peak_bytes == peak.baseline_bytes + peak.growth_bytes
    assert peak.growth_mib == pytest.approx(peak.growth_bytes / 2**20)


def test_peak_memory_reports_a_failing_call():
    with pytest.raises(RuntimeError, match="math domain error"):
        cost.peak_memory(math.sqrt, -1.0)


# --- figures -------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _style():
    setup()
    yield
    plt.close("all")


def _fake_variants(memory=True):
    n = [1024, 2048, 4096]
    return {
        "full": {"n": n, "time_ms": [1.0, 4.0, 16.0], "peak_mib": [4.0, 16.0, 64.0] if memory else None},
        "chunked": {"n": n, "time_ms": [1.2, 5.0, None], "peak_mib": [1.0, 2.0, 4.0] if memory else None},
        "window": {"n": n, "time_ms": [0.5, 1.0, 2.0], "peak_mib": [1.0, 2.0, 4.0] if memory else None},
        "linear": {"n": n, "time_ms": [0.2, 0.4, 0.8], "peak_mib": [0.5, 1.0, 2.0] if memory else None},
    }


def _no_bold(fig):
    return all(t.get_fontweight() in ("normal", 400) for t in fig.findobj(matplotlib.text.Text))


def test_rnn_vs_attention_figure():
    fig = rnn_vs_attention_time([64, 128, 256], [1.0, 2.0, 4.0], [0.5, 0.6, 0.9])
    (ax,) = fig.axes
    assert ax.get_xlabel() == "序列长度 n" and ax.get_ylabel() == "前向时间（毫秒）"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_array_equal(lines[1].get_ydata(), [0.5, 0.6, 0.9])
    assert lines[0].get_marker() != lines[1].get_marker()
    assert lines[0].get_linestyle() != lines[1].get_linestyle()
    assert _no_bold(fig)


def test_variant_costs_figure_draws_time_and_memory_on_log_axes():
    fig = variant_costs(_fake_variants())
    time_ax, mem_ax = fig.axes
    assert time_ax.get_ylabel() == "前向时间（毫秒）" and mem_ax.get_ylabel() == "峰值内存增长（MiB）"
    assert {ax.get_xscale() for ax in fig.axes} == {"log"} and {ax.get_yscale() for ax in fig.axes} == {"log"}
    lines = time_ax.get_lines()
    assert [line.get_label() for line in lines] == [VARIANT_STYLE[k][0] for k in VARIANT_STYLE]
    assert len({(line.get_marker(), line.get_linestyle()) for line in lines}) == 4
    assert len({line.get_linestyle() for line in lines}) == 4  # tells series apart in grey
    assert len(lines[1].get_xdata()) == 2  # the unmeasured point is left out
    assert _no_bold(fig)


def test_variant_costs_without_memory_has_one_panel():
    assert len(variant_costs(_fake_variants(memory=False)).axes) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda: rnn_vs_attention_time([64, 128], [1.0], [1.0, 2.0]),
        lambda: variant_costs({}),
        lambda: variant_costs({"full": {"n": [1, 2], "time_ms": [1.0], "peak_mib": None}}),
    ],
)
def test_figures_reject_bad_data(call):
    with pytest.raises(ValueError):
        call()


# --- the benchmark's bookkeeping -----------------------------------------------------


def _fake_mha(speedup, fraction):
    return {"forward_speedup_vs_keras": speedup, "forward_backward_speedup_vs_keras": speedup,
            "forward_fraction_of_matmul": fraction}


def test_evaluate_targets_passes_and_fails_on_the_numbers():
    variants = _fake_variants()
    variants["chunked"]["time_ms"][-1] = 20.0
    good = {t["name"]: t for t in evaluate_targets(_fake_mha(1.5, 0.8), variants, slope_from=1024)}
    assert good["window time slope"]["measured"] == pytest.approx(1.0)
    assert all(t["passed"] for t in good.values() if t["passed"] is not None)
    assert good["chunked / full peak memory at n=4096"]["measured"] == pytest.approx(4 / 64)
    assert good["full time slope (for comparison)"]["measured"] == pytest.approx(2.0)

    variants["window"]["time_ms"] = [1.0, 4.0, 16.0]  # quadratic: must fail
    variants["chunked"]["peak_mib"] = [4.0, 16.0, 32.0]  # half of full: must fail
    bad = {t["name"]: t for t in evaluate_targets(_fake_mha(1.1, 0.5), variants, slope_from=1024)}
    failed = {name for name, t in bad.items() if t["passed"] is False}
    assert failed == {
        "forward speed-up vs keras.layers.MultiHeadAttention",
        "forward+backward speed-up vs keras.layers.MultiHeadAttention",
        "forward FLOP rate / tf.matmul rate",
        "chunked / full peak memory at n=4096",
        "window time slope",
    }


def test_measure_variants_returns_plain_rows():
    lines = []
    rows = measure_variants([64, 96], d=8, repeats=1, memory=False, log=lines.append)
    assert set(rows) == {"full", "chunked", "window", "linear"}
    for r in rows.values():
        assert r["n"] == [64, 96] and len(r["time_ms"]) == 2 and r["peak_mib"] is None
        assert all(t > 0 for t in r["time_ms"])
    assert len(lines) == 8


def test_each_memory_point_is_the_median_of_its_readings(monkeypatch):
    """One stray reading (a page of the allocator, a few MiB) cannot move a point."""
    from attnbook import measurements

    readings = iter([1.0, 9.0, 2.0, 5.0, 4.0, 6.0] * 2)   # MiB, three per point
    monkeypatch.setattr(measurements.cost, "peak_memories",
                        lambda calls: [cost.PeakMemory(0, 0, int(next(readings) * 2**20), "test") for _ in calls])
    assert measurements.MEMORY_READINGS == 3
    peaks = measurements._peak_growth(None, None, ["a", "b"], [64, 128], lambda name, n: ())
    assert peaks == {"a": [2.0, 5.0], "b": [2.0, 5.0]}


@pytest.mark.parametrize("nbytes, text", [
    (0, "0 B"), (1023, "1023 B"), (40_000, "39.1 KiB"), (4_000_000, "3.8 MiB"),
    (cost.score_table(100_000)["bytes"], "37.3 GiB"),
    (cost.score_table(100_000, batch=8, heads=8)["bytes"], "2.3 TiB"),
])
def test_format_bytes(nbytes, text):
    assert cost.format_bytes(nbytes) == text


def test_format_bytes_rejects_negative():
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        cost.format_bytes(-1)


@pytest.mark.slow
def test_start_measuring_then_measure_two_at_a_time():
    cost.start_measuring()
    small, large = cost.peak_memories([(np.ones, (2**20,), None, ()), (np.ones, (2**24,), None, ())])
    assert large.growth_bytes > 0.9 * 2**27 > 10 * small.growth_bytes
