"""Chart geometry: where values land on each chart's axes."""

from __future__ import annotations

import pytest

from nsmcore.charts import (
    ZERO_STUB,
    Bar,
    Interval,
    heatmap,
    histogram_chart,
    interval_chart,
    line_chart,
    nice_step,
    roc_chart,
    strip_chart,
    whisker_bars,
)

LEFT, WIDTH = 120.0, 520.0


def test_interval_chart_puts_one_at_the_right_edge_and_zero_at_the_left_without_negatives():
    chart = interval_chart([Interval("body", 1.0, 0.5, 1.0), Interval("time", 0.0)])
    one, zero = chart["bars"]
    assert chart["lo"] == 0.0 and chart["zero"] == LEFT
    assert one["x"] == LEFT and one["x"] + one["w"] == LEFT + WIDTH
    assert one["ci_x1"] == LEFT + WIDTH / 2 and one["ci_x2"] == LEFT + WIDTH
    assert zero["w"] == 1.0  # a zero bar is still drawn, one unit wide
    assert [t["label"] for t in chart["ticks"]] == ["0", "0.25", "0.5", "0.75", "1"]


def test_interval_chart_widens_its_axis_for_negative_values_and_clips_intervals_to_it():
    half = interval_chart([Interval("body", -0.2, -0.4, 0.1)])
    assert half["lo"] == -0.5 and half["zero"] == pytest.approx(LEFT + WIDTH * 0.5 / 1.5)
    whole = interval_chart([Interval("body", 0.3, -1.7, 1.4)])
    bar = whole["bars"][0]
    assert whole["lo"] == -1.0
    assert bar["ci_x1"] == LEFT and bar["ci_x2"] == LEFT + WIDTH  # clipped to [-1, 1]
    assert [t["label"] for t in whole["ticks"]] == ["-1", "-0.5", "0", "0.5", "1"]


def test_interval_chart_leaves_undefined_values_without_a_bar():
    bar = interval_chart([Interval("body", None)])["bars"][0]
    assert bar["undefined"] and "x" not in bar and "ci_x1" not in bar


def test_whisker_bars_reach_the_top_at_the_axis_max_and_clip_past_it():
    chart = whisker_bars([Bar("a", 0.5, 0.25, 0.75), Bar("b", 1.0), Bar("c", 3.0, 2.0, 4.0)], axis_max=1.0)
    a, b, c = chart["bars"]
    assert b["y"] == chart["top_y"] and b["y"] + b["h"] == chart["axis_y"]
    assert a["y"] == pytest.approx((chart["top_y"] + chart["axis_y"]) / 2)
    assert a["whisker_y1"] < a["y"] < a["whisker_y2"] < chart["axis_y"]
    assert c["y"] == chart["top_y"] and c["clipped"] and c["whisker_y1"] == c["whisker_y2"] == chart["top_y"]
    assert a["x"] < b["x"] < c["x"] and chart["ticks"][-1]["label"] == "1"


def test_whisker_bars_default_axis_holds_the_highest_whisker():
    chart = whisker_bars([Bar("a", 2.0, 1.0, 5.0)])
    assert chart["max"] == 5.0 and chart["bars"][0]["whisker_y1"] == chart["top_y"]
    assert whisker_bars([Bar("zero", 0.0)])["max"] == 1.0


def test_heatmap_intensity_grows_with_the_value_and_saturates_at_vmax():
    values = [[0, 1, 2], [3, 4, 8]]
    chart = heatmap(values, rows=["joy", "fear"], columns=["joy", "fear", "anger"], vmax=4)
    cells = {(c["row"], c["column"]): c for c in chart["cells"]}
    ordered = [c["intensity"] for c in sorted(chart["cells"], key=lambda c: c["value"])]
    assert ordered == sorted(ordered)
    assert cells["joy", "joy"]["intensity"] == 0.0 and cells["fear", "fear"]["intensity"] == 1.0
    assert cells["fear", "anger"]["intensity"] == 1.0  # past vmax: saturated
    assert cells["joy", "fear"]["fill"].endswith(",0.250)")
    assert cells["fear", "anger"]["x"] == cells["joy", "anger"]["x"] > cells["fear", "joy"]["x"]
    assert cells["fear", "joy"]["y"] > cells["joy", "joy"]["y"]


def test_heatmap_refuses_a_grid_of_the_wrong_shape():
    with pytest.raises(ValueError, match="2 x 2"):
        heatmap([[1, 2]], rows=["a", "b"], columns=["a", "b"])


def test_line_chart_spans_the_points_and_puts_the_lowest_loss_lowest():
    chart = line_chart([(0, 2.0), (50, 1.0), (100, 0.5)])
    first, middle, last = chart["dots"]
    assert first["x"] == chart["left"] and last["x"] == chart["right"]
    assert first["y"] == chart["top"]  # the highest loss at the top
    assert first["y"] < middle["y"] < last["y"] < chart["bottom"]  # the axis starts at 0
    assert chart["points"].count(",") == 3
    assert [t["label"] for t in chart["x_ticks"]] == ["0", "20", "40", "60", "80", "100"]
    assert chart["y_ticks"][0]["y"] == chart["bottom"]


def test_line_chart_of_nothing_or_one_point_draws_no_axis_it_cannot_have():
    assert line_chart([])["empty"]
    one = line_chart([(3, 0.7)])
    assert one["x_ticks"] == [] and len(one["dots"]) == 1


def test_nice_step_is_one_two_or_five_times_a_power_of_ten():
    assert [nice_step(s) for s in (1, 7, 30, 0.9, 1200)] == [0.2, 2, 5, 0.2, 200]


def test_roc_puts_the_perfect_point_top_left_and_chance_on_the_diagonal():
    chart = roc_chart([(0, 0), (0, 1), (1, 1)], best=(0.0, 1.0))
    assert (chart["best_x"], chart["best_y"]) == (chart["lo"], chart["lo"])
    assert chart["points"].split()[-1] == f"{chart['hi']:.1f},{chart['lo']:.1f}"
    assert roc_chart([]) is None


def test_histogram_tallest_bin_reaches_the_top():
    chart = histogram_chart([1, 4, 0, 2])
    bars = chart["bars"]
    assert bars[1]["y"] == chart["lo"] and bars[1]["y"] + bars[1]["h"] == chart["axis"]
    assert bars[2]["h"] == 0 and bars[0]["range"] == "0.0-0.2" and bars[-1]["range"] == "0.8-1.0"
    assert histogram_chart([]) is None


def test_strip_chart_places_values_and_marks_on_one_axis_and_clips_past_it():
    chart = strip_chart([0.0, 0.5, 1.0, 1.4], marks=[("canonical", 0.5), ("guilt<->shame", 0.25)])
    xs = [t["x"] for t in chart["ticks"]]
    assert xs[0] == chart["left"] and xs[2] == chart["right"]
    assert xs[1] == pytest.approx((chart["left"] + chart["right"]) / 2)
    assert xs[3] == chart["right"]  # clipped to the axis
    canonical, swap = chart["marks"]
    assert canonical["x"] == xs[1] and swap["x"] < canonical["x"]
    assert canonical["text_y"] != swap["text_y"]  # staggered names
    assert [s["label"] for s in chart["scale"]] == ["0", "0.2", "0.4", "0.6", "0.8", "1"]


def test_a_zero_bar_is_a_stub_standing_on_the_axis_never_below_it():
    """Issue 25: a bar of 0 (an accuracy of 0/1) drew nothing, like a label with no item."""
    chart = whisker_bars([Bar("fear", 0.0, 0.0, 0.98), Bar("odd", -0.3)], axis_max=1.0)
    for bar in chart["bars"]:
        assert bar["zero"] and bar["h"] == ZERO_STUB > 0
        assert bar["y"] + bar["h"] == chart["axis_y"] and bar["y"] < chart["axis_y"]


def test_a_strip_marks_name_near_an_end_is_written_inward():
    """Issue 25: "canonical 0.950" started at its mark near the right end and ran out of the chart."""
    chart = strip_chart([], marks=[("canonical", 0.95), ("low", 0.02), ("mid", 0.5)])
    assert [m["anchor"] for m in chart["marks"]] == ["end", "start", "middle"]
