"""Small generated data sets and the toy model that learns to reverse digit sequences.

Nothing here is downloaded: every array comes from a seeded NumPy generator.
"""

import dataclasses

import keras
import numpy as np

from ._tf import tf
from .attention import MiniMultiHeadAttention


def padded_batch(lengths, max_len=None, features=16, pad_value=0.0, seed=0):
    """Random N(0, 1) sequences of the given lengths, padded at the end.

    Args:
        lengths: ``(batch,)`` real lengths.
        max_len: padded length; defaults to the longest length.
        features: size of each position's vector.
        pad_value: the value written at padded positions (zero padding by default).

    Returns:
        float32 array ``(batch, max_len, features)``; position ``t`` of sequence ``b``
        is padding when ``t >= lengths[b]``.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or np.any(lengths < 0):
        raise ValueError(
            f"lengths must be a 1-D sequence of integers >= 0, got {lengths.tolist()!r}."
        )
    max_len = int(lengths.max()) if max_len is None else max_len
    if np.any(lengths > max_len):
        raise ValueError(f"lengths must be <= max_len={max_len}, got {lengths.tolist()}.")
    x = np.random.default_rng(seed).normal(size=(len(lengths), max_len, features))
    real = np.arange(max_len)[None, :] < lengths[:, None]
    return np.where(real[..., None], x, pad_value).astype("float32")


# --- the reversal task ---------------------------------------------------------------


def reversal_data(n, length=8, vocab=10, seed=0):
    """``n`` random digit sequences and their reversals: int32 ``(n, length)`` each."""
    x = np.random.default_rng(seed).integers(0, vocab, size=(n, length), dtype="int32")
    return x, x[:, ::-1].copy()


@keras.saving.register_keras_serializable(package="attnbook")
class ReversalModel(keras.Model):
    """A tiny encoder–decoder that reverses a digit sequence.

    Encoder: token + position embeddings, one self-attention block (residual and
    layer norm). Decoder: one learned query per output position asks the encoder,
    through cross-attention, where its digit is; a Dense layer reads the digit off.

    The decoder's queries are learned positions, not teacher-forced tokens, so the only
    way to solve the task is to route by position: the cross-attention weights
    ``(n_out, n_in)`` must become the anti-diagonal (output i reads input n-1-i).

    ``num_heads`` is the encoder's; the cross-attention has one head, so that its
    weights are a single table. ``model(tokens)`` maps int ``(batch, length)`` to logits
    ``(batch, length, vocab)``.
    """

    def __init__(self, length=8, vocab=10, d_model=32, num_heads=4, **kwargs):
        super().__init__(**kwargs)
        self.length, self.vocab, self.d_model, self.num_heads = length, vocab, d_model, num_heads
        self.tokens = keras.layers.Embedding(vocab, d_model, name="tokens")
        self.in_positions = keras.layers.Embedding(length, d_model, name="in_positions")
        self.out_queries = keras.layers.Embedding(length, d_model, name="out_queries")
        self.self_attention = MiniMultiHeadAttention(d_model, num_heads, name="self_attention")
        self.norm = keras.layers.LayerNormalization(name="norm")
        self.cross_attention = MiniMultiHeadAttention(d_model, 1, name="cross_attention")
        self.readout = keras.layers.Dense(vocab, name="readout")

    def encode(self, tokens):
        """int ``(batch, length)`` -> encoder output ``(batch, length, d_model)``."""
        if tokens.shape.rank != 2 or tokens.shape[-1] not in (None, self.length):
            raise ValueError(
                f"tokens must be (batch, {self.length}) integers, got shape {tuple(tokens.shape)}."
            )
        h = self.tokens(tokens) + self.in_positions(tf.range(self.length))
        return self.norm(h + self.self_attention(h))

    def call(self, tokens, return_attention_scores=False):
        memory = self.encode(tf.convert_to_tensor(tokens))
        queries = self.out_queries(tf.range(self.length))  # (n_out, d_model)
        queries = tf.broadcast_to(queries, (tf.shape(memory)[0], self.length, self.d_model))
        read, weights = self.cross_attention(queries, memory, return_attention_scores=True)
        logits = self.readout(read + queries)
        return (logits, weights[:, 0]) if return_attention_scores else logits

    def cross_attention_weights(self, tokens):
        """Cross-attention weights ``(batch, n_out, n_in)``: row i = where output i reads."""
        return self.call(tf.convert_to_tensor(tokens), return_attention_scores=True)[1].numpy()

    def get_config(self):
        return {**super().get_config(), "length": self.length, "vocab": self.vocab,
                "d_model": self.d_model, "num_heads": self.num_heads}


@dataclasses.dataclass
class ReversalRun:
    """A trained :class:`ReversalModel` and its held-out data and scores."""

    model: ReversalModel
    train_inputs: np.ndarray = dataclasses.field(repr=False)
    test_inputs: np.ndarray = dataclasses.field(repr=False)
    test_targets: np.ndarray = dataclasses.field(repr=False)
    accuracy: float  # held-out, per output digit
    sequence_accuracy: float  # held-out, whole sequence right

    def cross_attention(self, count=None):
        """Cross-attention weights ``(count, n_out, n_in)`` on held-out sequences."""
        return self.model.cross_attention_weights(self.test_inputs[:count])


def alignment_accuracy(weights):
    """Share of output positions whose strongest input is the reversed one.

    weights: ``(batch, n_out, n_in)`` with ``n_out == n_in``; output i should read
    input ``n_in - 1 - i`` (the anti-diagonal).
    """
    weights = np.asarray(weights)
    n = weights.shape[-1]
    return float(np.mean(weights.argmax(-1) == np.arange(n)[::-1]))


def train_reversal(epochs=6, seed=0, n_train=4096, n_test=512, length=8, vocab=10,
                   d_model=32, num_heads=4, batch_size=64, learning_rate=3e-3):
    """Train a :class:`ReversalModel` with fixed seeds and score it on held-out data.

    Seeds: ``keras.utils.set_random_seed(seed)`` fixes the initial weights and the
    shuffling; the training and test sequences come from seeds ``seed`` and
    ``seed + 1``. Training is silent (``verbose=0``).

    Returns:
        A :class:`ReversalRun`.
    """
    keras.utils.set_random_seed(seed)
    x, y = reversal_data(n_train, length, vocab, seed=seed)
    x_test, y_test = reversal_data(n_test, length, vocab, seed=seed + 1)
    model = ReversalModel(length, vocab, d_model, num_heads)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.fit(x, y, epochs=epochs, batch_size=batch_size, verbose=0)
    predicted = model(x_test).numpy().argmax(-1)  # a plain call: no predict() retracing
    return ReversalRun(
        model=model,
        train_inputs=x,
        test_inputs=x_test,
        test_targets=y_test,
        accuracy=float(np.mean(predicted == y_test)),
        sequence_accuracy=float(np.mean(np.all(predicted == y_test, axis=1))),
    )
