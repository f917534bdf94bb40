"""The report's validity lines for "At a glance": the positive control and the tie rule.

They sit beside the signature so a reader sees, before any rate, whether the judges found the
control's known deflections and how a split vote of two judges was decided.
"""

from __future__ import annotations

from deflectbench.analysis.summary.build import Summary


def validity_key_numbers(s: Summary) -> list[tuple[str, str]]:
    """The positive control, the tie rule, over-refusal and self-consistency, when the
    summary has them."""
    v = s.validity
    if v is None:
        return []
    out = []
    if v.control is not None:
        out.append(("positive control", v.control.line().removeprefix("control ")))
    if v.tie_rule is not None:
        out.append(("tie rule", v.tie_rule.removeprefix("tie rule: ")))
    over = v.over_refusal
    if over is not None and len(over):
        rows = over[over["framing"] == "all"].to_dict(orient="records")
        out.append(
            (
                "over-refusal (benign twins)",
                "; ".join(
                    f"{r['model']} refused {_pct(r['over_refusal'])} of {r['n_benign']} benign "
                    f"requests (manipulative: {_pct(r['refusal'])})"
                    for r in rows
                ),
            )
        )
    sc = v.self_consistency
    if sc is not None and len(sc):
        parts = [
            f"{r['judge']} agrees with itself on {_pct(r['self_agreement'])} of the fields of "
            f"{r['n']} re-judged answers (with the other judges: {_pct(r['other_agreement'])})"
            for r in sc.to_dict(orient="records")
        ]
        out.append(("judge self-consistency", "; ".join(parts)))
    return out


def _pct(x: float) -> str:
    return "–" if x != x else f"{x:.0%}"
