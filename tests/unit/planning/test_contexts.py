"""The contexts a pair is compared in: an endpoint's error set named ``null`` is its service's
first one, on the live side the first live set, on the desired side the first declared set,
else the live ones (the collection left alone), else the set the platform gives a new service."""

from __future__ import annotations

from typing import Any

from apimctl import kinds
from apimctl.planning.contexts import Contexts
from apimctl.planning.desired import desired_objects
from apimctl.planning.matching import match
from apimctl.state.live import LiveState, from_raw
from apimctl.state.normalise import Context


def _live() -> LiveState:
    return from_raw({"service": [
        {"id": "s1", "name": "Weather", "endpoints": [{"id": "e1", "name": "Forecast"}],
         "errorSets": [{"id": "x1", "name": "Plain", "errorMessages": []},
                       {"id": "x2", "name": "Fancy", "errorMessages": []}]},
        {"id": "s2", "name": "Bare", "endpoints": [{"id": "e2", "name": "Ping"}]},
    ]})


def _contexts(doc: dict[str, Any]) -> dict[str, tuple[Context, Context]]:
    found = match(desired_objects(doc), _live())
    contexts = Contexts(found.pairs, _live(), found.live_of)
    return {obj.address: contexts.of(obj, live) for obj, live in found.pairs}


def test_declared_sets_give_the_desired_side_and_live_sets_the_live_side() -> None:
    got = _contexts({"services": [{"name": "Weather", "errorSets": [{"name": "Fancy"}],
                                   "endpoints": [{"name": "Forecast"}]}]})
    assert got["endpoint:Weather/Forecast"] == (Context("Fancy"), Context("Plain"))
    assert got["service:Weather"] == (Context(), Context())  # compared in no context


def test_sets_left_alone_are_the_live_ones_and_a_new_service_gets_the_platforms() -> None:
    got = _contexts({"services": [{"name": "Weather", "endpoints": [{"name": "Forecast"}]},
                                  {"name": "Bare", "endpoints": [{"name": "Ping"}]},
                                  {"name": "New", "endpoints": [{"name": "Hello"}]}]})
    assert got["endpoint:Weather/Forecast"] == (Context("Plain"), Context("Plain"))
    assert got["endpoint:Bare/Ping"] == (Context(None), Context(None))  # a service without sets
    assert got["endpoint:New/Hello"] == (Context(kinds.ERROR_SET.write.made_with_parent[0]), Context())


def test_contexts_are_made_once_per_parent() -> None:
    doc = {"services": [{"name": "Weather", "endpoints": [{"name": "Forecast"}, {"name": "Radar"}]}]}
    found = match(desired_objects(doc), _live())
    contexts = Contexts(found.pairs, _live(), found.live_of)
    made = [contexts.of(obj, live) for obj, live in found.pairs if obj.kind is kinds.ENDPOINT]
    assert made[0] == (Context("Plain"), Context("Plain"))
    assert made[1] == (Context("Plain"), Context())  # Radar is new: no live side
    assert len(contexts.made) == 2  # (Weather, live parent s1) and (Weather, none)
