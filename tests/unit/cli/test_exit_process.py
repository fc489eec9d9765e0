"""``exit_process``: the console script ends without taking the interpreter apart, but
only once its output is out and its exit handlers have run."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(body: str) -> subprocess.CompletedProcess[str]:
    script = "import atexit, sys, threading, time\nfrom apimctl.cli.common import exit_process\n"
    return subprocess.run([sys.executable, "-c", script + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=60)


def test_the_code_the_output_and_the_exit_handlers_are_kept() -> None:
    done = _run("""
        class Kept:
            def __del__(self):
                print("taken apart")
        kept = Kept()  # freed only when the interpreter is taken apart
        atexit.register(lambda: print("handler ran"))
        print("unflushed", end="")
        sys.stderr.write("to stderr")
        exit_process(3)
        print("never")
    """)
    assert done.returncode == 3
    assert done.stdout == "unflushedhandler ran\n" and done.stderr == "to stderr"
    # the usual exit would also have freed ``kept``
    assert "taken apart" in _run("class K:\n def __del__(self): print('taken apart')\nk = K()\n").stdout


def test_a_thread_still_running_ends_first() -> None:
    done = _run("""
        def late():
            time.sleep(0.3)
            print("late", flush=True)
        threading.Thread(target=late).start()
        exit_process(0)
    """)
    assert done.returncode == 0 and done.stdout == "late\n"


def test_the_console_script_exits_with_the_commands_code(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.yaml").write_text("services: [{name: W, endpoints: [{name: E}]}]\n")
    done = subprocess.run([sys.executable, "-m", "apimctl", "validate", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "bad.yaml" in done.stdout + done.stderr
