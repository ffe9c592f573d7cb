"""Every check can reach each of its verdicts, moved only by values a build measures.

The scenarios start from the values this build recorded and change a few measured values
to what a build on another machine, with another seed or with a bug in the code, could
record. Each one must send its check down the named branch (``holds``, ``partly`` or
``fails``), and the row must then show the verdict that branch gives once an
``unmeasured:`` or ``qualified:`` part caps it. A scenario never changes a value in
:data:`FIXED`: values no build can change (lengths the pages choose, the machine's
description, IEEE identities) back the rows but decide none of them.

The listing at the end prints, for every value more than one row reads, the phrases
each row puts beside it; :data:`SHARED_READINGS` is that list as reviewed.
"""

import math
import string

import pytest

from book._ext.resolving import claims as claims_ext
from book._ext.shared import claim_checks
from buildfiles import EXECUTED, ROOT

CLAIMS = claim_checks.load_claims(ROOT / "book" / "claims.yml")
CHECKED = {claim["id"]: claim for claim in CLAIMS if "check" in claim}

#: Values the pages choose or no build can change. A scenario may not touch them.
FIXED = {
    "timing_lengths", "timing_segments", "variant_lengths", "variant_segments", "memory_lengths",
    "memory_segments", "serial_lengths", "score_counted_lengths", "scaling_d_k", "scaling_uniform_weight",
    "scaling_n_keys", "scaling_n_queries", "scaling_heads",
    "walkthrough_positions", "reach_positions", "reach_near", "reach_far", "stack_steps", "stack_tail_steps",
    "build_cpu_count", "build_machine", "score_pairs_n1000",
    "minus_infinity_row_is_nan",   # softmax of a row of -inf is NaN by IEEE 754 on every build
}

#: GRU times a build could record at the four timing lengths: forward, then training step.
SHORT_GRU = {"forward_ms_gru": [5.9, 11.3, 20.4, 46.3], "train_ms_gru": [15.9, 30.5, 62.8, 126.5]}

SCALING_FLAT = [0.3, 0.53, 0.66, 0.71, 0.81, 0.87, 0.91, 0.7]

#: ``{claim id: {branch: {value: what a build could record}}}``; ``{}`` is this build's values.
SCENARIOS = {
    # partly: a layer with a distance penalty (ALiBi, slope 0.01) keeps the reach ratio above
    # one half, but its shuffled output is no longer the output shuffled
    "direct-path": {"holds": {}, "partly": {"order_gap_plain": 0.3, "reach_ratio_attention_median": 0.66},
                    "fails": {"score_graph_matmul_ops": 8}},
    "scaling-prevents-saturation": {
        "holds": {"scaling_grad_median_unscaled": [0.25, 0.2, 0.1, 0.05, 0.02, 0.01, 0.004, 0.0007]},
        "partly": {"scaling_grad_median_unscaled": [0.25, 0.25, 0.22, 0.2, 0.15, 0.12, 0.09, 0.06]},
        "fails": {"scaling_max_weight_unscaled": SCALING_FLAT}},
    "walkthrough-shapes": {"holds": {}, "fails": {"walkthrough_qkv_shapes": [[2, 8, 8], [2, 8, 8], [2, 8, 4]]}},
    "weights-sum-to-one": {"holds": {}, "fails": {"walkthrough_row_sum_max_deviation": 3e-3}},
    "one-matmul": {"holds": {}, "fails": {"score_graph_matmul_ops": 8}},
    "rnn-serial-calls": {"holds": {}, "fails": {"walkthrough_rnn_cell_calls": 1}},
    "layer-output-shape": {"holds": {}, "fails": {"minimal_layer_output_shape": [2, 10, 8]}},
    "stackable": {"holds": {}, "partly": {"stack_loss_tail": 0.05, "stack_first_layer_change": 0.01},
                  "fails": {"stack_output_shape": [16, 10, 8]}},
    "split-heads": {"holds": {}, "fails": {"split_heads_keeps_columns": False}},
    "scale-by-depth": {"holds": {}, "fails": {"scale_max_diff_depth": 0.84, "scale_max_diff_d_model": 0.0}},
    "full-dim-saturates": {"holds": {"scaling_max_weight_d_model": [0.9] * 8},
                           "partly": {"scaling_max_weight_d_model": [0.06, 0.06, 0.06, 0.06, 0.3, 0.5, 0.6, 0.7]},
                           "fails": {"scaling_max_weight_d_model": [0.06] * 8}},
    "same-math": {"holds": {"same_math_self_diff": 2.4e-7}, "fails": {"same_math_cross_diff": 0.3}},
    "five-sixty-six": {"holds": {}, "fails": {"cross_listing_key_depth": 64}},
    "cross-output-shape": {"holds": {}, "fails": {"cross_listing_output_shape": [2, 6, 8]}},
    "alignment-table": {"holds": {}, "fails": {"cross_table_shape": [2, 20, 6]}},
    "one-parallel-matmul": {"holds": {}, "fails": {"serial_score_matmul_ops": [1, 1, 1, 2]}},
    "training-throughput": {"holds": {"train_throughput_attention": [80000.0, 160000.0, 320000.0, 640000.0]},
                            "partly": {"train_throughput_attention": [80000.0, 100000.0, 120000.0, 160000.0]},
                            "fails": {"train_throughput_attention": [80000.0, 170000.0, 120000.0, 70000.0]}},
    "million-pairs": {"holds": {}, "fails": {"score_counted_pairs": [31375, 125250, 500500, 2001000]}},
    "quadratic-growth": {"holds": {"variant_memory_segments_full": [1.92, 1.96]},
                         "partly": {"variant_memory_segments_full": [1.2, 1.9]},
                         "fails": {"variant_memory_segments_full": [1.92, 1.96],
                                   "score_counted_pairs": [62500, 125000, 250000, 500000]}},
    "short-sequences": {"holds": {**SHORT_GRU, "forward_ms_attention": [2.0, 2.0, 3.5, 8.7],
                                  "train_ms_attention": [3.5, 5.6, 10.9, 27.2],
                                  # the CPU results file's other configuration, twice as fast everywhere too
                                  "bench_forward_speedup": [[2.6, 3.0, 3.8, 2.1]],
                                  "bench_train_speedup": [[2.6, 3.6, 3.1, 2.2]]},
                        "partly": {**SHORT_GRU, "forward_ms_attention": [2.0, 2.0, 3.5, 99.0],
                                   "train_ms_attention": [3.5, 5.6, 10.9, 27.2]},
                        "fails": {**SHORT_GRU, "forward_ms_attention": [999.0] * 4,
                                  "train_ms_attention": [999.0] * 4}},
    "linear-variants": {"holds": {"variant_memory_segments_window": [0.89, 0.87],
                                  "variant_memory_segments_linear": [0.22, 1.13]},
                        "partly": {"variant_memory_segments_window": [1.9, 1.9],
                                   "variant_memory_segments_linear": [0.22, 1.13]},
                        "fails": {"variant_memory_segments_window": [1.9, 1.9],
                                  "variant_memory_segments_linear": [1.5, 1.4]}},
    "rnn-low-memory": {"holds": {"memory_mib_gru": [3.4, 4.9, 7.1], "memory_mib_attention": [18.9, 69.3, 269.8],
                                 "memory_segment_slopes_gru": [0.53, 0.47],
                                 "memory_segment_slopes_attention": [1.87, 1.95]},
                       "partly": {"memory_mib_gru": [3.4, 4.9, 7.1], "memory_mib_attention": [19.2, 40.0, 150.0],
                                  "memory_segment_slopes_gru": [0.53, 0.47],
                                  "memory_segment_slopes_attention": [1.06, 1.91]},
                       "fails": {"memory_mib_gru": [25.0, 80.0, 300.0], "memory_mib_attention": [18.9, 69.3, 269.8],
                                 "memory_segment_slopes_gru": [1.68, 1.91],
                                 "memory_segment_slopes_attention": [1.87, 1.95]}},
    "padding-steals-weight": {"holds": {}, "fails": {"pad_weight_unmasked": 0.001}},
    "mask-to-minus-infinity": {"holds": {}, "fails": {"minus_inf_renormalized_diff": 0.44}},
    "learned-routing": {"holds": {}, "partly": {"reversal_token_accuracy": 0.7},
                        "fails": {"reversal_antidiagonal_share": 0.3}},
}


def recorded():
    values = {}
    for path in sorted(EXECUTED.rglob("*.glue.json")):
        values |= claims_ext.read_glue_values(path)
    return values


def branches(claim):
    return ["holds", "partly", "fails"] if "partly" in claim["check"] else ["holds", "fails"]


def uncapped(claim):
    check = {k: v for k, v in claim["check"].items() if k not in ("unmeasured", "qualified")}
    if "files" in check:
        check["files"] = {k: v for k, v in check["files"].items() if k != "required"}
    return dict(claim, check=check)


def capped(claim, branch):
    """The verdict a branch shows once an unmeasured or qualified part caps it, or, for a
    row only a results file of parallel hardware may decide, when no such file is there."""
    if claim["check"].get("files", {}).get("required"):
        return "literature"   # the book's results files are from CPUs (tests/test_claims.py adds a GPU one)
    cap = claim["check"].get("unmeasured") or claim["check"].get("qualified")
    return "partly" if cap and branch == "holds" else branch


def like(value, baseline, signed=False):
    """Whether ``value`` is a value of the same kind a build records as ``baseline``: the
    same type and length, finite, and not negative unless ``signed`` (a slope)."""
    if isinstance(baseline, list):
        return (isinstance(value, list) and len(value) == len(baseline)
                and all(like(v, b, signed) for v, b in zip(value, baseline)))
    if isinstance(baseline, bool) or isinstance(baseline, str):
        return type(value) is type(baseline)
    return isinstance(value, (int, float)) and math.isfinite(value) and (signed or value >= 0)


def test_every_checked_claim_has_a_scenario_for_each_of_its_branches():
    assert set(SCENARIOS) == set(CHECKED)
    for claim_id, claim in CHECKED.items():
        assert sorted(SCENARIOS[claim_id]) == sorted(branches(claim)), claim_id


def read_by(check):
    """The recorded values a check's ``holds`` and ``partly`` read, through its ``let``s."""
    lets = check.get("let") or {}

    def names(expression):
        found = set()
        for name in claim_checks.parse_expression(expression)[1]:
            found |= names(lets[name]) if name in lets else {name}
        return found

    return names(check["holds"]) | (names(check["partly"]) if "partly" in check else set())


#: Parts of a name that mark a timing or a memory measurement; these differ from machine to machine.
MACHINE_DEPENDENT = ("_ms_", "time", "throughput", "memory", "mib", "speedup")


def test_each_scenario_sets_every_timing_and_memory_value_its_check_reads():
    """Otherwise a scenario's branch would rest on what this build's machine measured,
    and another machine could send it down another branch (a CI run did, for
    short-sequences). Values read from the committed results files (``bench_*``) are
    the same on every machine."""
    for claim_id, scenarios in SCENARIOS.items():
        read = {name for name in read_by(CHECKED[claim_id]["check"])
                if any(part in name for part in MACHINE_DEPENDENT) and not name.startswith("bench_")}
        for branch, change in scenarios.items():
            assert read <= set(change), (claim_id, branch, sorted(read - set(change)))


@pytest.mark.book
@pytest.mark.parametrize("claim_id, branch", [(c, b) for c, s in SCENARIOS.items() for b in s])
def test_the_check_reaches_its_verdict_on_values_a_build_could_record(claim_id, branch):
    claim, baseline = CHECKED[claim_id], recorded()
    change = SCENARIOS[claim_id][branch]
    assert not set(change) & FIXED, f"{claim_id}: a scenario may not change {set(change) & FIXED}"
    for name, value in change.items():
        signed = "slopes" in name or "segments" in name
        assert name in baseline and like(value, baseline[name], signed), (name, value, baseline.get(name))
    values = baseline | change
    assert claim_checks.evaluate(uncapped(claim), values).kind == branch
    verdict = claim_checks.evaluate(claim, values)
    assert verdict.kind == capped(claim, branch)
    print(f"{claim_id} [{branch}] -> {verdict.label}: {verdict.reason[:120]}")


@pytest.mark.book
def test_the_fixed_values_are_ones_this_build_recorded():
    assert FIXED <= set(recorded())


# --- one value, one reading --------------------------------------------------------------


def placements(template):
    """``[(name, spec, phrase)]`` for each ``{name:spec}`` of a template; ``phrase`` is the
    text from the last stop before the field to the next stop after it."""
    found, text = [], ""
    parts = list(string.Formatter().parse(str(template)))
    for i, (literal, name, spec, _) in enumerate(parts):
        text += literal
        if name is None:
            continue
        before = text[max(text.rfind(mark) for mark in "，；。：（") + 1:]
        after = parts[i + 1][0] if i + 1 < len(parts) else ""
        after = after[:min([after.find(m) for m in "，；。）" if m in after] or [len(after)])]
        found.append((name, spec or "", f"{before}{{{name}}}{after}".strip()))
        text += "{" + name + "}"
    return found


def readings():
    """``{value name: [(claim id, spec, phrase)]}`` over every row's values and reasons."""
    found = {}
    for claim_id, claim in CHECKED.items():
        check = claim["check"]
        lets = set(check.get("let") or {})
        templates = [check.get("values", "")] + list(check["reason"].values())
        for template in templates:
            for name, spec, phrase in placements(template):
                if name not in lets:
                    found.setdefault(name, []).append((claim_id, spec, phrase))
        for expression in [check["holds"], check.get("partly", "")] + list((check.get("let") or {}).values()):
            for name in claim_checks.parse_expression(expression)[1] if expression else []:
                if name not in lets | {"judged"} and not any(c == claim_id for c, _, _ in found.get(name, [])):
                    found.setdefault(name, []).append((claim_id, "", "(read by the check, not shown)"))
    return found


#: Each value more than one row reads, and the one reading the rows share (reviewed).
SHARED_READINGS = {
    "build_machine": "the build machine in words (CPU model, cores, TensorFlow), where a measured row names it",
    "scaling_n_keys": "the keys per row of the scaling measurement, named as its configuration",
    "bench_file": "the results file a row is judged on, named in its reason",
    "bench_device": "that file's device, named beside its numbers",
    "bench_timing_lengths": "the lengths that file timed at, used when a row is judged on it",
    "timing_lengths": "the lengths GRU and attention are timed at",
    "score_graph_matmul_ops": "matmul ops in the compiled scoring graph: one op scores every pair",
    "walkthrough_score_count": "scores the one matmul computes in the walkthrough (2 samples × 8²)",
    "walkthrough_positions": "positions of the walkthrough's sequence (8)",
    "scaling_d_k": "the key depths of the saturation sweep",
    "scaling_max_weight_head_depth": "largest weight when dividing by √d_k: the correct scaling",
    "scaling_grad_norm_head_depth": "gradient norm at the softmax input when dividing by √d_k",
    "variant_lengths": "the lengths the variants are measured at",
    "variant_segments": "the segments between adjacent lengths",
    "variant_time_segments_full": "full attention's forward time slope per segment, compared, never called quadratic",
    "variant_memory_segments_full": "full attention's peak-memory slope per segment, read as quadratic at ≥ 1.7",
    "score_counted_lengths": "the lengths attention is run at to count its scores",
    "score_counted_pairs": "the scores those runs computed, counted from the weights tensor",
}


def test_each_value_read_by_several_rows_is_read_one_way():
    shared = {name: rows for name, rows in readings().items() if len({c for c, _, _ in rows}) > 1}
    for name, rows in sorted(shared.items()):
        print(f"\n{name}  ({SHARED_READINGS.get(name, 'NOT REVIEWED')})")
        for claim_id, spec, phrase in rows:
            print(f"  {claim_id:<28} {spec:<5} {phrase}")
    assert set(shared) == set(SHARED_READINGS), "review the listing above and update SHARED_READINGS"
    for name, rows in shared.items():
        specs = {spec for _, spec, _ in rows if spec}
        assert len(specs) <= 1, f"{name} is written with formats {specs}"


def reads(check, expression, seen=None):
    """The recorded values an expression reads, through the ``let:`` names it uses."""
    lets, seen = check.get("let") or {}, set() if seen is None else seen
    names = set()
    for name in claim_checks.parse_expression(expression)[1]:
        if name in lets and name not in seen:
            seen.add(name)
            names |= reads(check, lets[name], seen)
        elif name not in lets:
            names.add(name)
    return names


def shown(check):
    """The recorded values a row shows: in its values or reasons, directly or through a let."""
    lets, names = check.get("let") or {}, set()
    for template in [check.get("values", "")] + list(check["reason"].values()):
        for name in claim_checks.template_names(template):
            names |= reads(check, lets[name]) if name in lets else {name}
    return names


@pytest.mark.parametrize("claim_id", sorted(CHECKED))
def test_every_measured_value_that_decides_a_row_is_shown_on_it(claim_id):
    check = CHECKED[claim_id]["check"]
    deciding = set().union(*(reads(check, check[k]) for k in ("holds", "partly") if k in check))
    assert deciding - FIXED <= shown(check), f"not shown: {sorted(deciding - FIXED - shown(check))}"
