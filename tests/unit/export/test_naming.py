"""Names an export chooses: kinds with what they refer to, secret variables, service files.
Every name derives from the object's own names, never from a counter or listing order."""

from __future__ import annotations

import re

import pytest

from apimctl.errors import ApimctlError
from apimctl.export.naming import TOP_ORDER, resolve_kinds, service_file_names, variable_names


def test_every_writable_kind_when_none_is_asked_for() -> None:
    chosen, added = resolve_kinds(None)
    assert added == [] and resolve_kinds([]) == (chosen, [])
    assert {"domains", "roles", "services", "packages"} <= set(chosen)
    assert chosen == [k for k in TOP_ORDER if k in chosen]  # in the manifest's order


def test_kinds_by_manifest_key_or_name_with_what_they_refer_to() -> None:
    chosen, added = resolve_kinds(["packages"])
    assert {"packages", "services", "roles"} <= set(chosen)
    assert "packages" not in added and {"services", "roles"} <= set(added)
    assert chosen == [k for k in TOP_ORDER if k in chosen]  # in the manifest's order
    assert resolve_kinds(["role"]) == (["roles"], [])
    assert resolve_kinds(["roles", "role"]) == (["roles"], [])


@pytest.mark.parametrize("text", ["spaceships", "endpoints", "endpoint"])
def test_unknown_or_nested_kinds_are_refused(text: str) -> None:
    with pytest.raises(ApimctlError, match=f"--kinds: unknown kind '{text}'"):
        resolve_kinds([text])


def test_variable_names_from_the_parts() -> None:
    names = variable_names([("Weather", "Forecast", "BACKEND_SECRET"), ("Météo", "été 2", "BACKEND_PASSWORD"),
                            ("1st", "x", "BACKEND_SECRET"), ("天气", "", "")])
    assert names[("Weather", "Forecast", "BACKEND_SECRET")] == "WEATHER_FORECAST_BACKEND_SECRET"
    assert names[("Météo", "été 2", "BACKEND_PASSWORD")] == "METEO_ETE_2_BACKEND_PASSWORD"
    assert names[("1st", "x", "BACKEND_SECRET")] == "_1ST_X_BACKEND_SECRET"
    assert names[("天气", "", "")] == "SECRET"
    assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*", n) for n in names.values())


def test_variables_that_fold_alike_get_suffixes_of_their_own() -> None:
    a, b, c = ("A B", "E", "BACKEND_SECRET"), ("a-b", "E", "BACKEND_SECRET"), ("Other", "E", "BACKEND_SECRET")
    names = variable_names([a, b, c])
    assert len(set(names.values())) == 3
    assert names[c] == "OTHER_E_BACKEND_SECRET"
    assert names[a].startswith("A_B_E_BACKEND_SECRET_") and names[b].startswith("A_B_E_BACKEND_SECRET_")
    # stable: another object coming or going does not rename these
    assert variable_names([b, a]) == {a: names[a], b: names[b]}
    assert variable_names([a, b, c, ("Z", "E", "BACKEND_SECRET")])[a] == names[a]


def test_a_name_crafted_to_look_like_a_suffix_does_not_steal_it() -> None:
    a, b = ("A B", "E", "S"), ("a-b", "E", "S")
    first = variable_names([a, b])
    crafted = (first[a].replace("_", " "),)  # folds to the very name ``a`` was given
    names = variable_names([a, b, crafted])
    assert len(set(names.values())) == 3


def test_service_file_names() -> None:
    files = service_file_names(["Weather", "Weather Forecast", "A B", "a/b", "天气", "x" * 100])
    assert files["Weather"] == "service-weather.yaml"
    assert files["Weather Forecast"] == "service-weather-forecast.yaml"
    assert files["A B"] != files["a/b"]
    assert files["A B"].startswith("service-a-b-") and files["a/b"].startswith("service-a-b-")
    assert re.fullmatch(r"service-[0-9a-f]{8}\.yaml", files["天气"])
    assert files["x" * 100] == "service-" + "x" * 60 + ".yaml"
    assert len(set(files.values())) == len(files)
    assert service_file_names(["a/b", "A B"]) == {"a/b": files["a/b"], "A B": files["A B"]}
