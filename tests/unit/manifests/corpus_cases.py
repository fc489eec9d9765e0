"""The bad-input corpus of ``apimctl validate``: one case per entry, each with its exact output.

Each case writes ``files`` into an empty directory, runs the validator there on ``paths``
(with ``overlays`` and ``env``) and expects exactly the ``expected`` lines, in order, as the
text format prints them (``file:line:col: path: message``). ``test_pipeline_corpus.py`` runs
them; ``test_pipeline_properties.py`` reuses the valid base below.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DOMAINS = "domains: [example.com, example.net]\n"

ENDPOINT = """\
      - name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
"""

SERVICE = "services:\n  - name: Weather\n    endpoints:\n" + ENDPOINT


def service(extra_endpoint: str = "", extra_service: str = "") -> str:
    """The base service, with lines added to its endpoint and to the service itself."""
    return "services:\n  - name: Weather\n" + extra_service + "    endpoints:\n" + ENDPOINT + extra_endpoint


@dataclass
class Case:
    name: str
    files: dict[str, str | bytes]
    expected: list[str]
    paths: list[str] = field(default_factory=lambda: ["m.yaml"])
    overlays: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


NO_OBJECTS = ("no objects found (services, packages, roles, domains or scheduledMaintenanceEvents); "
              "refusing an empty configuration")
TOP = "services, packages, roles, domains, scheduledMaintenanceEvents, organizations, emailTemplateSets, settings"

CASES: list[Case] = [
    # --- reading files -----------------------------------------------------------------------
    Case("empty-file", {"m.yaml": ""}, [f"m.yaml: {NO_OBJECTS}"]),
    Case("only-comments", {"m.yaml": "# nothing yet\n---\n"}, [f"m.yaml: {NO_OBJECTS}"]),
    Case("only-settings", {"m.yaml": "settings: {prune: false}\n"}, [f"m.yaml: {NO_OBJECTS}"]),
    Case("empty-directory", {"d/readme.txt": "not a manifest"}, ["d: no *.yaml or *.yml files in this directory"],
         paths=["d"]),
    Case("missing-path", {}, ["nope.yaml: no such file or directory"], paths=["nope.yaml"]),
    Case("not-utf8", {"m.yaml": b"services:\n  - name: Caf\xe9\n"},
         ["m.yaml:2:14: not UTF-8 text (byte 0xe9); manifests must be UTF-8 encoded"]),
    Case("binary", {"m.yaml": b"\x00\x01\x02\x03 binary junk"},
         ["m.yaml:1:1: invalid YAML: control character #x0000 is not allowed (is this a binary file?)"]),
    Case("tab-indent", {"m.yaml": "services:\n\t- name: Weather\n"},
         ['m.yaml:2:1: invalid YAML: found character that cannot start any token (a tab: YAML is indented with spaces)']),
    Case("unclosed-flow", {"m.yaml": "services: [{name: Weather\n"},
         ["m.yaml:2:1: invalid YAML: did not find expected ',' or '}' "
          "(while parsing a flow mapping at line 1, column 12)"]),
    Case("bad-indentation", {"m.yaml": "services:\n  - name: Weather\n   version: '2'\n"},
         ["m.yaml:3:4: invalid YAML: did not find expected '-' indicator "
          "(while parsing a block collection at line 2, column 3)"]),
    Case("duplicate-top-level-key", {"m.yaml": DOMAINS + SERVICE + "services: []\n"},
         ["m.yaml:10:1: services: duplicate key 'services' (first written at line 2)"]),
    Case("duplicate-nested-key", {"m.yaml": DOMAINS + service("        requestPathAlias: /again\n")},
         ["m.yaml:10:9: services[0].endpoints[0].requestPathAlias: duplicate key 'requestPathAlias' (first written at line 6)"]),
    Case("root-is-list", {"m.yaml": "- name: Weather\n- name: Other\n"},
         [f"m.yaml:1:1: a manifest document must be a mapping of top-level keys ({TOP}), not a list"]),
    Case("root-is-scalar", {"m.yaml": "hello\n"},
         [f"m.yaml:1:1: a manifest document must be a mapping of top-level keys ({TOP}), not a single value"]),
    Case("alias-bomb", {"m.yaml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                        + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
                                  for p, c in zip("abcdefgh", "bcdefghi", strict=True))
                        + "services: [*i]\n"},
         ['m.yaml:5:36: e[7]: YAML aliases expand to more than 100000 nodes; refusing to expand them']),
    Case("deep-nesting", {"m.yaml": "settings:\n  prune: " + "[" * 100 + "]" * 100 + "\n"},
         ['m.yaml:2:3: settings.prune: must be boolean or object',
         'm.yaml:2:73: settings.prune[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 64 levels deep']),
    Case("undefined-alias", {"m.yaml": "services: [*nowhere]\n"},
         ['m.yaml:1:12: services[0]: must be object',
         'm.yaml:1:12: services[0]: undefined YAML alias *nowhere']),
    Case("unsupported-tag", {"m.yaml": DOMAINS + "services:\n  - name: !vault weather\n"},
         ["m.yaml:3:11: services[0].name: unsupported YAML tag !vault"]),
    Case("python-tag", {"m.yaml": "services:\n  - !!python/object:os.system {name: x}\n"},
         ["m.yaml:2:5: services[0]: unsupported YAML tag tag:yaml.org,2002:python/object:os.system"]),
    Case("complex-key", {"m.yaml": DOMAINS + "? [a, b]\n: c\n" + SERVICE},
         ["m.yaml:2:3: mapping keys must be plain text, not a list, mapping or alias"]),
    Case("merge-key-scalar", {"m.yaml": DOMAINS + "services:\n  - name: Weather\n    <<: nothing\n"},
         ["m.yaml:5:1: services[0]: a merge key (<<) needs a mapping or a list of mappings"]),
    Case("multi-document-index", {"m.yaml": DOMAINS + "---\n" + SERVICE + "---\nservices:\n  - name: Other\n    qpsLimitOverall: fast\n"},
         ['m.yaml:14:5: services[1].qpsLimitOverall: must be integer or null']),
    Case("list-where-map-belongs", {"m.yaml": DOMAINS + service("        cors: [maxAge, 60]\n")},
         ['m.yaml:10:9: services[0].endpoints[0].cors: must be object or null']),
    Case("map-where-list-belongs", {"m.yaml": DOMAINS + "services: {name: Weather}\n"},
         ["m.yaml:2:1: services: must be array"]),
    Case("null-top-level", {"m.yaml": DOMAINS + "services:\n"}, ["m.yaml:2:1: services: must be array"]),
    Case("scalar-item", {"m.yaml": DOMAINS + "services: [Weather]\n"}, ["m.yaml:2:12: services[0]: must be object"]),
    # --- schema --------------------------------------------------------------------------------
    Case("unknown-top-level-key", {"m.yaml": DOMAINS + "servics: []\n" + SERVICE},
         ["m.yaml:2:1: servics: unknown field 'servics' (did you mean 'services'?)"]),
    Case("unknown-endpoint-field", {"m.yaml": DOMAINS + service("        requestPathAlais: /x\n")},
         ["m.yaml:10:9: services[0].endpoints[0].requestPathAlais: unknown field 'requestPathAlais' (did you mean 'requestPathAlias'?)"]),
    Case("unknown-field-no-hint", {"m.yaml": DOMAINS + service(extra_service="    colour: blue\n")},
         ["m.yaml:4:5: services[0].colour: unknown field 'colour'"]),
    Case("missing-required", {"m.yaml": DOMAINS + "services:\n  - name: Weather\n    endpoints:\n      - name: Forecast\n"
                              "        trafficManagerDomain: api.example.com\n"},
         ["m.yaml:5:9: services[0].endpoints[0]: missing required field 'requestPathAlias'"]),
    Case("missing-name", {"m.yaml": DOMAINS + "services:\n  - version: '2'\n"},
         ["m.yaml:3:5: services[0]: missing required field 'name'"]),
    Case("type-integer", {"m.yaml": DOMAINS + service("        cors: {maxAge: soon}\n")},
         ['m.yaml:10:16: services[0].endpoints[0].cors.maxAge: must be integer']),
    Case("type-boolean-quoted", {"m.yaml": DOMAINS + service(extra_service="    rfc3986Encode: 'yes'\n")},
         ["m.yaml:4:5: services[0].rfc3986Encode: must be boolean"]),
    Case("type-string-number", {"m.yaml": DOMAINS + service(extra_service="    version: 2\n")},
         ["m.yaml:4:5: services[0].version: must be string"]),
    Case("enum-array", {"m.yaml": DOMAINS + service("        supportedHttpMethods: [get, fetch]\n")},
         ['m.yaml:10:37: services[0].endpoints[0].supportedHttpMethods[1]: must be one of: get, post, put, delete, head, options, patch (got "fetch")']),
    Case("integer-enum", {"m.yaml": DOMAINS + service("        connectionTimeoutForSystemDomainRequest: 3\n")},
         ['m.yaml:10:9: services[0].endpoints[0].connectionTimeoutForSystemDomainRequest: must be one of: 2, 5, 10, 20, 30, 45, 60 (got 3)']),
    Case("unique-items", {"m.yaml": DOMAINS + service("        supportedHttpMethods: [get, post, get]\n")},
         ['m.yaml:10:9: services[0].endpoints[0].supportedHttpMethods: lists "get" more than once']),
    Case("minimum", {"m.yaml": DOMAINS + service(extra_service="    qpsLimitOverall: -1\n")},
         ["m.yaml:4:5: services[0].qpsLimitOverall: must be at least 0 (got -1)"]),
    Case("maximum", {"m.yaml": DOMAINS + "packages:\n  - name: P\n    nearQuotaThreshold: 120\n"},
         ["m.yaml:4:5: packages[0].nearQuotaThreshold: must be at most 100 (got 120)"]),
    Case("empty-name", {"m.yaml": DOMAINS + "packages:\n  - name: ''\n"},
         ["m.yaml:3:5: packages[0].name: must not be empty"]),
    Case("role-object-unknown-field", {"m.yaml": "roles:\n  - Partners\n  - {name: Internal, colour: red}\n"},
         ["m.yaml:3:22: roles[1].colour: unknown field 'colour'"]),
    Case("role-number", {"m.yaml": "roles:\n  - 42\n"}, ["m.yaml:2:5: roles[0]: must be string or object"]),
    Case("domain-with-scheme", {"m.yaml": "domains:\n  - https://example.com\n"},
         ["m.yaml:2:5: domains[0]: must be a host name (no scheme, port, path or spaces) "
          "(got \"https://example.com\")"]),
    Case("error-message-id", {"m.yaml": DOMAINS + service(extra_service="    errorSets:\n      - name: E\n"
                                                          "        errorMessages: [{id: ERR_418_TEAPOT}]\n")},
         ['m.yaml:6:26: services[0].errorSets[0].errorMessages[0].id: must be one of: ERR_400_BAD_REQUEST, ERR_403_NOT_AUTHORIZED, ERR_403_DEVELOPER_INACTIVE, ERR_403_DEVELOPER_OVER_QPS, ERR_403_DEVELOPER_OVER_RATE, ERR_403_DEVELOPER_UNKNOWN_REFERER, ERR_403_SERVICE_OVER_QPS, ERR_403_SERVICE_REQUIRES_SSL, ERR_414_REQUEST_URI_TOO_LONG, ERR_502_BAD_GATEWAY, ERR_503_SERVICE_UNAVAILABLE, ERR_504_GATEWAY_TIMEOUT, ERR_400_UNSUPPORTED_PARAMETER, ERR_400_UNSUPPORTED_SIGNATURE_METHOD, ERR_400_MISSING_REQUIRED_CONSUMER_KEY, ERR_400_MISSING_REQUIRED_REQUEST_TOKEN, ERR_400_MISSING_REQUIRED_ACCESS_TOKEN, ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER, ERR_401_TIMESTAMP_IS_INVALID, ERR_401_INVALID_SIGNATURE, ERR_401_INVALID_OR_EXPIRED_TOKEN, ERR_401_INVALID_CONSUMER_KEY, ERR_401_INVALID_NONCE (got "ERR_418_TEAPOT")']),
    Case("empty-error-sets", {"m.yaml": DOMAINS + service(extra_service="    errorSets: []\n")},
         ["m.yaml:4:5: services[0].errorSets: must not be empty"]),
    Case("plan-period", {"m.yaml": "packages:\n  - name: P\n    plans:\n      - {name: Gold, rateLimitPeriod: week}\n"},
         ['m.yaml:4:22: packages[0].plans[0].rateLimitPeriod: must be one of: minute, hour, day, month (got "week")']),
    Case("datetime-format", {"m.yaml": "scheduledMaintenanceEvents:\n  - name: W\n    startDateTime: tomorrow\n"
                             "    endDateTime: '2026-12-01T04:00:00Z'\n"},
         ["m.yaml:3:5: scheduledMaintenanceEvents[0].startDateTime: must be an ISO 8601 datetime with a time "
          "zone, e.g. \"2026-12-01T02:00:00Z\" (got \"tomorrow\")"]),
    Case("datetime-no-zone", {"m.yaml": "scheduledMaintenanceEvents:\n  - name: W\n    startDateTime: '2026-12-01T02:00:00'\n"
                              "    endDateTime: '2026-12-01T04:00:00Z'\n"},
         ["m.yaml:3:5: scheduledMaintenanceEvents[0].startDateTime: must be an ISO 8601 datetime with a time "
          "zone, e.g. \"2026-12-01T02:00:00Z\" (got \"2026-12-01T02:00:00\")"]),
    Case("datetime-month-13", {"m.yaml": "scheduledMaintenanceEvents:\n  - name: W\n    startDateTime: '2026-13-01T02:00:00Z'\n"
                               "    endDateTime: '2026-12-01T04:00:00Z'\n"},
         ["m.yaml:3:5: scheduledMaintenanceEvents[0].startDateTime: not a valid datetime: month must be in 1..12"]),
    Case("prune-invalid", {"m.yaml": DOMAINS + "settings: {prune: maybe}\n"},
         ["m.yaml:2:12: settings.prune: must be boolean or object"]),
    Case("prune-kind-invalid", {"m.yaml": DOMAINS + "settings: {prune: {services: 3, members: true}}\n"},
         ['m.yaml:2:20: settings.prune.services: must be boolean or array',
         "m.yaml:2:33: settings.prune.members: unknown field 'members'"]),
    Case("ignore-target", {"m.yaml": DOMAINS + "settings:\n  ignore:\n    - {target: 'widget:Weather', reason: x}\n"},
         ["m.yaml:4:8: settings.ignore[0].target: must be KIND:KEY:FIELD_PATH, KIND one of service, "
          "endpoint, errorSet, package, plan, role, domain, maintenanceEvent (got \"widget:Weather\")"]),
    Case("ignore-target-without-field", {"m.yaml": DOMAINS + "settings:\n  ignore:\n    - {target: 'role:R', reason: x}\n"},
         ["m.yaml:4:8: settings.ignore[0].target: must be KIND:KEY:FIELD_PATH, KIND one of service, "
          "endpoint, errorSet, package, plan, role, domain, maintenanceEvent (got \"role:R\")"]),
    Case("ignore-without-reason", {"m.yaml": DOMAINS + "settings:\n  ignore:\n    - {target: 'service:Weather:description'}\n"},
         ["m.yaml:4:7: settings.ignore[0]: missing required field 'reason'"]),
    Case("sda-type", {"m.yaml": DOMAINS + service("        systemDomainAuthentication: {type: digest}\n")},
         ['m.yaml:10:38: services[0].endpoints[0].systemDomainAuthentication.type: must be one of: httpBasic, clientSslCert (got "digest")']),
    Case("oauth-unknown-field", {"m.yaml": DOMAINS + service(extra_service="    securityProfile:\n"
                                                             "      oauth: {accessTokenTTL: 10}\n")},
         ["m.yaml:5:15: services[0].securityProfile.oauth.accessTokenTTL: unknown field 'accessTokenTTL' "
          "(did you mean 'accessTokenTtl'?)"]),
    Case("plan-service-endpoints-not-a-list", {"m.yaml": DOMAINS + SERVICE + "packages:\n  - name: P\n    plans:\n      - name: Gold\n"
                                               "        services: [{name: Weather, endpoints: true}]\n"},
         ["m.yaml:14:36: packages[0].plans[0].services[0].endpoints: must be array"]),
    Case("plan-endpoint-object", {"m.yaml": "packages:\n  - name: P\n    plans:\n      - name: Gold\n"
                                  "        services: [{name: W, endpoints: [{name: E, methods: get}]}]\n"},
         ["m.yaml:5:21: packages[0].plans[0].services[0].name: unknown service 'W'; declare it under services",
         'm.yaml:5:52: packages[0].plans[0].services[0].endpoints[0].methods: must be array']),
    # --- identities across files ------------------------------------------------------------------
    Case("duplicate-service-across-files", {"a.yaml": DOMAINS + SERVICE, "b.yaml": "services:\n  - name: Weather\n"},
         ["a.yaml:3:5: services[0].name: duplicate service 'Weather': also at b.yaml:2:5",
          "b.yaml:2:5: services[0].name: duplicate service 'Weather': also at a.yaml:3:5"], paths=["."]),
    Case("duplicate-endpoint", {"m.yaml": DOMAINS + service(ENDPOINT.replace("/v2/forecast", "/v2/other"))},
         ["m.yaml:5:9: services[0].endpoints[0].name: duplicate endpoint 'Forecast': also at m.yaml:10:9",
          "m.yaml:10:9: services[0].endpoints[1].name: duplicate endpoint 'Forecast': also at m.yaml:5:9"]),
    Case("duplicate-role-shorthand", {"m.yaml": "roles:\n  - Partners\n  - {name: Partners}\n"},
         ["m.yaml:2:5: roles[0]: duplicate role 'Partners': also at m.yaml:3:6",
          "m.yaml:3:6: roles[1].name: duplicate role 'Partners': also at m.yaml:2:5"]),
    Case("duplicate-domain-case", {"m.yaml": "domains: [example.com, Example.COM]\n"},
         ["m.yaml:1:11: domains[0]: duplicate domain 'example.com': also at m.yaml:1:24",
          "m.yaml:1:24: domains[1]: duplicate domain 'example.com': also at m.yaml:1:11"]),
    Case("duplicate-error-message", {"m.yaml": DOMAINS + service(extra_service="    errorSets:\n      - name: E\n"
                                     "        errorMessages:\n          - {id: ERR_400_BAD_REQUEST}\n"
                                     "          - {id: ERR_400_BAD_REQUEST, status: Bad}\n")},
         ["m.yaml:7:14: services[0].errorSets[0].errorMessages[0].id: duplicate error message 'ERR_400_BAD_REQUEST': also at m.yaml:8:14",
          "m.yaml:8:14: services[0].errorSets[0].errorMessages[1].id: duplicate error message 'ERR_400_BAD_REQUEST': also at m.yaml:7:14"]),
    Case("duplicate-plan", {"m.yaml": "packages:\n  - name: P\n    plans: [{name: Gold}, {name: Gold}]\n"},
         ["m.yaml:3:14: packages[0].plans[0].name: duplicate plan 'Gold': also at m.yaml:3:28",
          "m.yaml:3:28: packages[0].plans[1].name: duplicate plan 'Gold': also at m.yaml:3:14"]),
    Case("settings-in-two-files", {"a.yaml": DOMAINS + "settings: {prune: true}\n", "b.yaml": "settings: {prune: false}\n"},
         ["a.yaml:2:12: settings.prune: settings.prune is also set at b.yaml:1:12",
          "b.yaml:1:12: settings.prune: settings.prune is also set at a.yaml:2:12"], paths=["a.yaml", "b.yaml"]),
    Case("duplicate-id", {"m.yaml": "roles:\n  - {name: A, id: r1}\n  - {name: B, id: r1}\n"},
         ["m.yaml:2:15: roles[0].id: id 'r1' is pinned by two roles: also at m.yaml:3:15",
         "m.yaml:3:15: roles[1].id: id 'r1' is pinned by two roles: also at m.yaml:2:15"]),
    Case("previous-names-own-name", {"m.yaml": "roles:\n  - {name: A, previousNames: [A]}\n"},
         ["m.yaml:2:31: roles[0].previousNames[0]: previousNames lists the object's own name"]),
    Case("previous-name-taken", {"m.yaml": "roles:\n  - {name: A, previousNames: [B]}\n  - B\n"},
         ["m.yaml:2:31: roles[0].previousNames[0]: previous name 'B' is the name of another role (at m.yaml:3:5)"]),
    Case("previous-name-twice", {"m.yaml": "roles:\n  - {name: A, previousNames: [Old]}\n  - {name: B, previousNames: [Old]}\n"},
         ["m.yaml:2:31: roles[0].previousNames[0]: previous name 'Old' is claimed by two roles: also at m.yaml:3:31",
         "m.yaml:3:31: roles[1].previousNames[0]: previous name 'Old' is claimed by two roles: also at m.yaml:2:31"]),
    # --- references and rules -----------------------------------------------------------------------
    Case("unknown-error-set", {"m.yaml": DOMAINS + service("        errorSet: XML errors\n",
                                                           "    errorSets: [{name: JSON errors}]\n")},
         ["m.yaml:11:9: services[0].endpoints[0].errorSet: unknown error set 'XML errors' (this service declares: JSON errors)"]),
    Case("unknown-plan-service", {"m.yaml": DOMAINS + SERVICE + "packages:\n  - name: P\n    plans:\n"
                                  "      - {name: Gold, services: [{name: Wether}]}\n"},
         ["m.yaml:13:34: packages[0].plans[0].services[0].name: unknown service 'Wether'; declare it under services (did you mean 'Weather'?)"]),
    Case("unknown-plan-endpoint", {"m.yaml": DOMAINS + SERVICE + "packages:\n  - name: P\n    plans:\n"
                                   "      - {name: Gold, services: [{name: Weather, endpoints: [Forecast, Alerts]}]}\n"},
         ["m.yaml:13:71: packages[0].plans[0].services[0].endpoints[1]: unknown endpoint 'Weather/Alerts'; declare it under the service's endpoints"]),
    Case("unknown-plan-method", {"m.yaml": DOMAINS + service("        methods: [{name: getForecast}]\n")
                                 + "packages:\n  - name: P\n    plans:\n      - name: Gold\n        services:\n"
                                 "          - name: Weather\n            endpoints: [{name: Forecast, methods: [getForecast, getAlerts]}]\n"},
         ["m.yaml:17:65: packages[0].plans[0].services[0].endpoints[0].methods[1]: unknown method 'getAlerts' of endpoint 'Weather/Forecast'"]),
    Case("unknown-service-role", {"m.yaml": DOMAINS + "roles: [Partners]\n" + service(extra_service="    roles: [Partners, Staff]\n")},
         ["m.yaml:5:23: services[0].roles[1]: unknown role 'Staff'; declare it under roles"]),
    Case("unknown-plan-role", {"m.yaml": "packages:\n  - name: P\n    plans:\n      - {name: Gold, roles: [Partners]}\n"},
         ["m.yaml:4:30: packages[0].plans[0].roles[0]: unknown role 'Partners'; declare it under roles"]),
    Case("maintenance-unknown-refs", {"m.yaml": DOMAINS + SERVICE + "scheduledMaintenanceEvents:\n  - name: W\n"
                                      "    startDateTime: '2026-12-01T02:00:00Z'\n    endDateTime: '2026-12-01T04:00:00Z'\n"
                                      "    endpoints:\n      - {service: Weather, endpoint: Alerts}\n"
                                      "      - {service: Climate, endpoint: Forecast}\n"},
         ["m.yaml:15:28: scheduledMaintenanceEvents[0].endpoints[0].endpoint: unknown endpoint 'Weather/Alerts'",
         "m.yaml:16:10: scheduledMaintenanceEvents[0].endpoints[1].service: unknown service 'Climate'; declare it under services"]),
    Case("maintenance-end-before-start", {"m.yaml": "scheduledMaintenanceEvents:\n  - name: W\n"
                                          "    startDateTime: '2026-12-01T04:00:00Z'\n"
                                          "    endDateTime: '2026-12-01T05:00:00.000+0200'\n"},
         ["m.yaml:4:5: scheduledMaintenanceEvents[0].endDateTime: must be after startDateTime (2026-12-01T04:00:00Z)"]),
    Case("path-alias-clash", {"m.yaml": DOMAINS + SERVICE + "  - name: Climate\n    endpoints:\n"
                              + ENDPOINT.replace("Forecast", "Outlook")},
         ["m.yaml:6:9: services[0].endpoints[0].requestPathAlias: GET /v2/forecast on api.example.com is claimed by two endpoints: also at m.yaml:13:9",
         "m.yaml:13:9: services[1].endpoints[0].requestPathAlias: GET /v2/forecast on api.example.com is claimed by two endpoints: also at m.yaml:6:9"]),
    # real areas let endpoints share a path on a domain when their methods differ (§10.10.1)
    Case("path-shared-by-other-methods", {"m.yaml": DOMAINS + SERVICE + "  - name: Climate\n    endpoints:\n"
                              + ENDPOINT.replace("Forecast", "Outlook").replace("requestPathAlias", "supportedHttpMethods: [post, put]\n        requestPathAlias")},
         []),
    Case("path-shared-in-a-spec-area", {"m.yaml": DOMAINS + "settings: {dialect: spec}\n" + SERVICE + "  - name: Climate\n    endpoints:\n"
                              + ENDPOINT.replace("Forecast", "Outlook").replace("requestPathAlias", "supportedHttpMethods: [post]\n        requestPathAlias")},
         ["m.yaml:7:9: services[0].endpoints[0].requestPathAlias: requestPathAlias '/v2/forecast' on api.example.com is used by two endpoints: also at m.yaml:15:9",
          "m.yaml:15:9: services[1].endpoints[0].requestPathAlias: requestPathAlias '/v2/forecast' on api.example.com is used by two endpoints: also at m.yaml:7:9"]),
    Case("domain-not-declared", {"m.yaml": "domains: [example.com]\n" + SERVICE},
         ['m.yaml:9:25: services[0].endpoints[0].systemDomains[0]: backend.example.net is not under any declared domain (declared: example.com)']),
    Case("domains-not-managed", {"m.yaml": SERVICE},
         ['m.yaml:7:25: services[0].endpoints[0].publicDomains[0]: warning: domains are not managed in these manifests: api.example.com must be under an active domain of the area',
         'm.yaml:8:25: services[0].endpoints[0].systemDomains[0]: warning: domains are not managed in these manifests: backend.example.net must be under an active domain of the area']),
    Case("suffix-is-not-a-domain", {"m.yaml": "domains: [ample.com, example.net]\n" + SERVICE},
         ['m.yaml:8:25: services[0].endpoints[0].publicDomains[0]: api.example.com is not under any declared domain (declared: ample.com, example.net)']),
    Case("oauth-with-api-key-locations", {"m.yaml": DOMAINS + service("        requestAuthenticationType: oauth\n"
                                                                      "        apiKeyValueLocations: [request-header]\n")},
         ['m.yaml:11:9: services[0].endpoints[0].apiKeyValueLocations: not allowed when requestAuthenticationType is oauth']),
    Case("api-key-with-grant-types", {"m.yaml": DOMAINS + service("        oauthGrantTypes: [password]\n")},
         ['m.yaml:10:9: services[0].endpoints[0].oauthGrantTypes: only allowed when requestAuthenticationType is oauth']),
    Case("oauth-without-profile", {"m.yaml": DOMAINS + service("        requestAuthenticationType: oauth\n",
                                                               "    securityProfile: {oauth: null}\n")},
         ["m.yaml:11:9: services[0].endpoints[0].requestAuthenticationType: oauth needs the service's OAuth settings, but its securityProfile.oauth is null"]),
    Case("oauth-grant-not-enabled", {"m.yaml": DOMAINS + service("        requestAuthenticationType: oauth\n"
                                                                 "        oauthGrantTypes: [password, implicit]\n",
                                                                 "    securityProfile: {oauth: {grantTypes: [password]}}\n")},
         ["m.yaml:12:37: services[0].endpoints[0].oauthGrantTypes[1]: grant type 'implicit' is not enabled in the service's securityProfile.oauth.grantTypes"]),
    # --- variables and secrets --------------------------------------------------------------------------
    Case("missing-variable", {"m.yaml": DOMAINS + service("        outboundRequestTargetPath: /api/${API_VERSION}/forecast\n")},
         ['m.yaml:10:41: services[0].endpoints[0].outboundRequestTargetPath: environment variable API_VERSION is not set (write ${API_VERSION:-default} to give a default)']),
    Case("missing-variable-quoted", {"m.yaml": DOMAINS + service("        outboundRequestTargetPath: '/v${V}'\n")},
         ['m.yaml:10:39: services[0].endpoints[0].outboundRequestTargetPath: environment variable V is not set (write ${V:-default} to give a default)']),
    Case("variable-quoted-not-integer", {"m.yaml": DOMAINS + service(extra_service="    qpsLimitOverall: '${QPS}'\n")},
         ["m.yaml:4:5: services[0].qpsLimitOverall: must be integer or null"], env={"QPS": "10"}),
    Case("variable-not-a-number", {"m.yaml": DOMAINS + service(extra_service="    qpsLimitOverall: ${QPS}\n")},
         ["m.yaml:4:5: services[0].qpsLimitOverall: must be integer or null"], env={"QPS": "ten"}),
    Case("unterminated-variable", {"m.yaml": DOMAINS + service("        outboundRequestTargetPath: /a/${OOPS\n")},
         ['m.yaml:10:39: services[0].endpoints[0].outboundRequestTargetPath: unterminated ${...}: add the closing } (write $${ for a literal ${)']),
    Case("invalid-variable-name", {"m.yaml": DOMAINS + service("        outboundRequestTargetPath: ${1st}\n")},
         ['m.yaml:10:36: services[0].endpoints[0].outboundRequestTargetPath: invalid variable reference ${1st}: expected ${NAME} or ${NAME:-default}']),
    Case("literal-secret", {"m.yaml": DOMAINS + service("        systemDomainCredentialSecret: hunter2\n"
                                                        "        systemDomainAuthentication: {type: httpBasic, username: u, password: pw}\n")},
         ['m.yaml:10:9: services[0].endpoints[0].systemDomainCredentialSecret: warning: secret written as a literal value; write it as ${ENV_VAR} so it stays out of version control',
         'm.yaml:11:68: services[0].endpoints[0].systemDomainAuthentication.password: warning: secret written as a literal value; write it as ${ENV_VAR} so it stays out of version control']),
    Case("secret-literal-default", {"m.yaml": DOMAINS + service("        systemDomainCredentialSecret: ${S:-hunter2}\n"
                                                                "        systemDomainAuthentication: {type: httpBasic, "
                                                                "password: '${P:-}'}\n")},
         ["m.yaml:10:9: services[0].endpoints[0].systemDomainCredentialSecret: warning: secret has a literal default "
          "in ${NAME:-default}; leave the default empty (${NAME:-}) so the value stays out of version control"]),
    Case("missing-secret-variable", {"m.yaml": DOMAINS + service("        systemDomainCredentialSecret: ${BACKEND_SECRET}\n")},
         ['m.yaml:10:39: services[0].endpoints[0].systemDomainCredentialSecret: environment variable BACKEND_SECRET is not set (write ${BACKEND_SECRET:-default} to give a default)']),
    # --- overlays ---------------------------------------------------------------------------------------
    Case("overlay-unknown-service", {"m.yaml": DOMAINS + SERVICE, "prod/o.yaml": "services:\n  - name: Climate\n    version: '3'\n"},
         ["prod/o.yaml:2:5: services[0]: overlay names service 'Climate', which the base manifests do not declare"],
         overlays=["prod"]),
    Case("overlay-unknown-endpoint", {"m.yaml": DOMAINS + SERVICE,
                                      "prod/o.yaml": "services:\n  - name: Weather\n    endpoints:\n      - {name: Alerts, requestPathAlias: /a}\n"},
         ["prod/o.yaml:4:9: services[0].endpoints[0]: overlay names endpoint 'Alerts', which the base manifests do not declare"],
         overlays=["prod"]),
    Case("overlay-schema-error", {"m.yaml": DOMAINS + SERVICE,
                                  "prod/o.yaml": "services:\n  - name: Weather\n    endpoints:\n      - {name: Forecast, cors: {maxAge: long}}\n"},
         ['prod/o.yaml:4:33: services[0].endpoints[0].cors.maxAge: must be integer'], overlays=["prod"]),
    Case("overlay-without-name", {"m.yaml": DOMAINS + SERVICE, "prod/o.yaml": "services:\n  - version: '3'\n"},
         ["prod/o.yaml:2:5: services[0]: an overlay object needs its name to say which object it changes"],
         overlays=["prod"]),
    Case("overlay-bad-yaml", {"m.yaml": DOMAINS + SERVICE, "prod/o.yaml": "services: [\n"},
         ["prod/o.yaml:2:1: invalid YAML: did not find expected node content"], overlays=["prod"]),
    # an overlaid value is shown with the indices it has in the overlay file, not in the base
    Case("overlay-path-in-overlay-file", {"a.yaml": DOMAINS + SERVICE,
                                          "b.yaml": "services:\n  - name: Climate\n    errorSets: [{name: E}]\n"
                                          "    endpoints:\n" + ENDPOINT.replace("/v2/", "/c/")
                                          + ENDPOINT.replace("Forecast", "Alerts").replace("/v2/forecast", "/c/alerts"),
                                          "prod/o.yaml": "services:\n  - name: Weather\n    description: prod\n"
                                          "  - name: Climate\n    endpoints:\n      - name: Alerts\n"
                                          "        errorSet: Nope\n        cors: {maxAge: -5}\n"},
         ["prod/o.yaml:7:9: services[1].endpoints[0].errorSet: unknown error set 'Nope' (this service declares: E)",
          "prod/o.yaml:8:16: services[1].endpoints[0].cors.maxAge: must be at least 0 (got -5)"],
         paths=["a.yaml", "b.yaml"], overlays=["prod"]),
    # the overlay's name only selects the object: a duplicate stays reported where the base wrote it
    Case("overlay-duplicate-stays-in-base", {"a.yaml": "roles: [{name: Ops}]\n", "b.yaml": "roles: [{name: Ops}]\n",
                                             "prod/o.yaml": "roles:\n  - {name: Ops, description: prod}\n"},
         ["a.yaml:1:10: roles[0].name: duplicate role 'Ops': also at b.yaml:1:10",
          "b.yaml:1:10: roles[0].name: duplicate role 'Ops': also at a.yaml:1:10"],
         paths=["a.yaml", "b.yaml"], overlays=["prod"]),
    # an omitted nested list is left alone (live objects may be there): its names are not checked
    Case("references-into-unmanaged-lists", {"m.yaml": DOMAINS + "services:\n  - name: Legacy\n" + SERVICE[10:]
                                             + "packages:\n  - name: P\n    plans:\n      - name: Gold\n"
                                             "        services:\n          - {name: Legacy, endpoints: [Old]}\n"
                                             "          - name: Weather\n"
                                             "            endpoints: [{name: Forecast, methods: [getForecast]}]\n"
                                             "scheduledMaintenanceEvents:\n  - name: W\n"
                                             "    startDateTime: '2026-12-01T02:00:00Z'\n"
                                             "    endDateTime: '2026-12-01T04:00:00Z'\n"
                                             "    endpoints: [{service: Legacy, endpoint: Old}, {service: Weather, endpoint: Old}]\n"},
         ["m.yaml:23:70: scheduledMaintenanceEvents[0].endpoints[1].endpoint: unknown endpoint 'Weather/Old'"]),
    Case("computed-fields-from-an-api-response", {"m.yaml": DOMAINS + service(
        "        scheduledMaintenanceEvent: null\n",
        "    revisionNumber: 3\n    errorSets:\n      - {name: E, errorMessages: [{id: ERR_400_BAD_REQUEST, code: 400}]}\n")},
         ["m.yaml:4:5: services[0].revisionNumber: 'revisionNumber' is set by the platform and cannot be written; remove it",
          "m.yaml:6:61: services[0].errorSets[0].errorMessages[0].code: 'code' is set by the platform and cannot be "
          "written; remove it",
          "m.yaml:13:9: services[0].endpoints[0].scheduledMaintenanceEvent: 'scheduledMaintenanceEvent' is set by the "
          "platform and cannot be written; remove it"]),
    Case("utf16-file", {"m.yaml": "services:\n  - name: Weather\n".encode("utf-16")},
         ["m.yaml:1:1: UTF-16 text (as some Windows editors and shells write it); manifests must be UTF-8 "
          "encoded: save the file as UTF-8"]),
    Case("unquoted-reference-in-flow", {"m.yaml": DOMAINS + service("        systemDomainAuthentication: "
                                                                    "{type: httpBasic, password: ${PW}}\n")},
         ["m.yaml:10:66: invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping at "
          "line 10, column 37) (inside [...] or {...}, quote a value that holds ${...})"], env={"PW": "pw"}),
    Case("emailTemplateSetId-null-is-valid", {"m.yaml": "packages:\n  - name: P\n    plans:\n"
                                              "      - {name: Gold, emailTemplateSetId: null}\n"
                                              "      - {name: Silver, emailTemplateSetId: '7'}\n"},
         ["m.yaml:5:24: packages[0].plans[1].emailTemplateSetId: must be integer or null"]),
]
