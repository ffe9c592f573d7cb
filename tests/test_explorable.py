"""The data behind the explorable figures (attnbook.pages.explorable) and the twin's
fixtures (tests/twin_fixtures.py), without a browser: the page gets the inputs exactly,
and the package's values for every setting are what the package computes."""

import base64

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnbook import MiniMultiHeadAttention, plots, scaled_dot_product_attention, tf  # noqa: E402
from attnbook.pages import explorable  # noqa: E402
from attnbook.plots import figure_svg  # noqa: E402
from book._ext.resolving import figures as figures_ext  # noqa: E402
from twin_fixtures import CASES, twin_cases  # noqa: E402
plots.setup()


def decoded(array):
    return np.frombuffer(base64.b64decode(array["data"]), dtype="<f4").reshape(array["shape"])


@pytest.fixture
def walkthrough():
    x = np.random.default_rng(0).normal(size=(6, 10)).astype(np.float32)
    wq, wk = tf.keras.layers.Dense(4), tf.keras.layers.Dense(4)
    q, k = wq(x[None]), wk(x[None])
    weights = scaled_dot_product_attention(q, k, k)[1].numpy()[0]
    fig = plots.weights_heatmap(weights, vmax=1.0)
    yield fig, x, wq, wk, weights
    plt.close(fig)


def test_scaling_data_is_exact_and_expected_values_are_the_package_s(walkthrough):
    fig, x, wq, wk, weights = walkthrough
    explorable.explore_scaling(fig, x, wq, wk)
    data = explorable.explorable_data(fig)
    assert data["kind"] == "scaling" and data["initial"] == {"scale": "d_k", "row": 0}
    np.testing.assert_array_equal(decoded(data["inputs"]["x"]), x)
    np.testing.assert_array_equal(decoded(data["inputs"]["wq"]), wq.get_weights()[0])
    np.testing.assert_array_equal(decoded(data["inputs"]["bk"]), wk.get_weights()[1])
    assert (data["inputs"]["d_k"], data["inputs"]["d_model"]) == (4, 10)
    np.testing.assert_allclose(data["expected"]["d_k"]["weights"], weights, atol=1e-6)
    q, k = (w(x[None]).numpy()[0].astype(np.float64) for w in (wq, wk))
    for name, divisor in [("d_model", np.sqrt(10)), ("none", 1.0)]:
        s = q @ k.T / divisor
        ref = np.exp(s - s.max(1, keepdims=True))
        np.testing.assert_allclose(data["expected"][name]["weights"], ref / ref.sum(1, keepdims=True), atol=1e-5)
    assert len(base64.b64decode(data["cmap"])) == 256 * 3
    assert figures_ext.figure_metadata(figure_svg(fig))["explorable"]["kind"] == "scaling"


def test_masks_expected_values_mask_exactly_and_never_give_nan():
    x = np.random.default_rng(1).normal(size=(6, 8)).astype(np.float32)
    layer = MiniMultiHeadAttention(8, 2)
    layer(x[None])
    fig = plots.mask_comparison(np.full((6, 6), 1 / 6), np.full((6, 6), 1 / 6), length=4, vmax=1.0)
    explorable.explore_masks(fig, x, layer, length=4)
    data = explorable.explorable_data(fig)
    assert data["initial"] == {"padding": 2, "causal": False} and data["inputs"]["heads"] == 2
    assert len(data["expected"]) == 7 * 2
    for key, value in data["expected"].items():
        padding, causal = map(int, key.split(","))
        masked = np.asarray(value["weights"][1])
        real = 6 - padding
        assert not np.isnan(masked).any()
        assert np.all(masked[:, real:] == 0), key
        if causal:
            assert np.all(np.triu(masked, 1) == 0), key
        if real == 0:
            assert np.all(masked == 0), "a fully padded sequence: every row all zeros"
        else:
            np.testing.assert_allclose(masked.sum(1), 1, atol=1e-6)
    panels = plots.figure_svg  # the dashed lines are named, so the page can move them
    meta = figures_ext.figure_metadata(panels(fig))
    assert meta["heatmaps"][1]["padding"] == {"length": 4, "cols": "padding-cols-1", "rows": "padding-rows-1"}
    plt.close(fig)


def test_bad_input_gets_a_value_error(walkthrough):
    fig, x, wq, wk, _ = walkthrough
    with pytest.raises(ValueError, match="must be a built Dense layer"):
        explorable.explore_scaling(fig, x, wq, tf.keras.layers.Dense(4))
    with pytest.raises(ValueError, match=r"x must be \(n, d_model\)"):
        explorable.explore_scaling(fig, x[None], wq, wk)
    with pytest.raises(ValueError, match="heat map drawn by attnbook.plots"):
        explorable.explore_scaling(plt.figure(), x, wq, wk)
    layer = MiniMultiHeadAttention(10, 2)
    layer(x[None])
    with pytest.raises(ValueError, match="0 <= length <= n"):
        explorable.explore_masks(fig, x, layer, length=7)


def test_the_page_gets_the_inputs_but_not_the_expected_values(walkthrough):
    fig, x, wq, wk, _ = walkthrough
    explorable.explore_scaling(fig, x, wq, wk)
    meta = figures_ext.figure_metadata(figure_svg(fig))
    svg, panels = figures_ext.inline_figure(figure_svg(fig), "alt", "fig0-", {})
    page = {k: v for k, v in meta["explorable"].items() if k != "expected"}
    html = figures_ext.figure_html(svg, panels, page)
    assert 'class="attnbook-fig attnbook-heatmap attnbook-explorable"' in html
    assert "attnbook-explorable-data" in html and '"expected"' not in html


def test_twin_fixtures_cover_masks_heads_and_divisors():
    cases = twin_cases()
    assert len(cases) == len(CASES)
    for case in cases:
        for ref in ("float32", "float64"):
            w = np.asarray(case[ref]["weights"])
            assert w.shape[0] == case["heads"] and not np.isnan(w).any()
        if case["mask"] is not None:
            mask = np.asarray(case["mask"], dtype=bool)
            assert np.all(np.asarray(case["float64"]["weights"])[:, ~mask] == 0)
        diff = np.abs(np.asarray(case["float32"]["weights"]) - np.asarray(case["float64"]["weights"])).max()
        assert diff < 1e-6, f"{case['name']}: float32 and float64 differ by {diff}"
    empty = [c for c in cases if c["mask"] and not np.any(c["mask"])]
    assert empty and np.all(np.asarray(empty[0]["float32"]["weights"]) == 0)


def test_heads_expected_values_are_the_layer_s_own_for_its_head_count():
    x = np.random.default_rng(2).normal(size=(5, 8)).astype(np.float32)
    layer = MiniMultiHeadAttention(8, 2)
    weights = layer(x[None], return_attention_scores=True)[1].numpy()[0]
    fig = plots.head_grid(weights, vmax=1.0)
    explorable.explore_heads(fig, x, layer, heads=(1, 2, 4, 8))
    data = explorable.explorable_data(fig)
    np.testing.assert_allclose(data["expected"]["2"]["weights"], weights, atol=1e-6)
    assert [len(data["expected"][str(h)]["weights"]) for h in (1, 2, 4, 8)] == [1, 2, 4, 8]
    with pytest.raises(ValueError, match="heads must divide d_model=8"):
        explorable.explore_heads(fig, x, layer, heads=(1, 3))
    plt.close(fig)



def test_saturation_sample_is_signs_and_expected_values_are_softmax_stats():
    from attnbook.scaling import measure_scaling, softmax_stats

    sample = explorable.saturation_sample(n_queries=8, n_keys=16, max_depth=64)
    assert set(np.unique(sample["query"])) == {-1.0, 1.0} and sample["upstream"].shape == (8, 16)
    result = measure_scaling(depths=(4, 16, 64), n_queries=8, n_keys=16)
    fig = plots.scaling_curves(result)
    with pytest.raises(ValueError, match="±1 only"):
        explorable.explore_saturation(fig, {**sample, "upstream": sample["upstream"] * 0.5}, result)
    explorable.explore_saturation(fig, sample, result, step=4)
    data = explorable.explorable_data(fig)
    assert data["settings"]["d_k"] == {"from": 4, "to": 64, "step": 4} and len(data["expected"]) == 16
    bits = np.frombuffer(base64.b64decode(data["inputs"]["query"]["bits"]), dtype=np.uint8)
    np.testing.assert_array_equal(np.unpackbits(bits, bitorder="little").reshape(8, 64) * 2.0 - 1, sample["query"])
    q, k = sample["query"][:, :12].astype(float), sample["key"][:, :12].astype(float)
    want = softmax_stats(q @ k.T / np.sqrt(12), sample["upstream"].astype(float))
    assert data["expected"]["12"]["head_depth"] == {m: want[m] for m in ("max_weight", "grad_norm")}
    svg = figure_svg(fig)
    assert all(f'id="{gid}"' in svg for gid in data["ids"].values())
    assert data["curves"]["unscaled-max_weight"] == result["unscaled"]["max_weight"]
    plt.close(fig)
