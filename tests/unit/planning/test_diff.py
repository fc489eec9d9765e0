"""Field-level diffs: paths, keyed collections, sensitivity, ignores."""

from __future__ import annotations

from apimctl import kinds
from apimctl.planning.diff import diff, flatten, ignored
from apimctl.state.normalise import Context, normalise


def _ep(**fields: object) -> dict[str, object]:
    return normalise(kinds.ENDPOINT, {"name": "F", **fields}, Context("Default"))


def test_nested_and_keyed_paths() -> None:
    live = _ep(methods=[{"name": "m", "responseFilters": [{"name": "r"}]}])
    want = _ep(cors={"maxAge": 60}, methods=[{"name": "m", "responseFilters": [{"name": "r", "notes": "n"}]},
                                             {"name": "k"}])
    paths = {c.path: (c.before, c.after) for c in diff(kinds.ENDPOINT, live, want)}
    assert paths["cors.maxAge"] == (0, 60)
    assert paths["methods[m].responseFilters[r].notes"] == ("", "n")
    assert paths["methods[k]"][0] is None


def test_omitted_collection_left_alone() -> None:
    live = _ep(methods=[{"name": "m"}])
    assert diff(kinds.ENDPOINT, live, _ep()) == []


def test_secret_changes_are_sensitive() -> None:
    changes = diff(kinds.ENDPOINT, _ep(systemDomainCredentialSecret="a"),
                   _ep(systemDomainCredentialSecret="b"))
    assert [c.path for c in changes] == ["systemDomainCredentialSecret"]
    assert changes[0].sensitive
    assert changes[0].to_json()["after"] == "(sensitive)"


def test_error_message_override_removed_resets() -> None:
    live = normalise(kinds.ERROR_SET, {"name": "E", "errorMessages": [
        {"id": "ERR_502_BAD_GATEWAY", "status": "Oops", "responseBody": "x"}]})
    want = normalise(kinds.ERROR_SET, {"name": "E"})
    changes = {c.path: c.after for c in diff(kinds.ERROR_SET, live, want)}
    assert changes == {"errorMessages[ERR_502_BAD_GATEWAY].status": "Bad Gateway",
                       "errorMessages[ERR_502_BAD_GATEWAY].responseBody": ""}


def test_ignored_patterns() -> None:
    changes = diff(kinds.ENDPOINT, _ep(), _ep(cors={"maxAge": 5}, requestPathAlias="/x"))
    kept, skipped = ignored(changes, ["cors"])
    assert [c.path for c in skipped] == ["cors.maxAge"]
    assert [c.path for c in kept] == ["requestPathAlias"]


def test_flatten_for_creates() -> None:
    want = _ep(cors={"maxAge": 5})
    paths = [c.path for c in flatten(kinds.ENDPOINT, {"cors": want["cors"]})]
    assert "cors.maxAge" in paths and all(p.startswith("cors.") for p in paths)


def test_omitted_nested_collection_inside_a_method_left_alone() -> None:
    live = _ep(methods=[{"name": "m", "responseFilters": [{"name": "r"}]}])
    assert diff(kinds.ENDPOINT, live, _ep(methods=[{"name": "m"}])) == []
    changes = diff(kinds.ENDPOINT, live, _ep(methods=[{"name": "m", "responseFilters": []}]))
    assert [c.path for c in changes] == ["methods[m].responseFilters[r]"]
