"""Number figures from ``fignum_start`` instead of 1.

Section 4.5 is one section of a longer book whose figures are numbered across the
book; its first figure is 图 20. Sphinx always counts from 1, so after it assigns the
numbers this shifts the last component of each figure number.
"""


def _shift_figure_numbers(app, env):
    shift = app.config.fignum_start - 1
    for fignumbers in env.toc_fignumbers.values():
        for figure_id, number in fignumbers.get("figure", {}).items():
            fignumbers["figure"][figure_id] = number[:-1] + (number[-1] + shift,)
    return []


def setup(app):
    app.add_config_value("fignum_start", 1, "env", types=[int])
    # Sphinx assigns figure numbers in its own env-get-updated handler (priority 500).
    app.connect("env-get-updated", _shift_figure_numbers, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
