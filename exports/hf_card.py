"""The dataset card of a Hugging Face datasets folder (exports.hf): YAML front matter that the Hub
and ``datasets`` read (licence, language, task, configs with their files, features), and a body
with the figures a reader checks the corpus by: per-slot Krippendorff's alpha with its bootstrap
interval, the gold's evaluation against the reference labels, anchoring to the prefill, the
convention changelog, the rule set's version and hash, the renderer's version.

The figures are computed when the folder is written, by the same code as the pages and the API
(``round_analysis``, ``pass_evaluation``, ``anchoring``), over the rounds the gold comes from. The
card is in English, like the archive's own card: it is part of the data, not of the interface."""

from __future__ import annotations

import json
from typing import Any

import yaml

from adjudication.agreement.analysis import anchoring, round_analysis
from adjudication.evaluation.figures import GOLD, EvaluationRequestError, headline_rows, pass_evaluation
from adjudication.models import Convention, GoldItem
from annotator.models import Round
from nsmcore.schema import SLOT_NAMES

DIGITS = 4


def number(value: float | None, digits: int = DIGITS) -> str:
    """A figure as the card prints it (and the tests read it back)."""
    return "-" if value is None else f"{value:.{digits}f}"


def interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{number(low)}, {number(high)}]"


# Figures (read from the database) ---------------------------------------------------------------


def _agreement(round_: Round) -> dict[str, Any] | None:
    analysis = round_analysis(round_)
    if analysis.data.coders < 2:
        return None
    report = analysis.report
    return {
        "round": round_.name, "coders": report.coders, "items": report.items, "bootstrap": report.bootstrap,
        "seed": report.seed, "mean_alpha": report.mean_alpha,
        "slots": [
            {"slot": s.slot, "alpha": s.alpha, "ci_low": s.ci_low, "ci_high": s.ci_high, "raw": s.raw,
             "items": s.items, "undefined": s.undefined}
            for s in report.slots
        ],
    }  # fmt: skip


def _evaluation(round_: Round) -> dict[str, Any] | None:
    if not GoldItem.objects.filter(round=round_, status=GoldItem.Status.RESOLVED).exists():
        return None
    try:
        evaluation = pass_evaluation(round_, GOLD)
    except EvaluationRequestError as error:
        return {"round": round_.name, "problem": str(error), "rows": []}
    report = evaluation.report
    if report is None:
        return None
    rows = [
        {"figure": name, "k": p.k, "n": p.n, "value": p.value, "low": p.low, "high": p.high}
        for name, p in headline_rows(report)
    ]
    return {"round": round_.name, "item_set": evaluation.item_set, "tier": report.evidence.tier, "rows": rows}


def _anchoring(round_: Round) -> dict[str, Any] | None:
    rows = anchoring(round_)
    if not rows:
        return None
    return {
        "round": round_.name,
        "parser": round_.prefill_parser,
        "rows": [
            {"annotator": r.annotator, "annotations": r.annotations, "overall": r.overall, "kept": r.kept}
            for r in rows
        ],
    }


def _changelog(rounds: list[Round]) -> list[dict[str, Any]]:
    conventions = (
        Convention.objects.filter(round__in=rounds).select_related("round").order_by("number", "version")
    )
    return [
        {
            "label": c.label, "slot": c.slot, "value_a": c.value_a, "value_b": c.value_b, "chosen": c.chosen,
            "status": c.status, "round": c.round.name, "rule": c.rule,
            "decided_at": c.decided_at.date().isoformat() if c.decided_at else None,
            "applied_at": c.applied_at.date().isoformat() if c.applied_at else None,
        }
        for c in conventions
    ]  # fmt: skip


def card_figures(rounds: list[Round]) -> dict[str, Any]:
    """The card's figures for the rounds the gold comes from (plain data)."""
    return {
        "agreement": [a for a in map(_agreement, rounds) if a],
        "evaluation": [e for e in map(_evaluation, rounds) if e],
        "anchoring": [a for a in map(_anchoring, rounds) if a],
        "changelog": _changelog(rounds),
    }


# The card ---------------------------------------------------------------------------------------


def _size_category(rows: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return name
    return "1M<n<10M"


def front_matter(
    *, manifest: dict[str, Any], configs: dict[str, dict], features: dict[str, list], license: str
) -> dict[str, Any]:
    """The card's YAML: what ``datasets.load_dataset`` and the Hub read."""
    gold_rows = sum(split["rows"] for split in configs.get("gold", {}).values())
    return {
        "license": license,
        "language": ["en"],
        "pretty_name": f"{manifest['name']}: NSM explications of emotion events ({manifest['scope']})",
        "task_categories": ["text-classification"],
        "task_ids": ["multi-class-classification"],
        "tags": ["natural-semantic-metalanguage", "emotion", "explanation", "annotation"],
        "size_categories": [_size_category(gold_rows)],
        "configs": [
            {
                "config_name": name,
                **({"default": True} if name == "gold" else {}),
                "data_files": [{"split": split, "path": f["path"]} for split, f in splits.items()],
            }
            for name, splits in configs.items()
        ],
        "dataset_info": [
            {
                "config_name": name,
                "features": features[name],
                # datasets checks num_examples when it loads; num_bytes is the split file's size
                "splits": [
                    {"name": split, "num_bytes": f["bytes"], "num_examples": f["rows"]}
                    for split, f in splits.items()
                ],
            }
            for name, splits in configs.items()
        ],
    }


def _alpha(s: dict[str, Any]) -> str:
    return number(s["alpha"]) if s["alpha"] is not None else f"undefined ({s['undefined'] or 'no variation'})"


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]


_CONFIGS_TEXT = {
    "gold": "one row per gold item: the first explication's twelve slots (class labels), its routing "
    "(`label`, `rule`, `fired`, `abstention`), per-slot `provenance` and rendered `lines`; a second "
    "explication, when the adjudicators kept two, in `second_construal`",
    "contrast": "the minimal pairs written from the exported items (`x`, `x_prime` with the label each "
    "should route to), in the counterfactual benchmark's format",
    "raw": "every revision of every annotator's work in the rounds the gold comes from, with the prefill "
    "shown and what the active rule set routes it to",
}


def _body(
    manifest: dict[str, Any], configs: dict[str, dict], figures: dict[str, Any], archive: str
) -> list[str]:
    counts = manifest["counts"]
    lines = [
        f"# {manifest['name']}",
        "",
        "Natural Semantic Metalanguage explications of emotion event descriptions: one gold explication",
        "per item (or two), every slot with its provenance, routed to an emotion label or a typed",
        "abstention by a fixed decision list. This folder is the EmoExpl archive",
        f"`{archive}` laid out for the Hugging Face `datasets` library.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'gold = load_dataset("PATH_OR_REPO")  # the gold config; also "contrast" and "raw"',
        'label = gold["train"].features["trigger"].int2str(gold["train"][0]["trigger"])',
        "```",
        "",
        "## Configurations and splits",
        "",
        "An item in a held-out (`eval`) item set is in `test`; every other item in `train`.",
        "",
        *_table(
            ("config", "split", "rows", "file"),
            [
                (name, split, f["rows"], f"`{f['path']}`")
                for name, splits in configs.items()
                for split, f in splits.items()
            ],
        ),
        "",
        *[f"- `{name}`: {_CONFIGS_TEXT[name]}." for name in configs],
        "",
        f"Scope: {manifest['scope']}; {counts['items']} items, {counts['construals']} explications, "
        f"{counts['lines']} lines; gold as of {manifest['gold_as_of'] or 'no change recorded'}.",
        "",
        "## Agreement per slot",
        "",
        "Krippendorff's alpha (nominal) between the annotators of each round, with its 95% bootstrap",
        "interval over items, and the raw agreement (share of agreeing pairs).",
    ]
    if not figures["agreement"]:
        lines += ["", "No round with two or more annotators."]
    for a in figures["agreement"]:
        lines += [
            "",
            f"### Round {a['round']}",
            "",
            f"{a['coders']} annotators, {a['items']} items, {a['bootstrap']} bootstrap samples "
            f"(seed {a['seed']}); mean alpha {number(a['mean_alpha'])}.",
            "",
            *_table(
                ("slot", "alpha", "95% interval", "raw agreement", "items"),
                [
                    (s["slot"], _alpha(s), interval(s["ci_low"], s["ci_high"]), number(s["raw"]), s["items"])
                    for s in a["slots"]
                ],
            ),
        ]  # fmt: skip
    lines += [
        "",
        "## Gold against the reference labels",
        "",
        "The evaluation report's headline for the gold (first explication) of each round, routed by the",
        "active rule set: each figure k of n with its exact (Clopper-Pearson) 95% interval.",
    ]
    if not figures["evaluation"]:
        lines += ["", "No resolved gold to evaluate."]
    for e in figures["evaluation"]:
        lines += ["", f"### Round {e['round']}", ""]
        if e.get("problem"):
            lines.append(f"Not evaluated: {e['problem']}.")
            continue
        lines += [f"Item set {e['item_set']} (tier {e['tier']}).", ""]
        lines += _table(
            ("figure", "value", "95% interval", "k", "n"),
            [
                (r["figure"], number(r["value"]), interval(r["low"], r["high"]), r["k"], r["n"])
                for r in e["rows"]
            ],
        )
    lines += ["", "## Anchoring", "", "Share of the prefilled values each annotator kept, per slot."]
    if not figures["anchoring"]:
        lines += ["", "No prefilled round."]
    for a in figures["anchoring"]:
        lines += ["", f"### Round {a['round']} (prefilled by {a['parser'] or 'a parser'})", ""]
        lines += _table(
            ("annotator", "annotations", "overall", *SLOT_NAMES),
            [
                (
                    r["annotator"],
                    r["annotations"],
                    number(r["overall"]),
                    *(number(r["kept"].get(s)) for s in SLOT_NAMES),
                )
                for r in a["rows"]
            ],
        )
    lines += ["", "## Convention changelog", "", "Every version of every convention of these rounds."]
    if figures["changelog"]:
        lines += ["", *_table(
            ("convention", "slot", "conflict", "chosen", "status", "decided", "applied", "round", "rule"),
            [
                (c["label"], c["slot"], f"{c['value_a']} vs {c['value_b']}", c["chosen"], c["status"],
                 c["decided_at"] or "-", c["applied_at"] or "-", c["round"], " ".join(c["rule"].split()))
                for c in figures["changelog"]
            ],
        )]  # fmt: skip
    else:
        lines += ["", "None proposed."]
    rules, verifier = manifest["rule_set"], manifest["verifier"]
    lines += [
        "",
        "## Versions",
        "",
        f"- Rule set: version {rules['version']}, content hash `{rules['hash']}` ({rules['rules']} rules)",
        f"- Renderer: version {manifest.get('renderer_version', 'not recorded')}",
        f"- Software: nsm-explications {manifest['software_version']}; format `{manifest['format']}`",
        f"- Archive: `{archive}`; `emoexpl.jsonl` sha256 `{manifest['files']['emoexpl.jsonl']['sha256']}`",
        (
            f"- Verifier: `{verifier['model']}` at revision `{verifier['revision']}`, a line entailed when "
            f"p(entailment) >= {verifier['threshold']}"
            if verifier
            else "- Verifier: none (the lines carry no entailment judgement)"
        ),
        "",
        "## How to cite",
        "",
        "```",
        manifest["citation"],
        "```",
        "",
    ]
    return lines


def card_text(
    *, manifest: dict[str, Any], configs: dict[str, dict], features: dict[str, list], figures: dict[str, Any],
    license: str, archive: str,
) -> str:  # fmt: skip
    """README.md of the folder: YAML front matter, then the markdown body."""
    front = front_matter(manifest=manifest, configs=configs, features=features, license=license)
    # a copy without shared parts: YAML would write a repeated feature list as an alias, which the
    # datasets reader takes apart in place (the second use then lacks its names)
    front = json.loads(json.dumps(front))
    meta = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return "---\n" + meta + "---\n\n" + "\n".join(_body(manifest, configs, figures, archive))
