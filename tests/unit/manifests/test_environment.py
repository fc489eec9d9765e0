"""What a manifest may read from the environment (a pull request changes every file of the
repository): the connection's credentials never, deny-listed names only into secret fields,
any other value into a field that is not secret only masked unless declared public from
outside; symbolic links out of the manifest folder refused."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from apimctl import sensitive
from apimctl.manifests import environment
from apimctl.manifests.pipeline import validate
from apimctl.manifests.variables import references

SERVICE = """\
services:
  - name: S1
    description: "{description}"
    qpsLimitOverall: {qps}
    endpoints:
      - name: E1
        requestPathAlias: "{alias}"
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainCredentialSecret: "{secret}"
domains: [example.com, example.net]
"""


def manifest(write: Callable[..., str], *, description: str = "plain", qps: str = "5",
             alias: str = "/s1", secret: str = "${BACKEND_SECRET}") -> str:
    return write(SERVICE.format(description=description, qps=qps, alias=alias, secret=secret))


ENV = {"BACKEND_SECRET": "backend-secret-value", "AUTH_PW": "hunter2-hunter2", "QPS": "17",
       "REGION": "eu-west-1", "GITHUB_TOKEN": "ghp_abcdefgh12345678", "APIMCTL_PASSWORD": "ci-password-1"}


def errors(path: str, env: dict[str, str]) -> list[str]:
    return [str(p) for p in validate([path], env=env).problems if p.severity == "error"]


def test_the_connection_credentials_are_never_substituted(manifests: Callable[..., str]) -> None:
    """By name (``APIMCTL_PASSWORD``) in any field, secret ones included, or by value: a
    variable holding a credential registered from a profile, a flag or the environment."""
    path = manifest(manifests, description="pw=${APIMCTL_PASSWORD}")
    found = errors(path, ENV)
    assert len(found) == 1 and "connection's own credentials" in found[0], found
    assert found[0].startswith(f"{path}:3:"), found  # file:line:col of the value
    assert "ci-password-1" not in found[0]
    sensitive.register_credentials("hunter2-hunter2")  # e.g. a profile's ${AUTH_PW}
    for where in ({"alias": "/s1/${AUTH_PW}"}, {"secret": "${AUTH_PW}"}):
        found = errors(manifest(manifests, **where), ENV)
        assert len(found) == 1 and "${AUTH_PW} holds the connection's own credentials" in found[0], found


@pytest.mark.parametrize("name", ["APIMCTL_TEST_TOKEN", "APIMCTL_CALL_TOKEN", "APIMCTL_CALL_OPERATOR_TOKEN",
                                  "APIMCTL_TEST_OPERATOR_TOKEN"])
def test_the_tokens_of_test_and_call_are_never_substituted(manifests: Callable[..., str], name: str) -> None:
    """Not even into a secret field: a test run applies the manifests of the pull request."""
    found = errors(manifest(manifests, secret=f"${{{name}}}"), {**ENV, name: "tok-of-the-pipeline"})
    assert len(found) == 1 and f"${{{name}}} holds the connection's own credentials" in found[0], found


def test_the_deny_list_holds_outside_secret_fields_whatever_is_public(manifests: Callable[..., str]) -> None:
    environment.configure(public=["*"])
    found = errors(manifest(manifests, description="${GITHUB_TOKEN}"), ENV)
    assert len(found) == 1 and "deny-list" in found[0] and "ghp_" not in found[0], found
    # in a secret field a reference is how a secret is written: allowed
    assert errors(manifest(manifests, secret="${GITHUB_TOKEN}"), ENV) == []


@pytest.mark.parametrize("name", ["MY_API_KEY", "db_password", "AWS_REGION", "SOME_TOKEN_X", "x_secret"])
def test_deny_listed_names(name: str) -> None:
    assert environment.denied(name)


@pytest.mark.parametrize("name", ["QPS", "REGION", "HOSTNAME_SUFFIX"])
def test_names_not_deny_listed(name: str) -> None:
    assert not environment.denied(name)


def test_environment_values_outside_secret_fields_are_masked(manifests: Callable[..., str]) -> None:
    path = manifest(manifests, description="region ${REGION}", alias="/s1/${AUTH_PW}", qps="${QPS}")
    result = validate([path], env=ENV)
    assert result.valid, result.problems
    assert {"eu-west-1", "hunter2-hunter2", "17"} <= sensitive.registered()
    assert "backend-secret-value" not in sensitive.registered()  # a secret field: the plan's to mask
    assert sensitive.masks(17) and sensitive.scrub("at /s1/hunter2-hunter2") == "at /s1/(sensitive)"


def test_public_variables_and_defaults_are_shown(manifests: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> None:
    environment.configure(public=["REG*, QPS"])
    path = manifest(manifests, description="${REGION} ${UNSET_HERE:-default-text}", qps="${QPS}")
    monkeypatch.delenv("UNSET_HERE", raising=False)
    assert validate([path], env=ENV).valid
    assert sensitive.registered() == frozenset()


def test_the_examples_still_validate() -> None:
    root = Path(__file__).resolve().parents[3] / "examples"
    env = {"FORECAST_BACKEND_SECRET": "s3cret-value", "PAYMENTS_BACKEND_KEY_SECRET": "k3y-value"}
    for folder in ("weather", "multi-team"):
        result = validate([str(root / folder)], env=env)
        assert result.valid, (folder, result.problems)


def test_references_are_parsed_with_their_defaults() -> None:
    assert references("a ${A} $${B} ${C:-x} ${bad name}") == [("A", None), ("C", "x")]


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("roles: [{name: Leaked, description: from outside}]\n")
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "roles.yaml").write_text("roles: [Partners]\n")
    (folder / "evil.yaml").symlink_to(outside)
    (folder / "inside.yaml").symlink_to(folder / "roles.yaml")  # inside: fine (read once)
    found = [str(p) for p in validate([str(folder)]).problems]
    assert len(found) == 1 and "symbolic link that leaves its folder" in found[0], found
    assert "Leaked" not in found[0]
    named = [str(p) for p in validate([os.path.join(folder, "evil.yaml")]).problems]
    assert "symbolic link that leaves its folder" in named[0]
    environment.configure(allow_symlinks_outside=True)
    assert validate([str(folder)]).valid


def test_render_masks_what_plan_masks(manifests: Callable[..., str]) -> None:
    """A secret field's value wherever it appears again, a field secret by its name, and an
    environment value read into a field that is not secret."""
    from apimctl.manifests.render import MASK, render_manifests

    text = SERVICE.format(description="copy: ${BACKEND_COPY}", qps="${QPS}", alias="/s1",
                          secret="${BACKEND_SECRET}")
    text = text.replace("        systemDomainCredentialSecret:", "        systemDomainAuthentication:\n"
                        "          type: httpBasic\n          username: svc\n          password: literal-pw-1\n"
                        "        systemDomainCredentialSecret:")
    environment.configure(public=["BACKEND_COPY"])  # shown... unless it equals a secret
    env = {**ENV, "BACKEND_COPY": ENV["BACKEND_SECRET"]}
    rendered = render_manifests([manifests(text)], env=env)
    service = rendered.doc["services"][0]
    endpoint = service["endpoints"][0]
    assert endpoint["systemDomainCredentialSecret"] == "${BACKEND_SECRET}"
    assert endpoint["systemDomainAuthentication"]["password"] == MASK
    assert service["description"] == MASK and service["qpsLimitOverall"] == MASK
    assert "backend-secret-value" not in str(rendered.doc) and "literal-pw-1" not in str(rendered.doc)
