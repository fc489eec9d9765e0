"""Secrets in a comparison: references compared modulo the prefix rules, write-only fields
never a difference."""

from __future__ import annotations

from typing import Any

from apimctl.areas.compare import compare
from apimctl.areas.rules import Rule, Rules
from apimctl.plans.comparison import Side


def _side(prefix: str, secret: str, password: str) -> dict[str, list[Any]]:
    return {"services": [{"name": f"{prefix}Payments", "endpoints": [{
        "name": "Forecast", "requestPathAlias": "/f", "trafficManagerDomain": "api.example.com",
        "systemDomainCredentialSecret": "${" + secret + "}",
        "systemDomainAuthentication": {"type": "httpBasic", "username": "u", "password": "${" + password + "}"}}]}]}


def _compared(ours: dict[str, list[Any]], theirs: dict[str, list[Any]], rules: Rules) -> list[tuple[str, str]]:
    sides = [("dev", ours), ("prod", theirs)]
    rules.rewrite(sides)
    rules.compare_references(sides)
    found = compare(ours, theirs, Side("dev", "dev"), Side("prod", "prod"))
    return [(d.address, f.path) for d in found.differences for f in d.fields]


PREFIX = Rules([Rule("NAME_PREFIX", {"dev": "DEV ", "prod": ""}, prefix=True)], "rules.yaml")


def test_secret_references_compare_modulo_the_prefix_rule() -> None:
    dev = _side("DEV ", "DEV_PAYMENTS_FORECAST_BACKEND_SECRET", "DEV_PAYMENTS_FORECAST_BACKEND_PASSWORD")
    prod = _side("", "PAYMENTS_FORECAST_BACKEND_SECRET", "PAYMENTS_FORECAST_BACKEND_PASSWORD")
    assert _compared(dev, prod, PREFIX) == []


def test_a_reference_of_another_name_still_differs() -> None:
    dev = _side("DEV ", "DEV_PAYMENTS_FORECAST_BACKEND_SECRET", "DEV_PAYMENTS_FORECAST_BACKEND_PASSWORD")
    prod = _side("", "OTHER_SECRET", "PAYMENTS_FORECAST_BACKEND_PASSWORD")
    assert _compared(dev, prod, PREFIX) == [
        ("endpoint:${NAME_PREFIX}Payments/Forecast", "systemDomainCredentialSecret")]


def test_a_write_only_secret_is_never_a_difference() -> None:
    dev = _side("", "PAYMENTS_FORECAST_BACKEND_SECRET", "ONE")
    prod = _side("", "PAYMENTS_FORECAST_BACKEND_SECRET", "TWO")
    del prod["services"][0]["endpoints"][0]["systemDomainAuthentication"]["password"]
    assert _compared(dev, prod, Rules()) == []
    dev["services"][0]["endpoints"][0]["systemDomainAuthentication"]["username"] = "v"
    assert _compared(dev, prod, Rules()) == [
        ("endpoint:Payments/Forecast", "systemDomainAuthentication.username")]
