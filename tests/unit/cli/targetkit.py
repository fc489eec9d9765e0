"""The parsed connection options of a command, as ``apimctl.cli.target`` receives them."""

from __future__ import annotations

from typing import Any

NO_CREDENTIALS = {
    "api_key": None,
    "api_secret": None,
    "username": None,
    "password": None,
    "area": None,
}


def options(**overrides: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "url": "https://apim.example.test/v3/rest",
        "token": None,
        **NO_CREDENTIALS,
        "qps": 2.0,
        "qps_given": False,
        "parallelism": 8,
        "timeout": 30.0,
        "verbose": False,
        "dialect": "auto",
        "dialect_source": "--dialect",
        "verify": True,
    }
    options.update(overrides)
    return options
