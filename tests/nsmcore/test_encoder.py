"""The sentence encoder: loads with from_pretrained from a local folder (a tiny BERT built here),
gives normalised embeddings in the order asked, feeds the classifier parser, and fails at once
naming the setting when there is no model."""

import numpy as np
import pytest

from nsmcore.encoder import Encoder, EncoderUnavailable
from nsmcore.parsers.classifier import ClassifierError
from nsmcore.parsers.classifier_training import train_classifier
from nsmcore.tiny import build_tiny_nli
from tests.nsmcore.test_classifier import HELD_OUT, TRAIN


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    return str(build_tiny_nli(tmp_path_factory.mktemp("encoder"), texts=[t for t, _ in TRAIN]))


def test_embeddings_are_normalised_and_follow_the_order_asked(tiny_encoder):
    encoder = Encoder(tiny_encoder)
    texts = ["a short one", "a rather longer text about a dog that ran away from home", "a short one"]
    e = encoder.encode(texts)
    assert e.shape == (3, encoder.dim) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(e[0], e[2])
    # batched by length, asked in another order: the same rows
    again = Encoder(tiny_encoder).encode(texts[::-1])
    np.testing.assert_allclose(again[::-1], e, atol=1e-5)
    assert not np.allclose(e[0], e[1])


def test_the_classifier_parser_trains_and_reloads_with_an_encoder(tiny_encoder, tmp_path):
    plain = train_classifier(TRAIN, seed=0)
    model = train_classifier(TRAIN, seed=0, encoder=tiny_encoder)
    assert model.matrix(["x"]).shape[1] == plain.matrix(["x"]).shape[1] + Encoder(tiny_encoder).dim
    model.save(tmp_path / "m")
    assert model.card["sources"]["encoder"].startswith(tiny_encoder)
    from nsmcore.parsers.classifier import load_classifier

    texts = [t for t, _ in HELD_OUT]
    assert [d.values for d in load_classifier(tmp_path / "m").decode(texts)] == [
        d.values for d in model.decode(texts)
    ]


def test_a_missing_encoder_names_the_setting(tmp_path):
    with pytest.raises(EncoderUnavailable, match="NSM_ENCODER_MODEL"):
        Encoder(str(tmp_path / "nothing-here"))
    with pytest.raises(ClassifierError, match="NSM_ENCODER_MODEL"):
        train_classifier(TRAIN, encoder=str(tmp_path / "nothing-here"))
