"""The archive layout (deterministic, atomic) and the calibration figures, checked against
brute-force definitions."""

import itertools
import random
import zipfile

import pytest

from nsmcore.calibration import CalibrationError, accuracy_at, best_threshold, histogram, roc_auc, roc_curve
from nsmcore.emoexpl import COMPRESS_LEVEL, atomic_archive, dumps, remove_partials


def write(folder, name="a.zip", records=("x", "y")):
    with atomic_archive(folder, tag="t") as pending:
        with pending.writer.stream("emoexpl.jsonl") as out:
            for r in records:
                out.write(dumps({"r": r, "é": 0.5}) + "\n")
        pending.writer.add("manifest.json", "{}")
        pending.name = name
    return pending


def test_the_same_content_gives_the_same_bytes_and_the_hash_of_what_was_written(tmp_path):
    first = write(tmp_path / "one").path.read_bytes()
    pending = write(tmp_path / "two")
    assert pending.path.read_bytes() == first
    with zipfile.ZipFile(pending.path) as zf:
        data = zf.read("emoexpl.jsonl")
        assert data == '{"r":"x","é":0.5}\n{"r":"y","é":0.5}\n'.encode()
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    import hashlib

    assert pending.writer.files["emoexpl.jsonl"] == {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    assert write(tmp_path / "three", records=("x", "z")).path.read_bytes() != first


def test_entries_are_deflated_at_the_archives_level(tmp_path):
    """zipfile ignores its own level for entries given as ZipInfo; the writer must not."""
    import zlib

    text = "".join(
        dumps({"line": f"someone did something {i % 97}", "p": i / 7}) + "\n" for i in range(20000)
    )
    expected = {}
    for level in (1, 9):
        deflate = zlib.compressobj(level, zlib.DEFLATED, -15)
        expected[level] = len(deflate.compress(text.encode()) + deflate.flush())
    assert expected[1] != expected[9]
    with atomic_archive(tmp_path, tag="t") as pending:
        with pending.writer.stream("emoexpl.jsonl") as out:
            out.write(text)
        pending.writer.add("manifest.json", text)
        pending.name = "a.zip"
    with zipfile.ZipFile(pending.path) as zf:
        sizes = {info.filename: info.compress_size for info in zf.infolist()}
    deflate = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -15)
    assert sizes == dict.fromkeys(
        ["emoexpl.jsonl", "manifest.json"], len(deflate.compress(text.encode()) + deflate.flush())
    )


def test_an_error_while_writing_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="boom"), atomic_archive(tmp_path, tag="t") as pending:  # noqa: SIM117
        with pending.writer.stream("emoexpl.jsonl") as out:  # the entry is opened from the archive
            out.write("half a record")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="plain file name"), atomic_archive(tmp_path, tag="t") as pending:
        pending.name = "../escape.zip"
    assert list(tmp_path.iterdir()) == []


def test_leftovers_of_one_tag_are_removed(tmp_path):
    (tmp_path / ".partial-job1.zip").write_text("x")
    (tmp_path / ".partial-job2.zip").write_text("x")
    (tmp_path / "emoexpl-all-abc.zip").write_text("x")
    assert [p.name for p in remove_partials(tmp_path, "job1")] == [".partial-job1.zip"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".partial-job2.zip", "emoexpl-all-abc.zip"]


def brute_auc(scores, labels):
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auc_matches_the_pairwise_definition_with_ties():
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(2, 40)
        scores = [rng.choice([0.1, 0.2, 0.5, 0.7, 0.9, rng.random()]) for _ in range(n)]
        labels = [rng.random() < 0.5 for _ in range(n)]
        if 0 < sum(labels) < n:
            assert roc_auc(scores, labels) == pytest.approx(brute_auc(scores, labels))
    assert roc_auc([0.1, 0.9], [False, True]) == 1.0
    assert roc_auc([0.9, 0.1], [False, True]) == 0.0
    assert roc_auc([0.3, 0.4], [True, True]) is None  # one class: undefined, not 0.5
    with pytest.raises(CalibrationError, match="3 scores but 2"):
        roc_auc([0.1, 0.2, 0.3], [True, False])


def test_the_best_threshold_separates_separable_data():
    scores = [0.05, 0.2, 0.3, 0.62, 0.7, 0.95]
    labels = [False, False, False, True, True, True]
    best = best_threshold(scores, labels)
    assert (best.threshold, best.tpr, best.fpr, best.accuracy) == (0.62, 1.0, 0.0, 1.0)
    assert accuracy_at(scores, labels, 0.5) == 1.0 and accuracy_at(scores, labels, 0.9) == pytest.approx(
        4 / 6
    )
    curve = roc_curve(scores, labels)
    assert (curve[0].tpr, curve[0].fpr, curve[-1].tpr, curve[-1].fpr) == (0, 0, 1, 1)
    assert best_threshold([0.2], [True]) is None


def test_histograms_close_the_last_bin():
    assert histogram([0.0, 0.05, 0.5, 0.99, 1.0], bins=4) == [2, 0, 1, 2]
    with pytest.raises(CalibrationError, match="outside"):
        histogram([1.2])
