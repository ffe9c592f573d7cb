"""Which checker checks which exercise.

The catalog names the module that checks an exercise; that module's ``CHECKERS`` maps
the answer's name (``"split_heads"``) to its :class:`~._core.Checker`.
"""

import importlib

from .catalog import EXERCISES


def _checker(exercise):
    module = importlib.import_module(f"{__package__}.{exercise.checker}")
    return module.CHECKERS[exercise.answer_name]


CHECKERS = {exercise.id: _checker(exercise) for exercise in EXERCISES.values()}
