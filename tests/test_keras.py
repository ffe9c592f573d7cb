"""The package's layers as Keras citizens: saving, tf.distribute, mixed precision, XLA,
and Sequential and functional models with symbolic inputs."""

import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from attnbook import MiniMultiHeadAttention, tf
from attnbook.toy import ReversalModel, reversal_data

BATCH, N_Q, N_K, FEATURES, D_MODEL, HEADS = 4, 10, 6, 16, 32, 4


def inputs(seed=0):
    """x ``(BATCH, N_Q, FEATURES)``, context ``(BATCH, N_K, 8)``, a mask ``(BATCH, N_Q, N_K)``
    whose last query row is fully masked, and a regression target ``(BATCH, 1)``."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, N_Q, FEATURES)).astype("float32")
    context = rng.normal(size=(BATCH, N_K, 8)).astype("float32")
    mask = rng.random((BATCH, N_Q, N_K)) < 0.7
    mask[:, :, 0] = True
    mask[:, -1, :] = False
    return x, context, mask, x.mean(axis=(1, 2))[:, None]


def sequential_regressor():
    """Sequential: ``(batch, N_Q, FEATURES)`` -> self-attention -> Flatten -> ``(batch, 1)``."""
    return keras.Sequential([
        keras.Input((N_Q, FEATURES)),
        MiniMultiHeadAttention(D_MODEL, HEADS),
        keras.layers.Flatten(),  # needs the static sequence length of the layer's output
        keras.layers.Dense(1),
    ])


def functional_cross_attention():
    """Functional: (x, context, mask) -> (output ``(batch, N_Q, D_MODEL)``, weights)."""
    x, context = keras.Input((N_Q, FEATURES)), keras.Input((N_K, 8))
    mask = keras.Input((N_Q, N_K), dtype="bool")
    out, weights = MiniMultiHeadAttention(D_MODEL, HEADS, name="mha")(
        x, context, attention_mask=mask, return_attention_scores=True)
    return keras.Model([x, context, mask], [keras.layers.Dense(3)(out), weights])


def fit_losses(model, epochs=4, **compile_args):
    x, _, _, y = inputs()
    x, y = np.tile(x, (8, 1, 1)), np.tile(y, (8, 1))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", **compile_args)
    return model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0).history["loss"]


def assert_trains(losses):
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < losses[0], losses


# --- saving ----------------------------------------------------------------------------


def test_public_classes_are_registered_under_the_package_name():
    assert keras.saving.get_registered_name(MiniMultiHeadAttention) == "attnbook>MiniMultiHeadAttention"
    assert keras.saving.get_registered_name(ReversalModel) == "attnbook>ReversalModel"


def test_saved_model_reloads_without_custom_objects(tmp_path):
    keras.utils.set_random_seed(0)
    model = functional_cross_attention()
    x, context, mask, _ = inputs()
    path = tmp_path / "cross.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded.get_layer("mha"), MiniMultiHeadAttention)
    assert loaded.get_layer("mha").get_config() == model.get_layer("mha").get_config()
    for ours, theirs in zip(model([x, context, mask]), loaded([x, context, mask]), strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_reversal_model_reloads_without_custom_objects(tmp_path):
    keras.utils.set_random_seed(0)
    tokens, _ = reversal_data(4, length=6)
    model = ReversalModel(length=6, d_model=16, num_heads=2)
    model(tokens)
    model.save(tmp_path / "reversal.keras")
    loaded = keras.models.load_model(tmp_path / "reversal.keras")
    assert isinstance(loaded, ReversalModel) and loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(model(tokens).numpy(), loaded(tokens).numpy())


# --- symbolic inputs -------------------------------------------------------------------


def test_sequential_model_keeps_the_sequence_length_and_trains():
    keras.utils.set_random_seed(0)
    model = sequential_regressor()
    assert model.layers[0].output.shape == (None, N_Q, D_MODEL)
    assert model.output_shape == (None, 1)
    assert_trains(fit_losses(model))


def test_functional_model_matches_the_layer_called_eagerly():
    keras.utils.set_random_seed(0)
    model = functional_cross_attention()
    assert [tuple(t.shape) for t in model.outputs] == [(None, N_Q, 3), (None, HEADS, N_Q, N_K)]
    x, context, mask, _ = inputs()
    _, weights = model([x, context, mask])
    _, eager = model.get_layer("mha")(x, context, attention_mask=mask, return_attention_scores=True)
    assert weights.shape == (BATCH, HEADS, N_Q, N_K)
    np.testing.assert_allclose(weights.numpy(), eager.numpy(), atol=1e-6)


def test_self_attention_spec_uses_x_for_the_keys():
    out, weights = MiniMultiHeadAttention(D_MODEL, HEADS).compute_output_spec(
        keras.KerasTensor((None, 7, 5)), return_attention_scores=True)
    assert (out.shape, weights.shape) == ((None, 7, D_MODEL), (None, HEADS, 7, 7))


# --- mixed precision and XLA -----------------------------------------------------------


def test_mixed_bfloat16_keeps_float32_variables_and_normalised_rows(mixed_bfloat16):
    layer = MiniMultiHeadAttention(D_MODEL, HEADS)
    x, context, mask, _ = inputs()
    out, weights = layer(x, context, attention_mask=mask, return_attention_scores=True)
    assert layer.weights and {v.dtype for v in layer.weights} == {"float32"}
    assert (out.dtype, weights.dtype) == (tf.bfloat16, tf.bfloat16)
    out, weights = out.numpy().astype("float32"), weights.numpy().astype("float32")
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    allowed = np.broadcast_to(mask[:, None], weights.shape)
    assert np.all(weights[~allowed] == 0)
    sums = weights.sum(-1)
    np.testing.assert_allclose(sums[:, :, :-1], 1, atol=2e-2)  # bfloat16 keeps 8 bits
    np.testing.assert_array_equal(sums[:, :, -1], 0)  # the fully masked query row


def test_mixed_bfloat16_model_trains(mixed_bfloat16):
    keras.utils.set_random_seed(0)
    model = sequential_regressor()
    assert model.layers[0].compute_dtype == "bfloat16"
    assert_trains(fit_losses(model))


@pytest.mark.slow
def test_trains_with_jit_compile():
    keras.utils.set_random_seed(0)
    model = sequential_regressor()
    losses = fit_losses(model, jit_compile=True)
    assert model.jit_compile is True
    assert_trains(losses)
    layer, x = model.layers[0], inputs()[0]
    compiled = tf.function(layer, jit_compile=True)  # raises if XLA cannot compile the call
    np.testing.assert_allclose(compiled(x).numpy(), layer(x).numpy(), atol=1e-5)


# --- tf.distribute -----------------------------------------------------------------------

# Logical devices must be set before TensorFlow initialises its runtime, so this runs in a
# fresh interpreter. It prints one JSON line: replicas, variable types and the losses.
MIRRORED = """
import json, sys
sys.path[:0] = {path!r}
from attnbook import tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
from test_keras import fit_losses, sequential_regressor
keras.utils.set_random_seed(0)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = sequential_regressor()
    losses = fit_losses(model)
print(json.dumps({{"replicas": strategy.num_replicas_in_sync, "losses": losses,
                  "kernel": type(model.layers[0].wq.kernel.value).__name__}}))
"""


@pytest.mark.slow
def test_trains_under_mirrored_strategy_on_two_logical_cpus():
    script = MIRRORED.format(path=[str(Path(__file__).parent)])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2
    assert result["kernel"] == "MirroredVariable"
    assert_trains(result["losses"])
