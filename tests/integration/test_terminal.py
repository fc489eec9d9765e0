"""A plan longer than the screen, on a terminal (a pseudo-terminal of 24 rows): its totals
first and a pager; ``--auto-approve`` still shows the totals; the bar shows a rate and an ETA;
long lists of steps done collapse to counts per kind. Not on a terminal: everything in full."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

ROLES = 60
APIMCTL = [str(Path(sys.executable).parent / "apimctl")]


def manifest(folder: Path) -> Path:
    path = folder / "roles.yaml"
    path.write_text("roles:\n" + "".join(f"  - name: Role {i:03d}\n" for i in range(ROLES)))
    return path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("APIMCTL_") and k not in ("CI", "NO_COLOR")}
    return {**env, "PAGER": "cat", "TERM": "xterm", "COLUMNS": "100", "LINES": "24", "NO_COLOR": "1"}


def in_pty(args: list[str], cwd: Path, rows: int = 24) -> tuple[int, str]:
    """Run apimctl with a pseudo-terminal of ``rows`` rows as stdin, stdout and stderr."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 100, 0, 0))
    proc = subprocess.Popen([*APIMCTL, *args], cwd=cwd, env=environment(), stdin=slave,
                            stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other end is closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    code = proc.wait(timeout=30)
    os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("terminal")
    manifest(path)
    return path


def test_a_long_plan_starts_with_its_totals_and_goes_to_a_pager(folder: Path) -> None:
    code, out = in_pty(["plan", "roles.yaml", "--url", "embedded"], folder)
    assert code == 0, out
    totals = f"Plan: {ROLES} to create, 0 to update, 0 to delete."
    first = out.index(totals)
    assert out.index("(the plan is") > first
    assert out.index('+ create role "Role 000"') > first  # the pager (cat) shows the plan
    assert out.rstrip().endswith(totals)


def test_full_or_a_pipe_prints_the_whole_plan(folder: Path) -> None:
    code, out = in_pty(["plan", "roles.yaml", "--url", "embedded", "--full"], folder)
    assert code == 0 and "(the plan is" not in out and '+ create role "Role 059"' in out
    piped = subprocess.run([*APIMCTL, "plan", "roles.yaml", "--url", "embedded"], cwd=folder,
                           env=environment(), capture_output=True, text=True, check=True)
    assert "(the plan is" not in piped.stdout and '+ create role "Role 059"' in piped.stdout


def test_auto_approve_shows_the_totals_the_bar_and_collapsed_lists(tmp_path: Path) -> None:
    manifest(tmp_path)  # an area of its own: the plans above stay plans of creates
    code, out = in_pty(["apply", "roles.yaml", "--url", "embedded", "--auto-approve"], tmp_path)
    assert code == 0, out
    assert f"Plan: {ROLES} to create" in out
    assert "ETA" in out
    assert f"+ create role: {ROLES}" in out and f"({ROLES} steps; --full lists each)" in out
    assert 'create role "Role 000"' not in out.split("Done:")[-1]
