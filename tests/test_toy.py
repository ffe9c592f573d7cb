"""Tests of attnbook.toy: generated data and the reversal model that the page trains."""

import numpy as np
import pytest

from attnbook import MiniMultiHeadAttention
from attnbook.toy import ReversalModel, alignment_accuracy, reversal_data, train_reversal, train_stack


@pytest.fixture(scope="module")
def run():
    return train_reversal(seed=0)  # the page's settings


def test_reversal_data_is_seeded_and_reversed():
    x, y = reversal_data(5, length=8, seed=3)
    assert x.shape == y.shape == (5, 8) and x.dtype == np.int32
    np.testing.assert_array_equal(y, x[:, ::-1])
    np.testing.assert_array_equal(x, reversal_data(5, length=8, seed=3)[0])
    assert x.min() >= 0 and x.max() <= 9


def test_model_shapes():
    model = ReversalModel(length=6, vocab=10, d_model=16, num_heads=2)
    tokens = np.zeros((3, 6), np.int32)
    assert model(tokens).shape == (3, 6, 10)
    weights = model.cross_attention_weights(tokens)
    assert weights.shape == (3, 6, 6)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_model_rejects_wrong_length():
    with pytest.raises(ValueError, match=r"tokens must be \(batch, 6\)"):
        ReversalModel(length=6)(np.zeros((2, 5), np.int32))


def test_alignment_accuracy_counts_the_anti_diagonal():
    anti = np.eye(4)[::-1][None]
    assert alignment_accuracy(anti) == 1.0
    assert alignment_accuracy(np.eye(4)[None]) == 0.0


@pytest.mark.slow
def test_trained_model_reverses_held_out_sequences(run):
    assert run.accuracy >= 0.95


@pytest.mark.slow
@pytest.mark.claim("learned-routing")
def test_cross_attention_learns_the_anti_diagonal(run):
    weights = run.cross_attention()
    assert weights.shape == (len(run.test_inputs), 8, 8)
    assert alignment_accuracy(weights) >= 0.9


@pytest.mark.slow
def test_training_is_deterministic():
    again = train_reversal(seed=0, epochs=1)
    twice = train_reversal(seed=0, epochs=1)
    for a, b in zip(again.model.get_weights(), twice.model.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_another_seed_also_learns():
    other = train_reversal(seed=1)
    assert other.accuracy >= 0.95
    assert alignment_accuracy(other.cross_attention()) >= 0.9


# --- stacking, and its control with the first layer frozen -----------------------------------


def test_a_frozen_first_layer_keeps_its_weights_and_the_run_its_start():
    """The control starts where the stacked run starts (same weights, same batches) and
    differs only in that the first layer does not train."""
    stacked = train_stack(MiniMultiHeadAttention, depth=2, steps=5)
    control = train_stack(MiniMultiHeadAttention, depth=2, steps=5, frozen=1)
    assert stacked["losses"][0] == control["losses"][0]   # the first step's loss precedes any update
    assert stacked["losses"][1:] != control["losses"][1:]
    assert control["first_layer_change"] == 0.0 and stacked["first_layer_change"] > 0.0
    assert (stacked["trainable"], control["trainable"]) == (16, 8)   # 4 projections × (kernel, bias) a layer
    assert control["output_shape"] == stacked["output_shape"] == (16, 10, 32)


def test_freezing_every_layer_trains_nothing():
    frozen = train_stack(MiniMultiHeadAttention, depth=2, steps=3, frozen=2)
    assert frozen["trainable"] == 0 and frozen["first_layer_change"] == 0.0


@pytest.mark.parametrize("frozen", [-1, 3, 1.0, True])
def test_frozen_must_count_leading_layers(frozen):
    with pytest.raises(ValueError, match="frozen must be an integer from 0 to depth=2"):
        train_stack(MiniMultiHeadAttention, depth=2, steps=1, frozen=frozen)


@pytest.mark.slow
def test_training_the_first_layer_beats_the_frozen_control():
    """The page's setting: gradients that cross the second layer into the first lower the loss."""
    stacked = np.mean(train_stack(MiniMultiHeadAttention)["losses"][-10:])
    control = np.mean(train_stack(MiniMultiHeadAttention, frozen=1)["losses"][-10:])
    assert stacked <= 0.8 * control
