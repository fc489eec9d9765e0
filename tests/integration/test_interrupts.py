"""Interrupts, like Terraform: Ctrl-C at the question cancels at once; during an apply the
first Ctrl-C or SIGTERM (how CI cancels a job) starts no new step, lets the running calls
finish, prints the summary and exits 130; a second one exits at once.

The question is asked on a real pseudo-terminal (`pty`); the applies are `python -m apimctl`
subprocesses against a reference server subprocess, slowed down by the client's `--qps` so
that there is time to send the signal after the first step finished. The server is shared by
the module, one per dialect (``apimctl serve`` and ``apimctl serve --dialect mashery``, the
``dialect`` fixture); each test applies in an area of its own. The question is asked before
anything is read from a server: it is asked of the embedded one, in the ``spec`` dialect only.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .apply_support import Server, apimctl_env, readable, server, write_manifest

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather"
STEP_LINE = re.compile(r"^\[\d+/\d+\] ")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    """One server for the module per dialect; every test works in an area of its own."""
    with server(tmp_path_factory.mktemp("interrupts"), *dialect_options, areas=4) as srv:
        yield srv


@pytest.fixture
def area(shared: Server) -> tuple[Server, dict[str, str]]:
    """The shared server and the environment of an apimctl run on a fresh area of it."""
    return shared, apimctl_env(shared, shared.fresh_token())


def _read_until(fd: int, pattern: str, timeout: float) -> str:
    out = b""
    deadline = time.monotonic() + timeout
    while pattern.encode() not in out:
        left = deadline - time.monotonic()
        assert left > 0, f"no {pattern!r} in {out.decode(errors='replace')!r}"
        if readable(fd, left):
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    return out.decode(errors="replace")


def _read_rest(fd: int, timeout: float) -> str:
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not readable(fd, 0.2):
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")


def _exit_code(pid: int, timeout: float) -> int | None:
    """The child's exit code; ``None`` (and the child killed) when it is still running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_") and k != "CI"}
    env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
    return env


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_at_the_question_cancels_at_once(tmp_path: Path) -> None:
    """Ctrl-C while `Apply these changes? [y/N]` waits: one line, exit 130, nothing written."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: apimctl on the pseudo-terminal
        os.chdir(tmp_path)
        os.execvpe(sys.executable, [sys.executable, "-m", "apimctl", "apply", "--url", "embedded",
                                    str(WEATHER)], _env())
    try:
        before = _read_until(fd, "Apply these changes?", timeout=60)
        assert "apimctl will perform the following actions" in before
        time.sleep(0.2)  # the question is waiting for input
        os.write(fd, b"\x03")
        after = _read_rest(fd, timeout=15)
        code = _exit_code(pid, timeout=5)
    finally:
        os.close(fd)
    assert code == 130, after
    assert after.count("Apply cancelled") == 1, after
    assert "Aborted" not in after and "Traceback" not in after, after
    # nothing was written: the area still needs every create
    plan = subprocess.run([sys.executable, "-m", "apimctl", "plan", "--url", "embedded", "--format", "json",
                           str(WEATHER)], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert plan.returncode == 0, plan.stderr
    steps = json.loads(plan.stdout)["steps"]
    assert steps and all(s["action"] == "create" for s in steps)
    assert not [s for s in steps if s["kind"] == "role"]  # no lease role either


def _start_slow_apply(srv_env: dict[str, str], folder: Path, cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "4",
                             "--parallelism", "1", *args, str(folder)],
                            env=srv_env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for_first_step(proc: subprocess.Popen[str], timeout: float = 90) -> list[str]:
    """The stderr lines up to the first finished step (CI mode: one line per step)."""
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if STEP_LINE.match(line):
            return lines
    raise AssertionError(f"no step finished: {lines}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_apply_stops_and_summarises(sig: signal.Signals, area: tuple[Server, dict[str, str]],
                                                 tmp_path: Path) -> None:
    _, env = area
    folder = write_manifest(tmp_path / "m", services=3)
    proc = _start_slow_apply(env, folder, tmp_path, "--format", "json")
    try:
        early = _wait_for_first_step(proc)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = "".join(early) + stderr
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert f"{sig.name} received" in stderr
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert any(e["type"] == "interrupt" and e["signal"] == sig.name for e in lines)
    summary = lines[-1]
    assert summary["type"] == "summary" and summary["interrupted"] is True
    assert summary["exit_code"] == 130
    assert summary["summary"]["done"] >= 1 and summary["skipped"], summary
    # no step started after the interrupt
    events = [e["type"] for e in lines]
    later = events[events.index("interrupt"):]
    assert "step_started" not in later
    # the lease was released: a second apply converges
    again = subprocess.run([sys.executable, "-m", "apimctl", "apply", "--auto-approve", str(folder)],
                           env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stdout + again.stderr


def test_sigterm_text_summary_names_what_was_not_started(area: tuple[Server, dict[str, str]],
                                                         tmp_path: Path) -> None:
    _, env = area
    folder = write_manifest(tmp_path / "m", services=3)
    proc = _start_slow_apply(env, folder, tmp_path)
    try:
        _wait_for_first_step(proc)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stdout + stderr
    assert "Apply interrupted:" in stdout and "not started" in stdout, stdout
    assert "Not started:" in stdout and "Done:" in stdout, stdout


def test_a_second_interrupt_exits_at_once(area: tuple[Server, dict[str, str]], tmp_path: Path) -> None:
    _, env = area
    folder = write_manifest(tmp_path / "m", services=3)
    proc = _start_slow_apply(env, folder, tmp_path, "--format", "json")
    try:
        _wait_for_first_step(proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stdout + stderr
    assert "SIGINT again: exiting at once" in stderr
    assert "Traceback" not in stderr
    assert '"type":"summary"' not in stdout
