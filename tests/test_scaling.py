"""Why divide by √d_k: the measured behaviour behind the scaling figure."""

import numpy as np
import pytest

from attnbook.scaling import measure_scaling, softmax_stats


@pytest.fixture(scope="module")
def result():
    return measure_scaling(depths=(4, 16, 64, 256), heads=8)


@pytest.mark.claim("scaling-prevents-saturation")
def test_unscaled_scores_saturate_and_gradients_shrink(result):
    unscaled = result["unscaled"]
    assert np.all(np.diff(unscaled["max_weight"]) > 0)
    assert unscaled["max_weight"][-1] > 0.85
    assert unscaled["grad_norm"][-1] < 0.5 * unscaled["grad_norm"][0]


def test_dividing_by_head_depth_keeps_softmax_shape_fixed(result):
    """Across depths, the √d_k curves move less than a fifth as much as the unscaled ones."""
    for metric in ("max_weight", "entropy", "grad_norm"):
        right, unscaled = np.ptp(result["head_depth"][metric]), np.ptp(result["unscaled"][metric])
        assert right < 0.2 * unscaled, metric


@pytest.mark.claim("full-dim-saturates")
def test_dividing_by_d_model_flattens_rather_than_saturates(result):
    wrong, right = result["d_model"], result["head_depth"]
    uniform_entropy = np.log(result["n_keys"])
    assert np.all(np.array(wrong["max_weight"]) < np.array(right["max_weight"]))
    assert np.all(np.array(wrong["entropy"]) > 0.95 * uniform_entropy)
    assert max(wrong["max_weight"]) < 0.1  # far from one-hot: not saturated


def test_softmax_stats_extremes():
    uniform = softmax_stats(np.zeros((3, 4)), np.ones((3, 4)))
    assert uniform["max_weight"] == pytest.approx(0.25)
    assert uniform["entropy"] == pytest.approx(np.log(4))
    one_hot = softmax_stats(np.array([[100.0, 0, 0, 0]]), np.random.default_rng(0).normal(size=(1, 4)))
    assert one_hot["max_weight"] == pytest.approx(1.0)
    assert one_hot["grad_norm"] < 1e-12
