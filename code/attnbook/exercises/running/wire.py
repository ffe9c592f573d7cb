"""What the checker and its child process say to each other.

The parent sends the child one job, pickled (the child trusts the parent). The child
answers in JSON only, one :class:`Message` per ``send_bytes``, so reading its
messages can never run code in the parent: arrays travel as their dtype, shape and
base64 bytes, and anything else the reader's code returned is described (its type and
shape) instead of being sent.
"""

import base64
import dataclasses
import enum
import json
import math

import numpy as np

MAX_MESSAGE = 64 * 2**20  # bytes; a bigger message from the child is a failure, not a read
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16"}
_MAX_DEPTH = 8
_MAX_ITEMS = 10_000


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


class Kind(enum.Enum):
    """Every kind of message the child sends, in the order a job sends them."""

    READY = "ready"            # warmed up; waiting for the job
    LOADING = "loading"        # the tripwires are laid; the answer loads now
    LOAD_ERROR = "load_error"  # text: why it would not load; usage: a file the command line named
    PROBLEM = "problem"        # text: the answer is not the kind of object the exercise asks for
    LOADED = "loaded"          # the cases run now
    RESULT = "result"          # case index, value: what the task returned, encoded
    FAIL = "fail"              # case index, text: the task itself failed the case
    UNFINISHED = "unfinished"  # case index, text: the answer raised NotImplementedError
    ERROR = "error"            # case index, text: the answer raised something else
    HIT = "hit"                # text: the reference code it reached (any time, any thread)
    DONE = "done"              # every case ran


@dataclasses.dataclass(frozen=True)
class Message:
    """One message from the child: its kind and the fields that kind carries."""

    kind: Kind
    text: str = ""
    case: int = -1
    value: object = None
    usage: bool = False

    def to_bytes(self):
        """The message as JSON bytes (in the child)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if getattr(self, f.name) != f.default}
        fields["kind"] = self.kind.value
        return json.dumps(fields, ensure_ascii=False, allow_nan=False).encode("utf-8")

    @classmethod
    def from_bytes(cls, payload):
        """The message in ``payload`` (in the parent); :class:`ProtocolError` if it is not one."""
        try:
            fields = json.loads(payload.decode("utf-8"))
            message = cls(**{**fields, "kind": Kind(fields["kind"])})
        except (ValueError, TypeError, KeyError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise ProtocolError("不是检查器的消息") from None
        if not (isinstance(message.text, str) and type(message.case) is int and type(message.usage) is bool):
            raise ProtocolError("消息的字段类型不对")
        return message


# --- values: encoded in the child, decoded in the parent ------------------------------


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A value the child could not send as data: its type name, its shape if it has one, and
    the non-numeric dtype (a string tensor's) if there was one."""

    type_name: str
    shape: tuple = None
    dtype: str = None


def encode(value, depth=0):
    """A JSON-able description of ``value`` (runs in the child; may run the reader's code)."""
    if depth > _MAX_DEPTH:
        return _opaque(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else {"__float__": repr(float(value))}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, str):
        return {"__str__": value[:200]}
    if isinstance(value, (tuple, list, dict)) and len(value) > _MAX_ITEMS:
        return _opaque(value)
    if isinstance(value, (tuple, list)):
        return {"__seq__": [encode(v, depth + 1) for v in value], "type": type(value).__name__}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if type(value).__name__ == "TensorShape":
        return {"__seq__": [None if d is None else int(d) for d in value.as_list()] if value.rank is not None
                else [], "type": "TensorShape"}
    return _encode_array(value)


def _encode_array(value):
    """An array-like (tf.Tensor, NumPy array or scalar) as dtype, shape and bytes."""
    type_name = type(value).__name__
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001  (symbolic tensors, ragged lists, hostile __array__ ...)
        return _opaque(value)
    dtype = array.dtype.name
    if dtype not in _DTYPES or array.size > 10**8:
        return _opaque(value, array.dtype.name)
    data = array.astype(np.float32) if dtype == "bfloat16" else np.ascontiguousarray(array)
    return {"__nd__": dtype, "shape": list(array.shape), "type": type_name,
            "data": base64.b64encode(data.tobytes()).decode("ascii")}


def _opaque(value, dtype=None):
    shape = getattr(value, "shape", None)
    try:
        shape = None if shape is None or isinstance(value, type) else [None if d is None else int(d) for d in shape]
    except Exception:  # noqa: BLE001
        shape = None
    return {"__opaque__": type(value).__name__, "shape": shape, "dtype": dtype}


class NamedArray(np.ndarray):
    """A decoded array that remembers the type the reader returned (EagerTensor, ...)."""

    returned_type = "ndarray"


def decode(data, depth=0):
    """The value :func:`encode` described, built from plain data only (runs in the parent)."""
    if depth > _MAX_DEPTH + 2:
        raise ProtocolError("嵌套太深")
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if isinstance(data, list):
        raise ProtocolError("意外的列表")
    if not isinstance(data, dict):
        raise ProtocolError(f"意外的值 {type(data).__name__}")
    if "__float__" in data:
        return float(data["__float__"])
    if "__str__" in data:
        return str(data["__str__"])
    if "__seq__" in data:
        items = [decode(v, depth + 1) for v in data["__seq__"]]
        return tuple(items) if data.get("type") in ("tuple", "TensorShape") else items
    if "__dict__" in data:
        out = {}
        for key, value in data["__dict__"]:
            key = decode(key, depth + 1)
            out[key if isinstance(key, (str, int, float, bool, type(None))) else repr(key)] = decode(value, depth + 1)
        return out
    if "__nd__" in data:
        return _decode_array(data)
    if "__opaque__" in data:
        shape = None if data.get("shape") is None else tuple(data["shape"])
        return Opaque(str(data["__opaque__"]), shape, data.get("dtype"))
    raise ProtocolError("未知的值")


def _decode_array(data):
    dtype = data["__nd__"]
    if dtype not in _DTYPES:
        raise ProtocolError(f"不认识的 dtype {dtype!r}")
    shape = tuple(int(d) for d in data["shape"])
    raw = base64.b64decode(data["data"])
    wire = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    array = np.frombuffer(raw, dtype=wire)
    if array.size != math.prod(shape):
        raise ProtocolError("数组的大小与形状不符")
    array = array.reshape(shape)
    if dtype == "bfloat16":
        import ml_dtypes  # TensorFlow's own dependency

        array = array.astype(ml_dtypes.bfloat16)
    named = np.array(array).view(NamedArray)
    named.returned_type = str(data.get("type", "ndarray"))
    return named
