"""Explications the tests share: plain data, no Django."""

from nsmcore.schema import Explication

# The paper's worked example, "I got the management position": routes to pride (rule 7).
PRIDE = Explication(
    trigger="someone-did-something",
    agency="i",
    want="want",
    realization="happened",
    evaluation="feel-good",
    eval_target="self",
)
PRED: dict[str, str] = PRIDE.slots()  # the twelve slots only, as a parser or a form sends them
