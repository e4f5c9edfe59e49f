import nsmcore.regression as regression
from nsmcore.mapper import Routing, load_rule_set, parse_rule_set
from nsmcore.regression import canonical_explications, run_suite


def test_rule_set_v1_passes_the_suite_with_causal_consistency_one():
    report = run_suite(load_rule_set("1"))
    assert report.ok, report.as_dict()
    assert report.causal_consistency_rate == 1.0
    sections = {s.name: s for s in report.sections}
    assert sections["canonical self-checks"].checked == 13 + 3
    # every single-slot edit of 13 prototypes: sum over slots of (|V_s| - 1) = 30 each
    assert sections["slot-flip consistency"].checked == 13 * 30


def test_there_is_one_canonical_prototype_per_emotion():
    assert list(canonical_explications()) == list(load_rule_set().emotions)


def test_swapping_guilt_and_shame_fails_the_canonical_checks():
    doc = load_rule_set().canonical()
    doc["rules"][5], doc["rules"][6] = doc["rules"][6], doc["rules"][5]
    report = run_suite(parse_rule_set(doc))
    assert not report.ok
    [canonical] = [s for s in report.sections if s.name == "canonical self-checks"]
    assert any("shame prototype routes to guilt" in f for f in canonical.failures)
    assert any("guilt to shame" in f for f in canonical.failures)


def test_a_mapper_that_reads_beyond_the_explication_breaks_slot_flip_consistency(monkeypatch):
    honest = regression.route

    def leaky(obj, rule_set=None):
        r = honest(obj, rule_set)
        if getattr(obj, "intensity", None) == "very":  # a label that depends on something else
            return Routing("joy", 11, r.fired, None, r.rule_set_version)
        return r

    monkeypatch.setattr(regression, "route", leaky)
    report = run_suite()
    assert not report.ok
    assert report.causal_consistency_rate < 1.0
