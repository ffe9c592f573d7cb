"""Watch, inside the child process, for the reader's code reaching the reference code.

Two watches, both set before the reader's code is loaded and neither one a hook that
the reader's code can switch off:

- **Tripwires.** Each forbidden function gets a new body, in place (its ``__code__``),
  that reports the call and then runs the original. Every alias of the function is
  the same object, so ``from attnbook import scaled_dot_product_attention as f`` is
  caught, from any thread, with or without a profiler.
- **An audit hook** (:func:`sys.addaudithook`, which cannot be removed) reports an
  import of the solutions module, or an ``open`` of its file.
"""

import os
import sys
import types

_EXERCISES = __package__.rpartition(".")[0]  # attnbook.exercises
SOLUTIONS = f"{_EXERCISES}.solutions"
_SOLUTIONS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "solutions.py")
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def install(forbidden, report):
    """Lay a tripwire on each ``(public name, function)`` pair; ``report(name)`` on a call."""
    for name, fn in forbidden:
        fn = getattr(fn, "python_function", fn)  # a tf.function: its Python body
        if isinstance(fn, types.FunctionType) and not fn.__code__.co_freevars:
            _lay(fn, name, report)


def _lay(fn, name, report):
    original = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    original.__kwdefaults__ = fn.__kwdefaults__
    key = f"_attnbook_tripwire_{id(fn)}"
    fn.__globals__[key] = (report, name, original)
    params, forward = _parameters(fn.__code__)
    source = (f"def {fn.__name__}({params}):\n"
              f"    _attnbook_report, _attnbook_name, _attnbook_original = {key}\n"
              f"    _attnbook_report(_attnbook_name)\n"
              f"    return _attnbook_original({forward})\n")
    namespace = {}
    exec(compile(source, fn.__code__.co_filename, "exec"), namespace)  # noqa: S102  (our own text)
    fn.__code__ = namespace[fn.__name__].__code__  # defaults stay on fn: same signature


def _parameters(code):
    """``(parameter list, call arguments)`` that forward every parameter of ``code``."""
    names = code.co_varnames
    n_pos, n_posonly, n_kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    positional, kwonly = list(names[:n_pos]), list(names[n_pos:n_pos + n_kwonly])
    rest = n_pos + n_kwonly
    varargs = names[rest] if code.co_flags & _CO_VARARGS else None
    varkw = names[rest + (varargs is not None)] if code.co_flags & _CO_VARKEYWORDS else None
    params = positional[:n_posonly] + (["/"] if n_posonly else []) + positional[n_posonly:]
    forward = list(positional)
    if varargs:
        params.append(f"*{varargs}")
        forward.append(f"*{varargs}")
    elif kwonly:
        params.append("*")
    params += kwonly
    forward += [f"{k}={k}" for k in kwonly]
    if varkw:
        params.append(f"**{varkw}")
        forward.append(f"**{varkw}")
    return ", ".join(params), ", ".join(forward)


def watch_solutions(report):
    """Report an import of the solutions module, or an open of its file, for good.

    A module already in ``sys.modules`` is imported again without any audit event, so
    it is dropped first: every way back to it then opens its source or its bytecode
    (``importlib.import_module`` raises no ``import`` event, only the ``open``)."""
    sys.modules.pop(SOLUTIONS, None)
    package = sys.modules.get(_EXERCISES)
    if package is not None and hasattr(package, "solutions"):
        delattr(package, "solutions")
    here = os.path.dirname(os.path.realpath(_SOLUTIONS_FILE))
    folders = {here, os.path.join(here, "__pycache__")}

    def is_solutions_file(path):
        name = os.path.basename(path)
        return ((name == "solutions.py" or (name.startswith("solutions.") and name.endswith(".pyc")))
                and os.path.dirname(os.path.realpath(path)) in folders)

    def hook(event, args):
        if event == "import" and args and isinstance(args[0], str):
            if args[0] == SOLUTIONS or args[0].startswith(SOLUTIONS + "."):
                report(SOLUTIONS)
        elif event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            if is_solutions_file(os.fsdecode(args[0])):
                report(SOLUTIONS)

    sys.addaudithook(hook)
