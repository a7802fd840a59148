"""``Quota``, the wall on an error: typed, immutable, and kept whole through ``to_dict()`` /
``from_dict()``, pickling and copying; redacted like every text of an error; a ``quota``
member out of shape from another party is kept as received, never a refusal."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from normalize_errors import (
    HarnessError,
    Quota,
    UpstreamRateLimitedError,
)

WALL = Quota(
    scope="tokens",
    window="minute",
    per=["organization", "model"],
    model="gpt-4o-mini",
    reset=1_725_710_430.0,
    resets_in=26.6,
    source="x-ratelimit-reset-tokens",
)


def test_a_quota_rides_on_the_error_and_round_trips() -> None:
    """to_dict() writes the member; from_dict() reads back an equal Quota; retry_after is
    its own member, unchanged."""
    err = UpstreamRateLimitedError("rate limited", retry_after=26.6, quota=WALL)
    written = err.to_dict()
    assert written["quota"] == {
        "scope": "tokens",
        "window": "minute",
        "per": ["organization", "model"],
        "model": "gpt-4o-mini",
        "reset": 1_725_710_430,
        "resets_in": 26.6,
        "billing": False,
        "source": "x-ratelimit-reset-tokens",
    }
    back = HarnessError.from_json(json.dumps(written))
    assert back.quota == WALL
    assert back.retry_after == 26.6
    assert "quota" not in back.extensions
    assert back.to_dict() == written


def test_a_quota_pickles_and_copies_with_its_error() -> None:
    err = UpstreamRateLimitedError("rate limited", quota=WALL)
    for again in (pickle.loads(pickle.dumps(err)), copy.copy(err), copy.deepcopy(err)):
        assert again.quota == WALL
        assert again == err
    assert pickle.loads(pickle.dumps(WALL)) == WALL
    assert hash(Quota.from_dict({"scope": "spend", "billing": True})) == hash(
        Quota(scope="spend", billing=True)
    )


def test_an_error_pickled_before_quotas_existed_reads_none() -> None:
    """A pickle made by an older release has no ``_quota`` in its state."""
    err = UpstreamRateLimitedError("old")
    state = err.__reduce__()[2]
    state.pop("_quota")
    made = UpstreamRateLimitedError.__new__(UpstreamRateLimitedError)
    made.__setstate__(state)
    assert made.quota is None
    assert "quota" not in made.to_dict()


def test_a_quota_is_immutable() -> None:
    with pytest.raises(AttributeError, match="immutable"):
        WALL.reset = 0.0
    with pytest.raises(AttributeError, match="immutable"):
        del WALL.scope


@pytest.mark.parametrize(
    ("members", "named"),
    [
        ({"scope": 5}, "scope"),
        ({"scope": "to kens"}, "scope"),
        ({"reset": -1}, "reset"),
        ({"resets_in": float("nan")}, "resets_in"),
        ({"reset": True}, "reset"),
        ({"billing": "yes"}, "billing"),
        ({"model": 42}, "model"),
        ({"per": "model"}, "per"),
    ],
)
def test_a_member_out_of_shape_is_named(members: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Quota.from_dict(members)


def test_a_received_quota_out_of_shape_is_kept_as_received() -> None:
    """``quota`` is no member of the draft: another party may mean something else by it.
    The object is accepted, ``err.quota`` is None and the member is written back as is."""
    received = {"code": "upstream.rate_limited", "quota": {"scope": 5, "left": "lots"}}
    err = HarnessError.from_dict(received)
    assert err.quota is None
    assert err.extensions == {"quota": {"scope": 5, "left": "lots"}}
    assert err.to_dict() == received


def test_the_model_name_is_redacted_and_bounded() -> None:
    """The one free text of a quota goes through the same redaction as every other."""
    key = "sk-proj-" + "A1b2C3d4" * 6
    wall = Quota(model=f"gpt-4o {key}", source="x" * 500)
    assert key not in repr(wall)
    assert key not in json.dumps(UpstreamRateLimitedError(quota=wall).to_dict())
    assert wall.source is not None
    assert len(wall.source) == 200


def test_resets_in_is_bounded_and_a_mapping_is_accepted() -> None:
    far = Quota(resets_in=10**12)
    assert far.resets_in == 400 * 86400.0
    err = UpstreamRateLimitedError(quota={"scope": "spend", "billing": True})
    assert err.quota == Quota(scope="spend", billing=True)
    err.quota = None
    assert "quota" not in err.to_dict()
    with pytest.raises(TypeError, match="quota"):
        UpstreamRateLimitedError(quota=3)  # type: ignore[arg-type]
