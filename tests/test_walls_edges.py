"""The edges of reading a wall (``_walls``, ``_calendar``) and of the ``Quota`` member: the
formats each branch reads, and the values each refuses, one assertion per behaviour."""

from __future__ import annotations

import calendar
import json
import pickle
from typing import Any

import pytest

from normalize_errors import Quota, from_response
from normalize_errors._base import _calendar as dates
from normalize_errors._reading import _walls as walls

NOW = 1_796_630_400.0  # 2026-12-07T08:00:00Z, 00:00 in Los Angeles (PST)
DATE = "Mon, 07 Dec 2026 08:00:00 GMT"


def said(message: str, status: int = 429, **error: Any) -> Quota | None:
    body = {"error": {"message": message, **error}}
    return from_response(status, {"date": DATE}, json.dumps(body)).quota


# -- Google's Cloud Code metadata -----------------------------------------------------------------

# A 429 from cloudcode-pa.googleapis.com, its ErrorInfo metadata as pasted whole in
# google-gemini/gemini-cli#29425 (sent 2026-09-20 at 11:40:52 UTC; the message as pasted).
CLOUD_CODE_DATE = "Sun, 20 Sep 2026 11:40:52 GMT"
CLOUD_CODE = {
    "error": {
        "code": 429,
        "message": "Individual quota reached. Please upgrade your subscription to increase "
        "your limits. Resets in 9h22m20s.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "QUOTA_EXHAUSTED",
                "domain": "cloudcode-pa.googleapis.com",
                "metadata": {
                    "quotaResetTimeStamp": "2026-09-20T21:03:14Z",
                    "quotaResetDelay": "33740.910400305s",
                    "uiMessage": "true",
                    "model": "gemini-3.5-flash",
                },
            }
        ],
    }
}


def test_cloud_code_metadata_states_the_reset_and_the_model() -> None:
    err = from_response(429, {"date": CLOUD_CODE_DATE}, json.dumps(CLOUD_CODE))
    quota = err.quota
    assert quota is not None
    assert quota.reset == calendar.timegm((2026, 9, 20, 21, 3, 14))
    assert quota.source == "quotaResetTimeStamp"
    assert quota.model == "gemini-3.5-flash"
    # without the instant, the delay after the response's Date
    body = json.loads(json.dumps(CLOUD_CODE))
    del body["error"]["details"][0]["metadata"]["quotaResetTimeStamp"]
    quota = from_response(429, {"date": CLOUD_CODE_DATE}, json.dumps(body)).quota
    assert quota is not None
    assert quota.source == "quotaResetDelay"
    assert quota.resets_in == pytest.approx(33740.910400305)


def test_a_monthly_violation_comes_back_on_the_first_of_the_month_pacific() -> None:
    """A ``QuotaFailure`` whose quota id names a month (the id's form as Gemini's:
    ``...PerDayPerProjectPerModel...``; this one constructed); an id naming no window and no
    ``RetryInfo`` states nothing and is passed over."""
    body = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaMetric": "generativelanguage.googleapis.com/generate_requests",
                 "quotaId": "GenerateRequestsPerMonthPerProject"},
                {"quotaId": "SomethingElse"}]}]}}  # fmt: skip
    quota = from_response(429, {"date": DATE}, json.dumps(body)).quota
    assert quota is not None
    assert (quota.window, quota.per, quota.scope) == ("month", ("project",), "requests")
    # 2027-01-01 00:00 PST is 08:00 UTC
    assert quota.reset == calendar.timegm((2027, 1, 1, 8, 0, 0))


# -- words ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "resets_in"),
    [
        # "reset in" with no amount after it: the next anchor is read
        ("Your quota will reset in a while. Try again at 8pm.", 12 * 3600.0),
        # a time of day in this machine's zone words (UTC), before now: tomorrow
        ("Usage limit reached, resets at 7:00 am.", 23 * 3600.0),
        # an offset, the time of day already past there: tomorrow
        ("Access resets at 07:30 AM GMT+2.", 21.5 * 3600),
        # "PT" ending a sentence is Pacific time (00:00 PST now)
        ("Usage limit reached. Access resets at 10:00 PT.", 10 * 3600.0),
        # a date with an offset, either form
        ("You will regain access on 2026-12-09 at 00:00 +02:00.", 38 * 3600.0),
        ("You will regain access on 2026-12-09T00:00:00-05:30.", 45.5 * 3600),
    ],
)
def test_times_of_day_and_dates_in_words(message: str, resets_in: float) -> None:
    quota = said(message)
    assert quota is not None
    assert quota.resets_in == pytest.approx(resets_in)
    assert quota.reset == pytest.approx(NOW + resets_in)


@pytest.mark.parametrize(
    "message",
    [
        "Limit reached; resets at 13pm today.",  # no such hour on a 12-hour clock
        "Limit reached; resets at 25:00.",  # nor on a 24-hour one
        "You will regain access on 2026-02-30 at 00:00 UTC.",  # no such day
    ],
)
def test_impossible_times_are_no_reset(message: str) -> None:
    assert said(message) is None


def test_a_code_that_names_billing_is_a_billing_wall() -> None:
    quota = said("Request blocked.", code="billing_hard_limit_reached", type="requests")
    assert quota is not None
    assert (quota.scope, quota.billing, quota.reset) == ("spend", True, None)


# -- values ---------------------------------------------------------------------------------------


def test_numbers_strings_and_the_rest() -> None:
    assert walls._number(5) == 5.0
    assert walls._number(2.5) == 2.5
    assert walls._number(True) is None  # JSON's true is no number
    assert walls._number("soon") is None
    assert walls._number(["5"]) is None


def test_a_structured_field_parameter_without_a_name_is_skipped() -> None:
    assert walls.sf_list('"default";;r=5;=3;t=3') == [("default", {"r": 5.0, "t": 3.0})]


def test_an_ietf_policy_named_as_a_vendor_budget_or_without_a_quota_adds_nothing() -> None:
    headers = {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "1",
        "ratelimit-policy": '"requests";q=100;w=60, "other";w=5',
        "ratelimit": '"requests";r=50;t=30, "other";r=1',
    }
    [found] = walls.budgets_of(headers)
    assert (found.scope, found.limit, found.remaining) == ("requests", 60, 1)
    assert repr(found) == "Budget('requests', limit=60, remaining=1, resets_in=None)"


def test_instants_in_every_form_and_none() -> None:
    assert dates.instant("Mon, 07 Dec 2026 08:00:00 GMT") == NOW  # an HTTP-date
    assert dates.instant("2026-12-07T08:00:00.5Z") == NOW + 0.5
    assert dates.instant("2026-12-07t08:00:00.25z") == NOW + 0.25  # RFC 3339 allows t, z
    assert dates.instant("2026-12-07 08:00:00") == NOW  # no offset: UTC
    assert dates.instant("12345") is None
    assert dates.http_date("12345") is None  # no letters: no date


def test_a_zone_the_database_lacks_is_none_and_utc_needs_none() -> None:
    assert dates._zone("Nowhere/No_Such_Place") is None
    assert dates._zone("../../etc/passwd") is None  # not a zone name at all
    expected = calendar.timegm((2026, 12, 8, 0, 0, 0))
    assert dates.next_midnight(NOW, "UTC") == expected


def test_utc_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without any zone database, UTC's midnights and months are the same."""
    monkeypatch.setattr(dates, "_zone", lambda name: None)
    assert dates.next_midnight(NOW, "UTC") == calendar.timegm((2026, 12, 8, 0, 0, 0))
    assert dates.next_month(NOW, "UTC") == calendar.timegm((2027, 1, 1, 0, 0, 0))


# -- the Quota member -----------------------------------------------------------------------------


def test_from_dict_of_no_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match="JSON object"):
        Quota.from_dict(["scope", "tokens"])  # type: ignore[arg-type]


def test_a_quota_equals_only_a_quota() -> None:
    assert Quota(scope="tokens") != ("tokens",)
    assert Quota(scope="tokens") == Quota(scope="tokens")
    assert len({Quota(scope="tokens"), Quota(scope="tokens")}) == 1


def test_per_is_deduplicated_without_none_and_bounded() -> None:
    quota = Quota(per=["model", None, "model", *[f"p{n}" for n in range(20)]])  # type: ignore[list-item]
    assert quota.per == ("model", "p0", "p1", "p2", "p3", "p4", "p5", "p6")
    assert pickle.loads(pickle.dumps(quota)) == quota


def test_a_number_too_large_for_a_float_is_out_of_range() -> None:
    with pytest.raises(ValueError, match="out of range"):
        Quota(resets_in=10**400)


def test_metadata_without_a_reset_states_none() -> None:
    body = json.loads(json.dumps(CLOUD_CODE))
    body["error"]["details"][0]["metadata"] = {"uiMessage": "true", "quotaResetDelay": ""}
    body["error"]["message"] = "Individual quota reached."
    assert from_response(429, {"date": CLOUD_CODE_DATE}, json.dumps(body)).quota is None
