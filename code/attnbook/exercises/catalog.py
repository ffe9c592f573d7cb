"""练习目录：书里每道练习的唯一来源，按节分组。

每道练习在这里写一次：练习页里 ``{exercise}`` 块的标签、标题、题型、要提交的函数
或类、起步骨架的文档字符串，以及检查它的检查器（``checkers`` 子包里的 ``Checker``
对象本身）。思考题的列表、起步笔记本的骨架和测试里的编号都由它导出。

编号不写在这里，而由位置决定：某一节的第 n 道是“节号.n”，例如 4.5.2。书里 Sphinx
也按练习块在这一节各页里出现的顺序、以这一节的节号编号（见
``book/_ext/reading/numbering.py``）；测试核对目录与练习页的顺序一致，所以两边的编号不会分叉。
"""

import dataclasses

from . import _messages as say
from ._cases import Checker
from .checkers import attention, cost, heads, layers, linear, masks

@dataclasses.dataclass(frozen=True)
class Exercise:
    """目录里的一道练习。

    Args:
        label: 练习页里 ``{exercise}`` 块的标签，如 ``"ex-sdpa"``。
        title: 标题，与练习页一致。
        kind: ``"function"`` （提交函数）、``"class"`` （提交
            ``keras.layers.Layer`` 的子类）或 ``"thinking"`` （思考题，没有检查器）。
        signature: 要提交的函数或类的调用形式，如 ``"split_heads(x, num_heads)"``。
        doc: 起步骨架里的一行文档字符串。
        checker: 检查它的 ``Checker``；思考题为 None。
        id: 练习编号，如 ``"4.5.2"``，由在这一节目录里的位置决定。
    """

    label: str
    title: str
    kind: str = "function"
    signature: str = ""
    doc: str = ""
    checker: Checker = None
    id: str = ""

    @property
    def section(self):
        """所属的节，如 ``"4.5"``。"""
        return self.id.rsplit(".", 1)[0]

    @property
    def coding(self):
        """是不是编程题（有检查器）。"""
        return self.kind != "thinking"

    @property
    def answer_name(self):
        """答案应有的名字，如 ``"split_heads"``；思考题为空字符串。"""
        return self.signature.split("(", 1)[0]

    @property
    def stub(self):
        """起步笔记本里的骨架：定义行、一行文档字符串和 ``raise NotImplementedError``。"""
        todo = f'raise NotImplementedError("{say.STUB_TODO}")'
        if self.kind == "class":
            params = self.signature.split("(", 1)[1][:-1]
            return (f"class {self.answer_name}(keras.layers.Layer):\n"
                    f'    """{self.doc}"""\n\n'
                    f"    def __init__(self, {params}, **kwargs):\n"
                    f"        super().__init__(**kwargs)\n"
                    f"        {todo}\n")
        return f'def {self.signature}:\n    """{self.doc}"""\n    {todo}\n'

    @property
    def check_call(self):
        """起步笔记本里的检查语句，如 ``check("4.5.4", split_heads)``。"""
        return f'check("{self.id}", {self.answer_name})'


_ATTENTION = (
    Exercise("ex-shapes", "预测每一步的形状",
             signature="attention_shapes(batch, n_q, n_k, d_model, num_heads)",
             doc="返回 dict：query、key、value、scores、output 各自的形状（整数元组）。",
             checker=heads.SHAPES),
    Exercise("ex-sdpa", "实现缩放点积注意力",
             signature="scaled_dot_product_attention(query, key, value, mask=None)",
             doc="返回 (output, weights)：(..., n_q, d_v) 与 (..., n_q, n_k)。",
             checker=attention.SDPA),
    Exercise("ex-why-scale", "思考题：读懂权重与缩放", kind="thinking"),
    Exercise("ex-split-heads", "拆分多头",
             signature="split_heads(x, num_heads)",
             doc="拆成多头：(batch, seq, d_model) -> (batch, num_heads, seq, depth)。",
             checker=heads.SPLIT),
    Exercise("ex-merge-heads", "合并多头",
             signature="merge_heads(x)",
             doc="拼回：(batch, heads, seq, depth) -> (batch, seq, heads * depth)。",
             checker=heads.MERGE),
    Exercise("ex-fix-scale", "修好按 d_model 缩放的层", kind="class",
             signature="FixedMultiHeadAttention(d_model, num_heads)",
             doc="复制练习 4.5.6 列出的 BuggyMultiHeadAttention，改对那一行。",
             checker=layers.FIXED_LAYER),
    Exercise("ex-shape-test", "用形状测试抓出错误的层",
             signature="shape_test(layer_cls)",
             doc="用 layer_cls(d_model, num_heads) 建层，形状不对时抛出 AssertionError。",
             checker=layers.SHAPE_TEST),
    Exercise("ex-cross", "计算交叉注意力",
             signature="cross_attention(x, context, wq, wk, wv)",
             doc="查询来自 x，键和值来自 context -> (output, weights)。",
             checker=attention.CROSS),
    Exercise("ex-kv-cache", "思考题：解码时哪些可以复用", kind="thinking"),
    Exercise("ex-padding-mask", "生成填充掩码",
             signature="padding_mask(lengths, max_len)",
             doc="lengths (batch,) -> 布尔张量，可广播到 (batch, n_q, max_len)。",
             checker=masks.PADDING),
    Exercise("ex-decoder-mask", "组合因果掩码与填充掩码",
             signature="decoder_mask(lengths, n)",
             doc="-> 布尔张量 (batch, n, n)：j <= i 并且 j < lengths[b] 时为 True。",
             checker=masks.DECODER),
    Exercise("ex-score-memory", "预测打分表的内存",
             signature='score_table_bytes(n_q, n_k, batch=1, heads=1, dtype="float32")',
             doc="(batch, heads, n_q, n_k) 的打分表占多少字节。",
             checker=cost.SCORE_BYTES),
    Exercise("ex-parallel", "思考题：并行与平方代价", kind="thinking"),
    Exercise("ex-linear", "实现线性注意力",
             signature="linear_attention(query, key, value)",
             doc="φ(x) = elu(x) + 1 的非因果线性注意力 -> (..., n_q, d_v)。",
             checker=linear.LINEAR),
)

#: 每一节的练习，按练习页里的顺序：节号 -> 这一节的目录项。
_BY_SECTION = {"4.5": _ATTENTION}
#: 全部练习，按节、再按练习页里的顺序；一节的第 n 道编号是“节号.n”，如 ``4.5.2``。
CATALOG = tuple(dataclasses.replace(ex, id=f"{section}.{n}")
                for section, entries in _BY_SECTION.items() for n, ex in enumerate(entries, 1))
#: 编程题：编号 -> :class:`Exercise`。
EXERCISES = {ex.id: ex for ex in CATALOG if ex.coding}
#: 思考题的编号（书里讨论，没有检查器）。
CONCEPTUAL = tuple(ex.id for ex in CATALOG if not ex.coding)


def get_exercise(exercise_id):
    """编号为 ``exercise_id`` 的编程题；思考题或未知编号抛出 ``ValueError``。"""
    if exercise_id in CONCEPTUAL:
        raise ValueError(say.conceptual_id(exercise_id, EXERCISES))
    if not isinstance(exercise_id, str) or exercise_id not in EXERCISES:
        raise ValueError(say.unknown_id(exercise_id, EXERCISES))
    return EXERCISES[exercise_id]


def exercise_named(name):
    """要求提交名为 ``name`` 的函数或类的那道编程题；没有就抛出 ``ValueError``。"""
    for exercise in EXERCISES.values():
        if exercise.answer_name == name:
            return exercise
    raise ValueError(say.unknown_name(name, [ex.answer_name for ex in EXERCISES.values()]))
