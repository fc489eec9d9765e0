"""The README's examples run as written and print what the README shows.

The commands are read from the README itself, not copied here: the console blocks of "A tour"
(``$ COMMAND`` and the lines it prints) and of the worked examples of ``validate`` and
``lint`` (their files are the README's yaml blocks that name their path), and the commands of
"What will a caller see" (``# ...`` lines after a command are what it prints). They run in a
folder holding a copy of ``examples/weather``, through the real entry point in-process, and
their output is compared line for line (every line, in any order between stdout and stderr,
stdout's in the README's order), figures included: the ``Calls:`` lines, the counts of plans,
of findings and of call checks. What changes from run to run is read loosely: seconds and
milliseconds, ids elided with ``...``, the progress counter of steps that run at the same
time, the absolute path of the folder. A block with a line ``...`` shows part of the output:
its other lines must be there. Blocks that need what a test cannot have (an area with
hundreds of keys, a remote host, a change made by hand) are not run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from .inprocess import entry_point

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SHOWN_HOME = "/home/you/apimctl"  # the README's current directory
Run = Callable[..., tuple[int, str, str]]


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    section: str  # the heading it is under
    before: str  # the paragraph before it


def _blocks() -> list[Block]:
    found, section, last = [], "", 0
    for match in re.finditer(r"^(#+ [^\n]*)$|^```(\w*)\n(.*?)^```$", README, re.M | re.S):
        if match.group(1):
            section = match.group(1).lstrip("# ").strip()
        else:
            found.append(Block(match.group(2), match.group(3), section, README[last:match.start()][-300:]))
        last = match.end()
    return found


BLOCKS = _blocks()


def _section(name: str, lang: str) -> list[Block]:
    chosen = [b for b in BLOCKS if b.section == name and b.lang == lang]
    assert chosen, f"no {lang} block under {name!r}: the README changed, change this test with it"
    return chosen


@dataclass
class Example:
    command: str
    shown: list[str]


def _console(block: Block) -> list[Example]:
    examples: list[Example] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            examples.append(Example(line[2:], []))
        elif examples:
            examples[-1].shown.append(line)
    return examples


def _sh(block: Block) -> list[Example]:
    """A shell block's commands (``\\`` continues a line) and the ``#   `` lines after each."""
    examples: list[Example] = []
    pending = ""
    for line in block.text.splitlines():
        if pending:
            pending += " " + line.strip()
        elif line.startswith("#   ") or line == "#":
            if examples:
                examples[-1].shown.append(line[4:])
            continue
        elif line.startswith("#") or not line.strip():
            continue
        else:
            pending = line
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        examples.append(Example(pending, []))
        pending = ""
    return examples


# -- running ---------------------------------------------------------------------------------


def _normal(line: str, home: str) -> str:
    line = line.replace(home, SHOWN_HOME).rstrip()
    line = re.sub(r"\bin \d+(\.\d+)? s\b", "in S s", line)
    line = re.sub(r"\bin \d+ ms\b", "in MS ms", line)
    line = re.sub(r"^\[\d+/(\d+)\]", r"[N/\1]", line)  # steps at one level finish in any order
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", line)


def _shown(line: str) -> str:
    """A line as the README shows it, read as loosely as :func:`_normal` reads a run's (an id
    may be shown by its first characters and ``...``)."""
    return _normal(re.sub(r"\b[0-9a-f]{4}\.\.\.", "ID", line), SHOWN_HOME)


def _command(text: str) -> tuple[dict[str, str], list[str], bool]:
    """Environment assignments, the apimctl arguments, and whether ``; echo "exit $?"`` follows."""
    echo = text.endswith('; echo "exit $?"')
    words = shlex.split(text.removesuffix('; echo "exit $?"').split("  #")[0], comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "apimctl", text
    return env, words[1:], echo


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding ``examples/weather`` as the README's commands expect, with nothing
    of the environment that would change what they do."""
    shutil.copytree(ROOT / "examples" / "weather", tmp_path / "examples" / "weather")
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("APIMCTL_")] + ["CI"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    return entry_point(monkeypatch, capsys)


def _check(example: Example, run: Run, monkeypatch: pytest.MonkeyPatch, home: Path,
           *, notice_shown: bool = True) -> None:
    env, args, echo = _command(example.command)
    with monkeypatch.context() as scoped:
        for name, value in env.items():
            scoped.setenv(name, value)
        code, out, err = run(*args)
    got_out = [_normal(line, str(home)) for line in out.splitlines() if line.strip()]
    got_err = [_normal(line, str(home)) for line in err.splitlines() if line.strip()]
    if not notice_shown:
        got_err = [line for line in got_err if not line.startswith("Using the embedded reference server")]
    if echo:
        got_out.append(f"exit {code}")
    else:
        assert code in (0, 2), f"{example.command}: exit {code}\n{out}{err}"
    shown = [_shown(line.rstrip()) for line in example.shown if line.strip()]
    if not shown:  # a command the README shows without its output
        return
    got = got_out + got_err
    where = f"$ {example.command}\n--- README ---\n" + "\n".join(shown) + "\n--- ran ---\n" + "\n".join(got)
    if "..." in shown:
        missing = [line for line in shown if line != "..." and line not in got]
        assert not missing, where
        return
    assert Counter(got) == Counter(shown), where
    # stdout in the README's order, but for the items of a list (steps done at one time)
    flat = [line for line in got_out if not line.startswith(" ")]
    assert [line for line in shown if line in set(flat)] == flat, where


# -- the tour --------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_tour_runs_as_the_readme_shows(folder: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Quickstart's apply, validate, a plan with no changes, the edit the README describes,
    the plan of it, its apply and a drift check: each prints what the README shows, the
    ``Calls:`` figures included."""
    blocks = [_console(b) for b in _section("A tour", "console")]
    first, applied, edited, applied_again = blocks
    quickstart = applied[0]
    assert "--url embedded" in quickstart.command and quickstart.command in README.split("## Install")[0]
    _check(quickstart, run, monkeypatch, folder)
    for example in first:
        _check(example, run, monkeypatch, folder)
    weather = folder / "examples" / "weather" / "weather.yaml"
    text = weather.read_text()
    assert "say `maxAge: 120` in the CORS block and\n`rateLimitCeiling: 50000` on the Gold plan" in README
    text, cors = re.subn(r"(\bmaxAge: )60\b", r"\g<1>120", text)
    text, gold = re.subn(r"(\n\s+rateLimitCeiling: )100000\n", r"\g<1>50000\n", text)
    assert cors == gold == 1, "the example changed: change the README's edit with it"
    weather.write_text(text)
    for example in [*edited, *applied_again]:
        _check(example, run, monkeypatch, folder)


def test_a_call_as_the_readme_makes_it(folder: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply, make a consumer, start the back end, and one call through the traffic manager;
    then the declared calls of the example (``apimctl test``) with their count."""
    examples = _sh(_section("What will a caller see", "sh")[0])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    backend: subprocess.Popen[bytes] | None = None
    try:
        for example in examples:
            command = example.command.replace("9000", port)
            if command.startswith("mkdir "):
                subprocess.run(command, shell=True, check=True)  # the README's own line
            elif command.startswith("python3 -m http.server"):
                words = shlex.split(command.split("&")[0])
                backend = subprocess.Popen([sys.executable, *words[1:]], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
                _wait_for(int(port))
            elif command.startswith(("apimctl serve", "curl")):
                continue  # a server that runs until stopped: the reference server's own tests
            else:
                _check(Example(command, example.shown), run, monkeypatch, folder, notice_shown=False)
    finally:
        if backend is not None:
            backend.terminate()
            backend.wait(10)


def _wait_for(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the back end did not start")


def test_export_writes_the_area_as_the_readme_shows(folder: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The weather area applied with its back-end secret set, exported: the secret as a
    reference, the rest as the README shows it."""
    assert "Exporting the weather area (applied with `FORECAST_BACKEND_SECRET` set" in README
    monkeypatch.setenv("FORECAST_BACKEND_SECRET", "s3cr3t-of-the-export")
    code, out, err = run("apply", "examples/weather", "--auto-approve", "--url", "embedded")
    assert code == 0, out + err
    monkeypatch.delenv("FORECAST_BACKEND_SECRET")
    shown = [e for b in BLOCKS if b.lang == "console" for e in _console(b) if e.command == "apimctl export"]
    assert len(shown) == 1
    _check(shown[0], run, monkeypatch, folder)


# -- validate and lint, with the README's files ------------------------------------------------


def _write_named_files(folder: Path, section: str) -> None:
    """The yaml blocks of ``section`` that name their file: on their first line (``# PATH``),
    or in the sentence before them (with this `PATH`)."""
    for block in _section(section, "yaml"):
        first = block.text.splitlines()[0]
        named = re.fullmatch(r"# ([\w./-]+\.ya?ml)", first)
        said = re.search(r"with this `([\w./-]+\.ya?ml)`:\s*$", block.before)
        path = named.group(1) if named else said.group(1) if said else None
        if path:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(block.text)


def test_validate_reports_the_readmes_bad_file_as_shown(folder: Path, run: Run,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _write_named_files(folder, "Commands")
    assert (folder / "bad" / "api.yaml").is_file()
    shown = [e for b in _section("Commands", "console") for e in _console(b) if "validate bad" in e.command]
    assert len(shown) == 1
    _check(shown[0], run, monkeypatch, folder)


def test_the_lint_worked_example_runs_as_shown(folder: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ruleset and manifests of the worked example: lint, ``plan --lint``, and after an
    apply of ``apimctl/`` the live area's findings."""
    _write_named_files(folder, "A worked example")
    examples = [e for b in _section("A worked example", "console") for e in _console(b)]
    lint, plan, live = examples
    _check(lint, run, monkeypatch, folder)
    _check(plan, run, monkeypatch, folder)
    assert "After an `apply` of `apimctl/` (without `--lint`)" in README
    code, out, err = run("apply", "apimctl", "--auto-approve")
    assert code == 0, out + err
    _check(live, run, monkeypatch, folder)


def test_the_readme_blocks_this_test_reads_are_found() -> None:
    """Guards the readers above: a README reshaped so that they find nothing fails here."""
    assert len(_section("A tour", "console")) == 4
    assert sum(len(_console(b)) for b in _section("A tour", "console")) == 6
    assert any(e.command.startswith("apimctl consumer ") for e in _sh(_section("What will a caller see", "sh")[0]))


def test_the_install_lines_say_when_they_work() -> None:
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "work once this release is\npublished" in install and "pip install -e ." in install


# -- keys by hand: the README's curl recipe against the reference server ---------------------


def _curl_recipe(port: int) -> list[tuple[str, str, str | None]]:
    """(method, URL, body) of each curl line of the README's recipe, its variables expanded."""
    block = next(b for b in BLOCKS if b.lang == "sh" and "$API/members" in b.text)
    text = re.sub(r"\\\n\s*", " ", block.text)
    lines = [line.split("  #")[0] for line in text.splitlines() if line.strip()]
    assignments = dict(re.findall(r"(\w+)=('[^']*'|\S+?)(?:;|$)", lines[0]))
    values = {name: value.strip("'").replace(":8080", f":{port}") for name, value in assignments.items()}
    calls = []
    for line in lines[1:]:
        assert line.startswith("curl "), line
        for name, value in values.items():
            line = line.replace(f'"${name}', f'"{value}')
        words = shlex.split(line)
        url = next(w for w in words if w.startswith("http"))
        body = words[words.index("-d") + 1] if "-d" in words else None
        calls.append(("POST" if body is not None else "GET", url, body))
    assert values.get("AUTH") == "Authorization: Bearer dev", values
    return calls


@pytest.mark.slow
def test_the_readmes_curl_recipe_makes_a_key_that_a_call_finds(tmp_path: Path, dialect: str, run: Run,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``apimctl serve --db .apimctl/local.db --token dev=local`` (the embedded area, by its
    name), the README's three calls with their placeholders filled from the replies before,
    then ``apimctl call --key alice`` on that area finds the key on Gold."""
    import httpx

    from apimctl.server import ServerConfig, create_app

    from .inprocess import uvicorn_in_thread

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    assert "apimctl serve --db\n.apimctl/local.db --token dev=local" in README
    assert run("apply", str(ROOT / "examples" / "weather"), "--auto-approve", "--url", "embedded")[0] == 0
    app = create_app(ServerConfig(db_path=str(tmp_path / ".apimctl" / "local.db"), tokens={"dev": "local"},
                                  dialect=dialect))
    ids: dict[str, str] = {}
    with uvicorn_in_thread(app) as port:
        for method, url, body in _curl_recipe(port):
            for name, value in ids.items():
                url, body = url.replace(name, value), body.replace(name, value) if body else body
            reply = httpx.request(method, url, content=body, headers={
                "Authorization": "Bearer dev", "Content-Type": "application/json"})
            assert reply.status_code < 300, f"{method} {url}: {reply.status_code} {reply.text}"
            data = reply.json()
            item = data[0] if isinstance(data, list) and len(data) == 1 else data
            if url.split("?")[0].endswith("/packages"):
                package = next(p for p in data if p["name"] == "Weather Partners")
                ids["PACKAGE_ID"] = package["id"]
                ids["PLAN_ID"] = next(p["id"] for p in package["plans"] if p["name"] == "Gold")
            elif url.endswith("/members"):
                ids["MEMBER_ID"] = item["id"]
            elif url.endswith("/applications"):
                ids["APPLICATION_ID"] = item["id"]
    assert set(ids) == {"PACKAGE_ID", "PLAN_ID", "MEMBER_ID", "APPLICATION_ID"}
    code, out, err = run("call", "GET", "https://api.example.com/v2/forecast?city=paris", "--key", "alice",
                         "--backend", "backend.example.net=http://127.0.0.1:9")
    assert code == 0, out + err
    assert "key: found in query api_key, plan Gold" in out and "entitlement: ok" in out, out
