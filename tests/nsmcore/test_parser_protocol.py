"""The parser benchmark's evaluation protocol (benchmarks.bench_parser.py): no held-out
item reaches a fold's training data, by id or by text (crowd-enVent copies a text under another
id), and everything else does."""

from benchmarks.bench_parser import fold_training


def row(text_id, text, masked=None, emotion="joy"):
    return {"text_id": text_id, "generated_text": text, "hidden_emo_text": masked or text, "emotion": emotion}


def test_held_out_items_never_reach_training_by_id_or_by_text():
    items = [
        {"text_id": "1", "text": "I won the race", "emotion": "pride"},
        {"text_id": "2", "text": "My dog died", "emotion": "sadness"},
        {"text_id": "3", "text": "A spider in my bed", "emotion": "disgust"},
    ]
    rows = [
        row("1", "I won the race"),  # the held-out item itself
        row("99", "I won the  RACE"),  # a copy under another id (spacing and case differ)
        row("98", "I felt [MASK] when I won the race", masked="i won the race"),  # its masked text
        row("2", "My dog died"),  # a training item's row: kept
        row("50", "I passed my exam"),  # an unrelated text: kept
    ]
    silver_train, crowd = fold_training(items, [1, 2], [0], rows)
    assert silver_train == [1, 2]
    kept = {r["text_id"] for r in crowd}
    assert kept == {"2", "50"}
    held_texts = {items[0]["text"].lower()}
    assert not any(r["hidden_emo_text"].lower() in held_texts for r in crowd)


def test_every_fold_leaves_out_exactly_its_own_items():
    items = [{"text_id": str(k), "text": f"text number {k}", "emotion": "joy"} for k in range(6)]
    rows = [row(str(k), f"text number {k}") for k in range(6)]
    for test in ([0, 1], [2, 3], [4, 5]):
        train = [k for k in range(6) if k not in test]
        _, crowd = fold_training(items, train, test, rows)
        assert {r["text_id"] for r in crowd} == {str(k) for k in train}
