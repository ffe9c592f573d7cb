"""Run the reader's code safely: in a daemon thread, with a time limit, and watching for
calls of the reference implementation that the exercise asks the reader to write.

The watch is a profile hook (``sys.setprofile``) installed in that thread only: it sees
every Python function call and compares its code object with the forbidden ones, so an
alias such as ``from attnbook import scaled_dot_product_attention as f`` is caught too.

Keras keeps its dtype policy per thread, so the thread is given the reader's policy
(``mixed_bfloat16``, say): their layer is built there as it would be in their notebook.
"""

import ctypes
import dataclasses
import sys
import threading

import keras

from . import _messages as say
from ._core import CaseResult, Fail


class Timeout(Exception):
    """The reader's code did not return within the time limit."""


class ReferenceCalled(Exception):
    """The reader's code called a forbidden reference function (its public name)."""


@dataclasses.dataclass(frozen=True)
class Guard:
    """What every case of one check runs under.

    forbidden: dict code object -> public name. policy: the reader's Keras dtype policy.
    """

    forbidden: dict
    time_limit: float
    policy: object
    noun: str = "函数"

    def call(self, fn):
        """Return ``fn()``, computed in a daemon thread.

        Raises :class:`Timeout` (without waiting for the thread: it is a daemon, and it
        is told to stop), :class:`ReferenceCalled`, or whatever ``fn`` raised.
        """
        box, hits = {}, []

        def hook(frame, event, arg):
            if event == "call" and frame.f_code in self.forbidden:
                hits.append(self.forbidden[frame.f_code])

        def target():
            keras.config.set_dtype_policy(self.policy)
            if self.forbidden:
                sys.setprofile(hook)  # this thread only
            try:
                box["value"] = fn()
            except BaseException as err:  # noqa: BLE001  (reported to the reader)
                box["error"] = err
            finally:
                sys.setprofile(None)

        thread = threading.Thread(target=target, name="attnbook-exercise", daemon=True)
        thread.start()
        thread.join(self.time_limit)
        if thread.is_alive():
            _abandon(thread)
            raise Timeout()
        if hits:
            raise ReferenceCalled(hits[0])
        if "error" in box:
            raise box["error"]
        return box["value"]

    def run_case(self, case, answer):
        """Run one case; return ``(CaseResult, fatal)``. Fatal stops the exercise."""
        try:
            result = self.call(lambda: case.run(answer))
        except Timeout:
            return CaseResult(case.name, False, say.timeout(self.time_limit)), True
        except ReferenceCalled as err:
            return CaseResult(case.name, False, say.reference_called(self.noun, err.args[0])), True
        except Fail as err:
            return CaseResult(case.name, False, str(err)), False
        except NotImplementedError as err:  # a stub such as the starter notebook's
            return CaseResult(case.name, False, say.unfinished(self.noun, err), unfinished=True), True
        except BaseException as err:  # noqa: BLE001  (the reader's bug, even SystemExit)
            return CaseResult(case.name, False, say.describe_error(err, self.noun)), False
        try:
            return CaseResult(case.name, True, case.judge(result) or ""), False
        except Fail as err:
            return CaseResult(case.name, False, str(err)), False
        except Exception as err:  # noqa: BLE001  (a return value the judge cannot read)
            return CaseResult(case.name, False, say.unreadable_result(err)), False


class _Abandoned(BaseException):
    """Raised inside a timed-out thread so that a runaway loop stops using the CPU."""


def _abandon(thread):
    """Ask ``thread`` to stop by raising :class:`_Abandoned` in it; do not wait for it.

    The exception arrives at the thread's next Python bytecode, so a loop in Python
    stops soon; a single long call into C (one huge matmul) runs to its end first.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Abandoned))
