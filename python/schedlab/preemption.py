"""The preemption models of the simulated kernel (``machine.kernel.preempt``, docs/spec.md
"The kernel") and the text that says, from measured maxima, whether they fall in the order
the models' rules imply: the more a model defers a reschedule, the longer the worst wake-up.

Every report part that runs a workload under each model words its order with
:func:`order_text`, so the rule for "strictly in order", "tie" and "reversed" is written
once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The models, most to least deferring (Linux's PREEMPT_NONE … PREEMPT_RT).
PREEMPT_MODELS: tuple[str, ...] = ("none", "voluntary", "full", "rt")
#: The kernel configuration each model stands for.
PREEMPT_LABEL = {"none": "PREEMPT_NONE", "voluntary": "PREEMPT_VOLUNTARY",
                 "full": "PREEMPT", "rt": "PREEMPT_RT"}

#: How the rows of a comparison are called: (one, several).
Noun = tuple[str, str]
POLICIES: Noun = ("policy", "policies")


def order_text(maxima: Mapping[str, Mapping[str, float | None]],
               models: Sequence[str] = PREEMPT_MODELS, noun: Noun = POLICIES) -> str:
    """Whether, per row (a policy, or whatever ``noun`` names), the maxima (µs) fall
    strictly in the order of ``models`` (largest first), where they tie and where they are
    reversed; how many rows show the strict order; and where every row has the same value
    (then no count of rows agreeing says anything)."""
    # The report's formatting, imported here: the CLI reads the model list at start-up.
    from schedlab.report import fmt

    order = " > ".join(models)
    parts: list[str] = []
    strict = complete = 0
    for row, by_model in maxima.items():
        values = [by_model.get(m) for m in models]
        if any(v is None for v in values):
            missing = [m for m, v in zip(models, values, strict=True) if v is None]
            parts.append(f"{row}: no maximum under {', '.join(missing)}.")
            continue
        complete += 1
        chain = [f"{models[0]} {fmt(values[0], 'us')}"]
        ties, reversed_ = [], []
        for (a, va), (b, vb) in zip(zip(models, values, strict=True),
                                    zip(models[1:], values[1:], strict=True), strict=False):
            rel = ">" if va > vb else "=" if va == vb else "<"  # type: ignore[operator]
            chain.append(f"{rel} {b} {fmt(vb, 'us')}")
            if rel == "=":
                ties.append(f"{a} and {b} equal")
            elif rel == "<":
                reversed_.append(f"{b} above {a}")
        if not ties and not reversed_:
            strict += 1
            verdict = "strictly in order"
        else:
            verdict = "not strictly in order: " + ", ".join(ties + reversed_)
        parts.append(f"{row}: {' '.join(chain)} µs — {verdict}.")
    if complete:
        parts.append(f"The strict order {order} holds for {strict} of {complete} {noun[1]}.")
    parts += _same_across_rows(maxima, models, noun)
    return " ".join(parts)


def _same_across_rows(maxima: Mapping[str, Mapping[str, float | None]],
                      models: Sequence[str], noun: Noun) -> list[str]:
    """Sentences for the models under which every row has the same maximum."""
    from schedlab.report import fmt

    if len(maxima) < 2:
        return []
    same: list[str] = []
    for m in models:
        vals = [by.get(m) for by in maxima.values()]
        if all(v is not None for v in vals) and len(set(vals)) == 1:
            same.append(f"{m} ({fmt(vals[0], 'us')} µs)")
    if not same:
        return []
    one, several = noun
    if len(same) == len(models):
        return [f"Every {one} has the same maximum under every model, so the {several} "
                f"cannot be told apart here: whatever order holds for one holds for all "
                "alike, and the count above is one fact repeated, not agreement."]
    return [f"Every {one} has the same maximum under " + ", ".join(same)
            + f": there the {several} cannot be told apart."]
