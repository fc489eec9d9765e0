"""Reading call logs: every shape, gzip, folders, standard input; bad records located."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.replay.records import BadRecord, Record, read

RECORD = {"request_time": "2026-01-05T10:00:00Z", "request_host_name": "api.example.com", "http_method": "get",
          "uri": "/v2/forecast?api_key=&city=Paris", "api_key": "k-0123456789", "ssl_enabled": "1",
          "http_status_code": "200", "traffic_manager_error_code": "-", "oauth_access_token": "-"}


def _lines(*values: Any) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


def test_a_record_of_the_call_log_shape() -> None:
    [record] = list(read_text(_lines(RECORD)))
    assert isinstance(record, Record)
    assert (record.method, record.host, record.path, record.key, record.https, record.status) == \
        ("GET", "api.example.com", "/v2/forecast", "k-0123456789", True, 200)
    assert record.query == (("api_key", ""), ("city", "Paris"))
    assert record.time == 1767607200.0


def read_text(text: str, tmp: Path | None = None) -> list[Record | BadRecord]:
    path = (tmp or Path(__file__).parent) / "log.jsonl"
    if tmp is None:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            return read_text(text, Path(folder))
    path.write_text(text)
    return list(read(str(path)))


def test_stream_messages_emulator_entries_and_lists(tmp_path: Path) -> None:
    entry = {"id": "m", "time": "2026-01-05T10:00:01Z", "method": "GET", "host": "api.example.com",
             "path": "/p?x=1", "status": 200, "decidedBy": "return"}
    found = read_text(_lines({"data": [RECORD, RECORD]}, entry, [entry, RECORD]), tmp_path)
    assert [type(r).__name__ for r in found] == ["Record"] * 5
    assert found[2].path == "/p" and found[2].query == (("x", "1"),)


def test_gzip_folders_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "b").mkdir()
    with gzip.open(tmp_path / "b" / "2.log", "wt") as out:  # told by its bytes, not its name
        out.write(_lines(RECORD))
    (tmp_path / "a.jsonl").write_text(_lines(RECORD, RECORD))
    assert len([r for r in read(str(tmp_path)) if isinstance(r, Record)]) == 3
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_lines(RECORD).encode())))
    assert [type(r).__name__ for r in read("-")] == ["Record"]


def test_bad_records_are_located_never_raised(tmp_path: Path) -> None:
    text = _lines(RECORD, {**RECORD, "http_status_code": "OK"}, {**RECORD, "request_time": "yesterday"},
                  {"http_method": "GET"}, 7, {"hello": 1}) + "{not json\n" + "[" * 100_000 + "\n" + \
        json.dumps([[RECORD]]) + "\n"
    found = read_text(text, tmp_path)
    bad = [r for r in found if isinstance(r, BadRecord)]
    assert [b.where.rsplit(":", 1)[1] for b in bad] == ["2", "3", "4", "5", "6", "7", "8", "9"]
    assert "http_status_code" in bad[0].reason and "request_time" in bad[1].reason
    assert "missing" in bad[2].reason and "not JSON" in bad[5].reason
    assert [type(r).__name__ for r in read(str(tmp_path / "missing"))] == ["BadRecord"]
    (tmp_path / "broken.gz").write_bytes(gzip.compress(_lines(RECORD).encode())[:-12])
    assert any(isinstance(r, BadRecord) and "cannot be read" in r.reason for r in read(str(tmp_path / "broken.gz")))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(RECORD)), st.one_of(st.text(max_size=30), st.integers(), st.none(),
                                                                   st.lists(st.integers(), max_size=2)), max_size=9))
def test_any_record_is_read_or_located(fields: dict[str, Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        found = read_text(_lines({**RECORD, **fields}), Path(folder))
    assert len(found) == 1
    assert isinstance(found[0], Record) or found[0].where.endswith(":1")
