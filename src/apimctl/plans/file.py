"""The saved-plan file: ``plan --out FILE`` writes it, ``apply --plan FILE`` reads it back.

:func:`save_plan` writes :meth:`Plan.dumps` in one piece. :func:`load_plan` reads a file and
returns the :class:`Plan` only when the file is one apply can execute: it is checked against
the plan JSON Schema (``schemas/plan.schema.json``, shipped as package data), and then for
what a schema cannot say (:func:`plan_problems`). A truncated, hand-edited or foreign file
is refused with every problem named as ``path: what`` (``steps[2].kind: unknown kind 'x'``),
so it never reaches apply. Called by :mod:`apimctl.planning.command` and
:mod:`apimctl.applying.command`; nothing here talks to an area.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apimctl import __version__
from apimctl.errors import PlanError
from apimctl.plans.model import FORMAT_VERSION, Change, Fingerprint, Plan, Step, address

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

try:  # an accelerator: answers "valid?" fast; jsonschema still explains every error
    import fastjsonschema
except ImportError:  # pragma: no cover - a dependency, but reading works without it
    fastjsonschema = None  # type: ignore[assignment]

SHOWN = 5  # problems listed in the error; the rest are counted

Where = tuple[str | int, ...]

# problems are listed in the order of the fields in the file
_FIELD_ORDER = {name: rank for rank, name in enumerate(dict.fromkeys([
    *Plan().to_json(), *Step("create", "-", "-").to_json(),
    *Change("-", None, None, sensitive=True).to_json(), *Fingerprint("-", "-", "-").to_json()]))}


# --- reading ---------------------------------------------------------------------------------


def load_plan(path: str) -> Plan:
    """The plan saved in ``path``; :class:`PlanError` naming the file and what is wrong."""
    data = _read_json(path)
    if not isinstance(data, dict) or "steps" not in data:
        raise PlanError(f"{path}: not a saved plan (no `steps`)")
    version = str(data.get("format_version", ""))
    if not _readable(version):
        writer = data.get("apimctl_version")
        by = f"apimctl {writer}" if isinstance(writer, str) and writer else "another apimctl"
        raise PlanError(f"{path}: saved plan has format_version {version!r}; "
                        f"this apimctl reads {FORMAT_VERSION} (apimctl {__version__}): the plan "
                        f"was written by {by}; plan again with this version, or apply it "
                        "with the version that wrote it")
    problems = plan_problems(data)
    if problems:
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        raise PlanError(f"{path}: not a valid saved plan: " + "; ".join(problems[:SHOWN]) + more)
    return Plan.from_json(data)


def _readable(version: str) -> bool:
    """A saved plan of the same major format version and a minor one no newer than this
    apimctl's (a newer minor may hold fields this version would not apply)."""
    major, _, minor = version.partition(".")
    ours_major, _, ours_minor = FORMAT_VERSION.partition(".")
    return major == ours_major and minor.isdigit() and int(minor) <= int(ours_minor)


def _read_json(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the saved plan: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PlanError(f"{path}: not a saved plan (not UTF-8 text: byte {exc.object[exc.start]:#04x} "
                        f"at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"{path}:{exc.lineno}:{exc.colno}: not a saved plan (invalid JSON: {exc.msg})") from None
    except RecursionError:
        raise PlanError(f"{path}: not a saved plan (JSON nested too deeply)") from None


def plan_problems(data: Any) -> list[str]:
    """Every place where ``data`` is not a plan apply can execute, as ``path: what``, in the
    order of the document; empty when it is one. The schema checks the shape (types, known
    kinds and actions, a ``desired`` object for creates); :func:`_beyond_schema` the rest."""
    found = [*_schema_problems(data), *_beyond_schema(data)]
    found.sort(key=lambda item: _sort_key(item[0]))
    return [f"{_format(where)}: {what}" if where else what for where, what in found]


def plan_schema_text() -> str:
    """The plan JSON Schema file as shipped with the package (``apimctl schema --plan``)."""
    return resources.files("apimctl").joinpath("schemas/plan.schema.json").read_text("utf-8")


@cache
def plan_schema() -> dict[str, Any]:
    """The plan JSON Schema (Draft 2020-12), as shipped with the package."""
    schema: dict[str, Any] = json.loads(plan_schema_text())
    return schema


@cache
def _validator() -> Any:
    import jsonschema  # only to explain a plan file's errors: not loaded by every plan

    return jsonschema.Draft202012Validator(plan_schema())


@cache
def _fast() -> Callable[[Any], Any] | None:
    """fastjsonschema's compiled check of the same schema (it reads it as draft-07, which
    means the same for every keyword the plan schema uses); ``None`` without it."""
    if fastjsonschema is None:
        return None
    local = {k: v for k, v in plan_schema().items() if k != "$id"}  # nothing is ever fetched
    check: Callable[[Any], Any] = fastjsonschema.compile(
        dict(local, **{"$schema": "http://json-schema.org/draft-07/schema#"}), use_formats=False)
    return check


def _schema_problems(data: Any) -> Iterator[tuple[Where, str]]:
    fast = _fast()
    if fast is not None:
        try:
            fast(data)
            return
        except fastjsonschema.JsonSchemaException:
            pass
    for error in _validator().iter_errors(data):
        where = tuple(error.absolute_path)
        if error.validator == "required":  # one error per missing field: one problem per object
            missing = [name for name in error.validator_value if name not in error.instance]
            if missing and error.message.startswith(f"{missing[0]!r} is a required"):
                yield where, "missing " + ", ".join(missing)
        elif error.validator == "additionalProperties" and isinstance(error.validator_value, bool):
            known = error.schema.get("properties", {})
            for name in error.instance:
                if name not in known:
                    yield (*where, name), "not a field of a saved plan"
        else:
            yield where, _message(error)


def _message(error: ValidationError) -> str:
    """jsonschema's finding in the words of this project: ``expected X, got Y``. A schema's
    ``title`` names what is expected (``the object to create``, ``kind``)."""
    kind, value, instance = error.validator, error.validator_value, error.instance
    title = error.schema.get("title") if isinstance(error.schema, dict) else None
    if kind == "type":
        wanted = title or " or ".join(_TYPE_NAMES.get(t, t) for t in _as_list(value))
        return f"expected {wanted}, got {_json_type(instance)}"
    if kind == "enum" and title:
        return f"unknown {title} {_shown(instance)} (known: {', '.join(map(str, value))})"
    if kind == "enum":
        return f"expected one of {', '.join(map(str, value))}, got {_shown(instance)}"
    if kind == "const":
        return f"expected {_shown(value)}, got {_shown(instance)}"
    if kind == "minLength" and value == 1:
        return "must not be empty"
    if kind == "pattern":
        return f"expected {title or 'a string matching ' + value}, got {_shown(instance)}"
    return str(error.message)


def _beyond_schema(data: Any) -> Iterator[tuple[Where, str]]:
    """What a schema cannot say: a step's ``address`` is its kind and key, addresses are
    unique, ``depends_on`` names steps of this plan, updates and deletes name a live id."""
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list):
        return
    seen: set[str] = set()
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        kind, key, action, step_id = (step.get(n) for n in ("kind", "key", "action", "id"))
        addr = address(str(kind), str(key))
        given = step.get("address")
        if isinstance(kind, str) and isinstance(key, str) and isinstance(given, str) and given != addr:
            yield ("steps", i, "address"), f"{given!r} does not match kind and key ({addr!r})"
        if addr in seen:
            yield ("steps", i), f"a second step for {addr}"
        seen.add(addr)
        if action in ("update", "delete") and step_id in (None, ""):
            yield (("steps", i, "id"), f"{_article(action)} {action} needs the live object's id, "
                   f"got {_json_type(step_id)}")
    for i, step in enumerate(steps):
        depends = step.get("depends_on") if isinstance(step, dict) else None
        for dep in depends if isinstance(depends, list) else ():
            if isinstance(dep, str) and dep not in seen:
                yield ("steps", i, "depends_on"), f"{dep!r} is not a step of this plan"


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _sort_key(where: Where) -> tuple[tuple[int, int, str], ...]:
    """Indices in order, fields in the order the file has them (unknown ones last)."""
    return tuple((part, 0, "") if isinstance(part, int) else (-1, _FIELD_ORDER.get(part, 99), part)
                 for part in where)


def _format(where: Where) -> str:
    """``steps[3].action``; ``fingerprints['service:W'].id`` for keys that are not names."""
    out = ""
    for part in where:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]" if out else repr(part)
    return out


_TYPE_NAMES = {"object": "an object", "array": "an array", "string": "a string",
               "integer": "an integer", "number": "a number", "boolean": "a boolean",
               "null": "null"}


def _as_list(value: Any) -> Sequence[str]:
    return [value] if isinstance(value, str) else list(value)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40])
    return json.dumps(value)[:40]


def _json_type(value: Any) -> str:
    """How a JSON reader would name the type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return "an array" if isinstance(value, list) else "an object"


# --- writing ---------------------------------------------------------------------------------


def check_destination(out_file: str) -> None:
    """Refuse an ``out_file`` the plan could not be saved to: a directory, or a file in a
    directory that does not exist or cannot be written."""
    path = Path(out_file)
    if out_file.endswith(("/", "\\")) or path.is_dir():
        raise PlanError(f"cannot save the plan to {out_file}: give a file name, not a directory")
    folder = path.parent
    if not folder.is_dir():
        raise PlanError(f"cannot save the plan to {out_file}: directory {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise PlanError(f"cannot save the plan to {out_file}: directory {folder} is not writable")


def save_plan(plan: Plan, out_file: str) -> None:
    """Write the plan to ``out_file`` in one piece: a temporary file in the same directory,
    renamed over the target, so a failed or interrupted save never leaves half a plan."""
    check_destination(out_file)
    path = Path(out_file)
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(plan.dumps())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)  # the mode a plain write would give, not mkstemp's 0600
        os.replace(temp, path)
        temp = None
    except OSError as exc:
        raise PlanError(f"cannot save the plan to {out_file}: {exc.strerror or exc}") from None
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
