import json

import pytest

from annotator.models import ParserPrediction, Round
from nsmcore.schema import SLOTS
from tests.factories import PRED

#: per item (in id order), the parser's probability that evaluation is feel-bad: pride (the
#: prefill's label) needs feel-good, so this is the chance that the routed label changes
DOUBT = (0.0, 0.1, 0.3, 0.45)


def posteriors(doubt: float) -> dict[str, dict[str, float]]:
    out = {s.name: {v: float(v == PRED[s.name]) for v in s.values} for s in SLOTS}
    out["evaluation"] = {"feel-good": 1 - doubt, "feel-bad": doubt, "neither": 0.0}
    return out


@pytest.fixture
def clf_round(prefilled_round) -> Round:
    """The prefilled round, with parser "clf"'s predictions: the prefill's explication, and
    posteriors more and more unsure of the evaluation from the first item to the last."""
    items = list(prefilled_round.item_set.items.order_by("id"))
    for item, doubt in zip(items, DOUBT, strict=True):
        raw = json.dumps({"decoding": "joint", "label": "pride", "posteriors": posteriors(doubt)})
        ParserPrediction.objects.create(
            item=item,
            parser="clf",
            parser_version="1",
            explication=PRED,
            legal=True,
            raw_output=raw,
            text_field=prefilled_round.text_field,
        )
    return prefilled_round
