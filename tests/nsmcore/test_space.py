import math
import tracemalloc

import numpy as np

from nsmcore.mapper import load_rule_set, route, route_codes
from nsmcore.schema import SLOTS, SPACE_SIZE, from_codes
from nsmcore.space import all_codes, regions


def test_all_codes_enumerates_every_assignment_once():
    codes = all_codes()
    assert codes.shape == (SPACE_SIZE, 12)
    # mixed-radix order: the row index is the codes read as a mixed-radix number
    radix = np.array([math.prod(len(s.values) for s in SLOTS[i + 1 :]) for i in range(12)])
    assert np.array_equal(codes.astype(np.int64) @ radix, np.arange(SPACE_SIZE))


def test_regions_cover_the_space_and_agree_with_batch_routing_of_every_assignment():
    result = regions()
    assert result["total"] == SPACE_SIZE
    assert sum(result["regions"].values()) + result["abstain"] == SPACE_SIZE
    winners, masks = route_codes(all_codes())
    counts = np.bincount(winners + 1, minlength=14)
    assert result["abstain"] == counts[0]
    assert list(result["regions"].values()) == counts[1:].tolist()
    assert result["multi_rule"] == int(np.count_nonzero(np.bitwise_count(masks) > 1))


def test_satisfied_counts_follow_from_the_product_of_allowed_values():
    result = regions()
    for rule in load_rule_set().rules:
        expected = math.prod(len(rule.conditions.get(s.name, s.values)) for s in SLOTS)
        assert result["satisfied"][rule.emotion] == expected


def test_regions_agree_with_single_routing_on_sampled_assignments():
    codes = all_codes()
    rng = np.random.default_rng(5)
    winners, _ = route_codes(codes)
    for i in rng.choice(SPACE_SIZE, 300, replace=False):
        r = route(from_codes(codes[i].tolist()))
        assert winners[i] == (-1 if r.rule_index is None else r.rule_index)


def test_first_rule_region_is_everything_that_satisfies_it():
    result = regions()
    assert result["regions"]["relief"] == result["satisfied"]["relief"]
    assert result["regions"]["guilt"] < result["satisfied"]["guilt"]  # shame shadows part of guilt


def test_regions_work_through_the_space_in_blocks_of_bounded_memory():
    """The rules page computes the regions inside the web process, where the allocator keeps what
    a peak took: over the whole space at once that was about 80 MiB at the peak and 20 MiB kept
    for the process's life. numpy reports its arrays to tracemalloc, so the peak is exact."""
    rule_set = load_rule_set()
    regions(rule_set)  # anything imported or cached on first use is not the computation's
    tracemalloc.start()
    try:
        result = regions(rule_set)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(result["regions"].values()) + result["abstain"] == SPACE_SIZE
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"
