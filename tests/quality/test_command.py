"""``manage.py quality``: controls, settings, sweep (tests/quality/test_abandoned.py) and report."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Assignment
from quality.models import QualitySettings
from tests.quality.conftest import submit_all

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("quality", *args, stdout=out)
    return out.getvalue()


def test_controls_from_a_round_at_a_rate(target, gold_round):
    out = run("controls", "--round", "target", "--rate", "0.25", "--from-round", gold_round.name)
    assert out == "target: 4 control items added (fay 2, gus 2) (4 eligible gold items)\n"
    assert QualitySettings.objects.get(round=target).control_source == gold_round
    assert Assignment.objects.filter(round=target, control=True).count() == 4


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--round", "nowhere", "--rate", "0.1"], "no round named 'nowhere'"),
        (["--round", "target", "--rate", "0.9"], "control_rate: must be between"),
        (["--round", "target"], "control_rate: the control rate is 0"),
        (["--round", "target", "--rate", "0.1", "--from-round", "target"], "control_source"),
    ],
)
def test_bad_controls_exit_2_and_write_nothing(target, args, says):
    with pytest.raises(CommandError) as refused:
        run("controls", *args)
    assert refused.value.returncode == 2 and says in str(refused.value)
    assert not Assignment.objects.filter(control=True).exists()
    assert not QualitySettings.objects.exists()


def test_settings(target):
    out = run(
        "settings",
        "--round",
        "target",
        "--threshold",
        "0.8",
        "--hours",
        "6",
        "--nudge",
        "--nudge-seconds",
        "9",
    )
    assert out == "target: threshold=0.8, abandon_hours=6, nudge=True, nudge_seconds=9\n"
    run("settings", "--round", "target", "--no-nudge")
    assert QualitySettings.objects.get(round=target).nudge is False
    with pytest.raises(CommandError) as refused:
        run("settings", "--round", "target")
    assert refused.value.returncode == 2 and "nothing to change" in str(refused.value)
    with pytest.raises(CommandError) as refused:
        run("settings", "--round", "target", "--threshold", "2")
    assert refused.value.returncode == 2 and "threshold" in str(refused.value)


def test_report(with_controls, fay, gus):
    submit_all(with_controls, fay)
    out = run("report", "--round", "target")
    assert "control rate 0.5 from any other round; alert below 0.7 (slots) from 5 answered" in out
    assert "controls: 4 of 8 done, 4 to do" in out
    assert "fay" in out and "4 answered  routed 0.75 [0.19, 0.99]" in out
    data = json.loads(run("report", "--round", "target", "--json"))
    assert data["annotators"][0]["routed"]["k"] == 3
