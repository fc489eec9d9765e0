"""Every refusal the traffic manager makes, rendered through the service's error set, in both
dialects: each message's body and detail header (set through the management API), the code
of the catalog, the dialect's error-code header and the set's content type; and OAuth
endpoints kept to token presence."""

from __future__ import annotations

import pytest

from .support import HOST, T0, Area

REFUSALS = [  # (message, method, path, extra headers, clock offset)
    ("ERR_403_NOT_AUTHORIZED", "GET", "/v2/hdr/x", {}, 0),
    ("ERR_403_DEVELOPER_INACTIVE", "GET", "/v2/hdr/x", {"X-Api-Key": "unknown-key-1"}, 0),
    ("ERR_403_SERVICE_REQUIRES_SSL", "GET", "/v2/secure?api_key={free}", {}, 0),
    ("ERR_503_SERVICE_UNAVAILABLE", "GET", "/v2/maintained?api_key={free}", {}, 9 * 3600),
    ("ERR_502_BAD_GATEWAY", "GET", "/v2/dead?api_key={free}", {}, 0),
    ("ERR_504_GATEWAY_TIMEOUT", "GET", "/v2/slow?api_key={free}", {}, 0),
    ("ERR_400_MISSING_REQUIRED_ACCESS_TOKEN", "GET", "/v2/oauth", {}, 0),
]
CODES = {"ERR_403": 403, "ERR_503": 503, "ERR_502": 502, "ERR_504": 504, "ERR_400": 400}


@pytest.fixture(scope="module")
def rendered(area: Area) -> Area:
    sets = area.api("GET", f"/services/{area.service['id']}/errorSets").json()
    first = sets[0]
    for message_id, *_ in REFUSALS:
        answer = area.api("POST", f"/services/{area.service['id']}/errorSets/{first['id']}/errorMessages",
                          json={"id": message_id, "detailHeader": f"detail of {message_id}",
                                "responseBody": f'{{"refused": "{message_id}"}}'})
        assert answer.status_code == 200, answer.text
    return area


@pytest.mark.parametrize(("message_id", "method", "path", "headers", "offset"), REFUSALS)
def test_each_refusal_through_the_error_set(rendered: Area, message_id: str, method: str, path: str,
                                            headers: dict[str, str], offset: int) -> None:
    rendered.clock.now = T0 + offset
    try:
        response = rendered.call(method, path.format(free=rendered.keys["free"]), headers=headers)
    finally:
        rendered.clock.now = T0
    assert response.status_code == CODES[message_id[:7]]
    assert response.headers[rendered.error_header] == message_id
    assert response.headers["x-error-detail-header"] == f"detail of {message_id}"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"refused": message_id}


def test_oauth_endpoints_need_only_a_bearer_token(rendered: Area) -> None:
    response = rendered.traffic.get(f"http://{HOST}/v2/oauth", headers={"Authorization": "Bearer anything"})
    assert response.status_code == 200
