"""生成出来的小数据集，以及学习把数字序列倒过来的玩具模型。

这里没有任何东西需要下载：每个数组都来自固定种子的 NumPy 随机数生成器。
"""

import dataclasses

import keras
import numpy as np

from ._tf import tf
from .attention import MiniMultiHeadAttention


def padded_batch(lengths, max_len=None, features=16, pad_value=0.0, seed=0):
    """给定长度的 N(0, 1) 随机序列，在末尾填充到同一长度。

    Args:
        lengths: 真实长度 ``(batch,)``，非负整数。
        max_len: 填充后的长度，默认取最长的长度。
        features: 每个位置的向量维度。
        pad_value: 填充位置写入的值（默认为 0）。
        seed: 随机数种子。

    Returns:
        float32 数组 ``(batch, max_len, features)``；``t >= lengths[b]`` 时，序列
        ``b`` 的位置 ``t`` 是填充。

    Raises:
        ValueError: ``lengths`` 不是一维非负整数序列，或某个长度超过 ``max_len``。
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or np.any(lengths < 0):
        raise ValueError(f"lengths must be a 1-D sequence of integers >= 0, got {lengths.tolist()!r}.")
    max_len = int(lengths.max()) if max_len is None else max_len
    if np.any(lengths > max_len):
        raise ValueError(f"lengths must be <= max_len={max_len}, got {lengths.tolist()}.")
    x = np.random.default_rng(seed).normal(size=(len(lengths), max_len, features))
    real = np.arange(max_len)[None, :] < lengths[:, None]
    return np.where(real[..., None], x, pad_value).astype("float32")


# --- the reversal task ---------------------------------------------------------------


def reversal_data(n, length=8, vocab=10, seed=0):
    """``n`` 个随机数字序列及其倒序，各为 int32 ``(n, length)``。"""
    x = np.random.default_rng(seed).integers(0, vocab, size=(n, length), dtype="int32")
    return x, x[:, ::-1].copy()


@keras.saving.register_keras_serializable(package="attnbook")
class ReversalModel(keras.Model):
    """把数字序列倒过来的极小编码器-解码器。

    编码器：词元嵌入加位置编码（学出来的位置向量），再接一个自注意力块（残差连接与
    层归一化）。解码器：每个输出位置有一个学出来的查询，通过交叉注意力向编码器问
    “我的数字在哪”，再由一个 Dense 层读出这个数字。

    解码器的查询是学出来的位置，不是教师强制输入的词元，所以解这个任务只能按位置
    路由。最直接的解是交叉注意力权重 ``(n_out, n_in)`` 成为反对角线（输出 i 读取
    输入 n-1-i）；编码器的自注意力也可以先把顺序调过来，所以训练后是不是这样要实测。

    ``num_heads`` 是编码器自注意力的头数；交叉注意力只有一个头，这样它的权重就是
    一张表。``model(tokens)`` 把整数 ``(batch, length)`` 映射为 logits
    ``(batch, length, vocab)``。
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
        """编码：整数 ``(batch, length)`` -> 编码器输出 ``(batch, length, d_model)``。"""
        if tokens.shape.rank != 2 or tokens.shape[-1] not in (None, self.length):
            raise ValueError(f"tokens must be (batch, {self.length}) integers, got shape {tuple(tokens.shape)}.")
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
        """交叉注意力权重 ``(batch, n_out, n_in)``：第 i 行是输出 i 从哪里读取。"""
        return self.call(tf.convert_to_tensor(tokens), return_attention_scores=True)[1].numpy()

    def get_config(self):
        """返回模型的配置，``from_config`` 可据此重建模型。"""
        return {**super().get_config(), "length": self.length, "vocab": self.vocab,
                "d_model": self.d_model, "num_heads": self.num_heads}


@dataclasses.dataclass
class ReversalRun:
    """训练好的 :class:`ReversalModel`，以及它的训练输入、测试数据与准确率。

    ``accuracy`` 是测试数据上逐个数字的准确率，``sequence_accuracy`` 是整个序列
    全对的比例。
    """

    model: ReversalModel
    train_inputs: np.ndarray = dataclasses.field(repr=False)
    test_inputs: np.ndarray = dataclasses.field(repr=False)
    test_targets: np.ndarray = dataclasses.field(repr=False)
    accuracy: float  # held-out, per output digit
    sequence_accuracy: float  # held-out, whole sequence right

    def cross_attention(self, count=None):
        """测试序列上的交叉注意力权重 ``(count, n_out, n_in)``，默认取全部序列。"""
        return self.model.cross_attention_weights(self.test_inputs[:count])


def alignment_accuracy(weights):
    """对齐准确率：在所有输出位置中，权重最大的输入正是倒序位置的比例。

    ``weights`` 为 ``(batch, n_out, n_in)``，``n_out == n_in``；输出 i 应读取输入
    ``n_in - 1 - i``，即反对角线。
    """
    weights = np.asarray(weights)
    n = weights.shape[-1]
    return float(np.mean(weights.argmax(-1) == np.arange(n)[::-1]))


def train_reversal(epochs=6, seed=0, n_train=4096, n_test=512, length=8, vocab=10,
                   d_model=32, num_heads=4, batch_size=64, learning_rate=3e-3):
    """用固定种子训练一个 :class:`ReversalModel`，并在测试数据上算准确率。

    种子：``keras.utils.set_random_seed(seed)`` 固定初始参数与打乱顺序；训练序列与
    测试序列分别来自种子 ``seed`` 与 ``seed + 1``。训练时不打印任何东西
    （``verbose=0``）。

    Returns:
        一个 :class:`ReversalRun`。
    """
    keras.utils.set_random_seed(seed)
    x, y = reversal_data(n_train, length, vocab, seed=seed)
    x_test, y_test = reversal_data(n_test, length, vocab, seed=seed + 1)
    model = ReversalModel(length, vocab, d_model, num_heads)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=epochs, batch_size=batch_size, verbose=0)
    predicted = model(x_test).numpy().argmax(-1)  # a plain call: no predict() retracing
    return ReversalRun(model, train_inputs=x, test_inputs=x_test, test_targets=y_test,
                       accuracy=float(np.mean(predicted == y_test)),
                       sequence_accuracy=float(np.mean(np.all(predicted == y_test, axis=1))))


# --- stacking attention layers -------------------------------------------------------


def train_stack(layer_cls, depth=2, steps=60, d_model=32, num_heads=4, n=10, batch=16,
                learning_rate=1e-2, seed=0, frozen=0):
    """把 ``depth`` 个 ``layer_cls(d_model, num_heads)`` 串联起来，训练它们输出序列平均。

    任务：输入 ``x`` 是形状为 ``(batch, n, d_model)`` 的随机序列，目标是每个位置都输出
    整条序列的平均 ``mean(x, axis=1)``，完成任务必须跨位置取材。每一步都换一批新输入，
    用 ``tf.GradientTape`` 对参与训练的层一起求梯度。只要求 ``layer_cls`` 是自注意力层
    ``layer(x)``，所以原稿的最小层也能用。

    ``frozen`` 是对照：最前面的 ``frozen`` 层的参数保持初始值、不参与训练。种子相同时，
    冻结与不冻结的两次训练从同样的初始参数出发、看到同样的输入，只差这几层是否训练；
    比较两者的误差，就能看出梯度穿过后面的层、训练了前面的层，对结果有没有贡献。

    Returns:
        一个字典：``losses`` 是每一步的均方误差（共 ``steps`` 个），``input_shape`` 是
        每一批输入的形状 ``(batch, n, d_model)``，``output_shape`` 是串联后的输出形状，
        ``trainable`` 是参与训练的张量个数，``first_layer_change`` 是第一层的参数在训练
        前后之差的范数除以训练前的范数（冻结第一层时为 0）。

    Raises:
        ValueError: ``frozen`` 不是 0 到 ``depth`` 之间的整数。
    """
    if isinstance(frozen, bool) or not isinstance(frozen, int) or not 0 <= frozen <= depth:
        raise ValueError(f"frozen must be an integer from 0 to depth={depth}, got {frozen!r}.")
    keras.utils.set_random_seed(seed)
    layers = [layer_cls(d_model, num_heads) for _ in range(depth)]
    optimizer = keras.optimizers.Adam(learning_rate)
    rng = np.random.default_rng(seed)
    first_batch = rng.standard_normal((batch, n, d_model), dtype="float32")
    y = first_batch
    for layer in layers:  # build every layer's weights before choosing what trains
        y = layer(y)
    initial = [w.numpy().copy() for w in layers[0].weights]
    variables = [v for layer in layers[frozen:] for v in layer.trainable_variables]

    @tf.function(autograph=False)
    def step(x):
        target = tf.reduce_mean(x, axis=1, keepdims=True) * tf.ones_like(x)
        with tf.GradientTape() as tape:
            y = x
            for layer in layers:
                y = layer(y)
            loss = tf.reduce_mean(tf.square(y - target))
        if variables:
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss, y

    losses = []
    for i in range(steps):
        x = first_batch if i == 0 else rng.standard_normal((batch, n, d_model), dtype="float32")
        loss, y = step(tf.constant(x))
        losses.append(float(loss))
    after = [w.numpy() for w in layers[0].weights]
    change = np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(after, initial)))
    size = np.sqrt(sum(np.sum(b ** 2) for b in initial))
    return {"losses": losses, "input_shape": (batch, n, d_model), "output_shape": tuple(y.shape),
            "trainable": len(variables), "first_layer_change": float(change / size)}
