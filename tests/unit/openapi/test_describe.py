"""``export --openapi``'s description of a service: what OpenAPI can say natively, and the
rest in the extensions, valid by the validator the import uses."""

from __future__ import annotations

from typing import Any

from openapi_spec_validator import validate

from apimctl.openapi import describe_service

SERVICE: dict[str, Any] = {
    "name": "Weather", "version": "2",
    "errorSets": [{"name": "JSON errors", "errorMessages": [
        {"id": "ERR_403_DEVELOPER_OVER_QPS", "status": "Too Many Requests", "responseBody": '{"e":1}'},
        {"id": "ERR_504_GATEWAY_TIMEOUT", "responseBody": '{"e":2}'}]}],
    "endpoints": [
        {"name": "Forecast", "requestPathAlias": "/v2/forecast/{city}", "trafficManagerDomain": "api.example.com",
         "publicDomains": ["api.example.com"], "supportedHttpMethods": ["get"],
         "apiKeyValueLocations": ["request-header"], "apiKeyValueLocationKey": "X-Key",
         "apiMethodDetectionLocations": ["request-header"], "apiMethodDetectionKey": "X-Operation-Id",
         "methods": [{"name": "getForecast"}], "cors": {"allDomainsEnabled": False,
                                                        "domainsAllowed": ["https://app.example.com"]}},
        {"name": "Alerts", "requestPathAlias": "/v2/alerts", "trafficManagerDomain": "tm.example.com",
         "publicDomains": ["alerts.example.com"], "supportedHttpMethods": ["get", "post"],
         "methods": [{"name": "list"}, {"name": "raise"}], "apiKeyValueLocations": ["request-path"],
         "apiKeyValueLocationKey": "2"},
    ]}


def test_the_document_says_what_openapi_can_and_the_extensions_the_rest() -> None:
    doc = describe_service(SERVICE)
    validate(doc)
    assert doc["info"] == {"title": "Weather", "version": "2"}
    assert doc["servers"] == [{"url": "https://api.example.com"}, {"url": "https://alerts.example.com"}]
    assert doc["x-apimctl-service"]["errorSets"][0]["name"] == "JSON errors"
    forecast = doc["paths"]["/v2/forecast/{city}"]
    assert forecast["parameters"][0]["name"] == "city"
    get = forecast["get"]
    assert get["operationId"] == "getForecast"  # one HTTP method, one method: they pair
    assert get["security"] == [{"header_X-Key": []}]
    assert doc["components"]["securitySchemes"]["header_X-Key"] == {"type": "apiKey", "in": "header", "name": "X-Key"}
    assert get["responses"]["200"]["headers"]["Access-Control-Allow-Origin"]["description"] == \
        "CORS: https://app.example.com allowed"
    assert get["responses"]["504"]["description"] == "Gateway Timeout"  # the catalog's status
    assert get["responses"]["403"]["content"]["application/json"]["examples"]["ERR_403_DEVELOPER_OVER_QPS"] == \
        {"value": '{"e":1}'}
    assert get["x-apimctl-endpoint"] == {  # its domains are not all the servers': written
        "name": "Forecast", "publicDomains": ["api.example.com"], "cors": {"allDomainsEnabled": False, "domainsAllowed": ["https://app.example.com"]}}
    alerts = doc["paths"]["/v2/alerts"]
    assert "operationId" not in alerts["get"] and "security" not in alerts["get"]
    assert alerts["post"]["x-apimctl-endpoint"] == {
        "name": "Alerts", "trafficManagerDomain": "tm.example.com", "publicDomains": ["alerts.example.com"],
        "methods": [{"name": "list"}, {"name": "raise"}], "apiKeyValueLocations": ["request-path"],
        "apiKeyValueLocationKey": "2"}
