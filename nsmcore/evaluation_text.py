"""The evaluation report as a plain-text table: what ``python -m nsmcore evaluate`` and
``manage.py evaluate`` print (the JSON has every figure; the text the ones a reader scans)."""

from __future__ import annotations

from nsmcore.counterfactual import counterfactual_text
from nsmcore.evaluation_report import EvaluationReport, value_text
from nsmcore.schema import SLOTS

SLOT_CELLS = 10  # the largest slot-value x label cells the text lists


def report_text(report: EvaluationReport) -> str:
    """The report as a readable plain-text table (what the CLI prints)."""
    out: list[str] = []
    ev = report.evidence
    out.append(f"Evaluation [{ev.label()}; rule set hash {ev.rule_set_hash[:12]}]")
    out.append("")
    h = report.headline
    out.append("figure                        value [95% CI]  (k/n)")
    out.append(f"  accuracy                    {h.accuracy.text()}")
    out.append(f"  abstention                  {h.abstention.text()}")
    for t, p in h.abstention_by_type.items():
        out.append(f"    {t:26}{p.text()}")
    out.append(f"  selective accuracy          {h.selective_accuracy.text()}")
    out.append(f"  set-valued accuracy         {h.set_accuracy.text()}")
    out.append(f"  set-valued selective        {h.set_selective_accuracy.text()}")
    m = report.multi_rule
    out.append(f"  multi-rule                  {m.multi_rule.text()}")
    out.append(f"    resolved by priority      {m.resolved_by_priority}; abstained anyway {m.abstained}")
    for o in m.overrides[:5]:
        out.append(f"    {o.winner} ahead of {o.overruled}: {o.n} ({o.abstained} abstained anyway)")
    f = report.flag_rates
    out.append(f"  residue                     {f.residue.text()}")
    for name, p in f.flags.items():
        out.append(f"  flag {name:23}{p.text()}")
    out.append("")
    out.append("per emotion     n  routed  accuracy                        selective accuracy")
    for r in report.per_emotion.rows:
        out.append(
            f"  {r.emotion:12}{r.n:4}{r.routed:7}  {r.accuracy.text():30}  {r.selective_accuracy.text()}"
        )
    out.append("")
    c = report.confusion
    width = 6  # columns abbreviated to five letters
    out.append("confusion (row %, gold down, routed across; last column abstain)")
    out.append(" " * 14 + "".join(f"{x[: width - 1]:>{width}}" for x in c.columns))
    for label, rates in zip(c.rows, c.rates, strict=True):
        cells = "".join(f"{100 * v:>{width}.0f}" for v in rates) if rates else f"{'(no items)':>{width}}"
        out.append(f"  {label:12}{cells}")
    out.append("")
    out.append("prominent off-diagonal flows (gold -> routed, n, % of gold)")
    for fl in report.flows.flows:
        out.append(f"  {fl.gold:12} -> {fl.routed:12}{fl.n:6}  {100 * fl.share_of_gold:5.1f}")
    d = report.distributional
    out.append("")
    out.append(f"distributional scoring (decay {d.decay}, alpha {d.alpha})")
    out.append("  top-k: an abstention is a miss; top-k u.: ranked as uniform (the paper's convention)")
    out.append("  scheme            NLL    Brier  top-1  top-3  cov.   set-acc.  top-1 u.  top-3 u.")
    for s in d.scores:
        out.append(
            f"  {s.scheme:15}{s.nll:7.3f}{s.brier:8.3f}{s.top1:7.3f}{s.top3:7.3f}"
            f"{s.coverage:7.3f}{s.set_accuracy:8.3f}{s.top1_uniform:10.3f}{s.top3_uniform:10.3f}"
        )
    if report.sensitivity:
        s = report.sensitivity
        out.append("")
        out.append("priority-order sensitivity (accuracy)")
        out.append(f"  canonical order             {s.canonical.accuracy.text()}")
        for sw in s.swaps:
            out.append(f"  swap {sw.name:23}{sw.accuracy.text()}")
        if s.orders:
            out.append(
                f"  {s.orders} random orders (seed {s.seed}): min {s.random_min:.3f} / mean "
                f"{s.random_mean:.3f} / max {s.random_max:.3f}; canonical at percentile "
                f"{s.canonical_percentile:.1f}"
            )
    if report.slot_labels is not None:
        out.append("")
        out.extend(slot_label_text(report.slot_labels))
    if report.consistency:
        cc = report.consistency
        out.append("")
        out.append(
            f"causal consistency under single-slot edits: {value_text(cc.rate, 3)} "
            f"({cc.rate.k}/{cc.rate.n} edits of {cc.explications} explications; "
            f"{cc.label_changes} change the label)"
        )
    if report.counterfactual:
        out.append("")
        out.extend(counterfactual_text(report.counterfactual))
    return "\n".join(out) + "\n"


def slot_label_text(table) -> list[str]:
    """The largest cells of the slot-value x routed-label table: values other than the slot's
    default (what the explication states), routed to a label (abstentions left out)."""
    defaults = {slot.name: slot.default for slot in SLOTS}
    cells = [
        (count, row.slot, row.value, label, row.n)
        for row in table.rows
        if row.value != defaults[row.slot]
        for label, count in zip(table.columns[:-1], row.counts, strict=False)
        if count
    ]
    cells.sort(key=lambda c: (-c[0], c[1], c[2], c[3]))
    out = [
        f"stated slot values -> routed label, the {SLOT_CELLS} largest cells (of the items with the value)"
    ]
    out += [
        f"  {slot + '=' + value:36} -> {label:12}{count:6} of {n}"
        for count, slot, value, label, n in cells[:SLOT_CELLS]
    ]
    return out
