"""A recording fake of the API client apply uses (no server)."""

from __future__ import annotations

from typing import Any

from apimctl.api.ratelimit import Backoff

from ..areakit import ClientDefaults

NO_WAIT = Backoff(base=0.0, cap=0.0)


class FakeClient(ClientDefaults):
    """Records calls; answers from ``replies`` (path -> value or exception list) or echoes."""

    def __init__(self, replies: dict[tuple[str, str], list[Any]] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.replies = replies or {}
        self.next_id = 0

    def _reply(self, method: str, path: str, default: Any) -> Any:
        queue = self.replies.get((method, path))
        if queue:
            value = queue.pop(0)
            if isinstance(value, BaseException):
                raise value
            return value
        return default

    async def get(self, path: str, params: Any = None) -> Any:
        self.calls.append(("GET", path, params))
        return self._reply("GET", path, [])

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.calls.append(("LIST", path, params))
        return list(self._reply("LIST", path, []))

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        self.calls.append(("POST", path, body))
        self.next_id += 1
        default = {"id": f"id{self.next_id}", **(body if isinstance(body, dict) else {})}
        return dict(self._reply("POST", path, default))

    async def put(self, path: str, body: Any, params: Any = None) -> Any:
        self.calls.append(("PUT", path, body))
        return self._reply("PUT", path, body)

    async def delete(self, path: str) -> None:
        self.calls.append(("DELETE", path, None))
        self._reply("DELETE", path, None)

    def writes(self) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if c[0] in ("POST", "PUT", "DELETE")]
