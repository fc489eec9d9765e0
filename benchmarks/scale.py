"""How apimctl and the reference server scale: 1k / 10k / 50k endpoints, measured from outside.

For each size (N endpoints = N/10 services of 10 endpoints, N/100 packages of 5 plans, as
``generated.area`` builds them) the script

1. writes the generated manifests as YAML into a temporary directory (one file per service,
   ``packages.yaml`` and ``domains.yaml``, the layout of ``apimctl export --layout per-service``)
   and times ``apimctl validate`` on them;
2. starts ``apimctl serve --dialect D`` on 127.0.0.1 (a free port, a new SQLite database; ``D``
   is ``--dialect``, ``spec`` by default, ``mashery`` for the real deployments' way) and loads the area
   with a real ``apimctl apply --auto-approve --qps 0`` from empty;
3. restarts the server on that database (so its memory and CPU figures start clean) and times
   list pages of 1,000 services with ``fields=id,name,endpoints.*`` (offset 0 and the last page),
   one ``filter=name:X`` lookup, and the server's peak RSS growth (``VmHWM``) while it answers
   one such page;
4. runs ``apimctl plan`` (no changes), ``apimctl apply`` of a 1% change
   (``generated.one_percent_change``) and ``apimctl export`` against it.

Every ``apimctl`` command is a child process (``.venv/bin/apimctl``, client rate limit off with
``--qps 0``): its wall time, CPU time and peak RSS come from ``os.wait4`` (the CPU time includes
that of its worker process, ``apimctl.workers``, and the peak RSS is the larger of the two
processes'; the command's own is the larger one at every size); the server's CPU time
from ``/proc/PID/stat`` and its memory from ``/proc/PID/status``; calls from the server's
``GET /operator/calls``. The figures are printed beside the goals of DESIGN.md; nothing is
asserted. Linux only (``/proc``).

    .venv/bin/python benchmarks/scale.py                  # 1k and 10k endpoints (< 2 min)
    .venv/bin/python benchmarks/scale.py --with-50k       # 1k, 10k and 50k
    .venv/bin/python benchmarks/scale.py --sizes 1000     # a quick run
    .venv/bin/python benchmarks/scale.py --dialect mashery  # against serve --dialect mashery
    .venv/bin/python benchmarks/scale.py --no-workers     # every command without its worker
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from generated import ENDPOINTS_PER_SERVICE, PLANS_PER_PACKAGE, area, one_percent_change

from apimctl import kinds

TOKEN = "scale-token"
OPERATOR = "scale-operator"
PAGE = 1000
PAGE_FIELDS = "id,name,endpoints.*"
# the collections a plan reads: one list per top-level kind of the registry
TOP_LEVEL = tuple(kind.path for kind in kinds.TOP_LEVEL)
CLK_TCK = os.sysconf("SC_CLK_TCK")
# extra environment of every apimctl child (``--no-workers``: APIMCTL_WORKERS=0)
CHILD_SETTINGS: dict[str, str] = {}
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# --- child processes -----------------------------------------------------------------------


def apimctl() -> list[str]:
    """The installed entry point next to this interpreter, else ``python -m apimctl``."""
    script = Path(sys.executable).with_name("apimctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "apimctl"]


def child_env() -> dict[str, str]:
    """The environment of every child: no ``APIMCTL_*`` settings of the caller, no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    env["NO_COLOR"] = "1"
    env.update(CHILD_SETTINGS)
    return env


@dataclass
class Run:
    """One finished ``apimctl`` child process."""

    wall: float
    cpu: float  # user + system seconds of the child (and of its worker process)
    rss_mb: float  # ru_maxrss of the child
    code: int
    out: str
    err: str
    timed_out: bool = False

    @property
    def note(self) -> str:
        """Empty when the run went as expected, else what to flag beside its figures."""
        return " (TIMEOUT)" if self.timed_out else ""


def run(args: Sequence[str], cwd: Path, timeout: float, ok: Sequence[int] = (0,)) -> Run:
    """Run ``apimctl ARGS`` and answer its wall time and resource usage (``os.wait4``).

    Killed after ``timeout`` seconds. An exit code outside ``ok`` is reported on stderr with
    the tail of the child's output; the figures are kept (and flagged by the caller).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([*apimctl(), *args], cwd=cwd, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=child_env())
        lock, reaped, killed = threading.Lock(), [False], [False]

        def kill() -> None:
            with lock:
                if not reaped[0]:
                    killed[0] = True
                    os.kill(proc.pid, 9)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            with lock:
                reaped[0] = True
            timer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait
        out.seek(0)
        err.seek(0)
        result = Run(wall=wall, cpu=usage.ru_utime + usage.ru_stime, rss_mb=usage.ru_maxrss / 1024,
                     code=proc.returncode, out=out.read().decode(errors="replace"),
                     err=err.read().decode(errors="replace"), timed_out=killed[0])
    if result.timed_out or result.code not in ok:
        tail = "\n".join((result.out + result.err).strip().splitlines()[-8:])
        why = f"timed out after {timeout:.0f} s" if result.timed_out else f"exit {result.code}"
        print(f"  ! apimctl {args[0]}: {why}\n{_indent(tail)}", file=sys.stderr)
    return result


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


# --- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``apimctl serve`` as a child process on 127.0.0.1, with an operator token."""

    def __init__(self, folder: Path, db: Path, dialect: str, timeout: float = 30.0) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/v3/rest"
        self.log = (folder / f"serve-{self.port}.log").open("wb")
        self.proc = subprocess.Popen(
            [*apimctl(), "serve", "--host", "127.0.0.1", "--port", str(self.port), "--db", str(db),
             "--token", f"{TOKEN}=scale", "--auto-approve-domains", "--operator-token", OPERATOR,
             "--dialect", dialect],
            cwd=folder, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=child_env())
        self.http = httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                self.stop()
                raise SystemExit(f"apimctl serve exited with {self.proc.returncode}; "
                                 f"see {self.log.name}")
            try:
                self.operator("GET")
                return
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit(f"apimctl serve did not answer within {timeout:.0f} s") from None
                time.sleep(0.05)

    def operator(self, method: str) -> dict[str, Any]:
        """``GET`` (counts) or ``DELETE`` (reset) ``/operator/calls``."""
        resp = httpx.request(method, f"{self.base}/operator/calls", timeout=10,
                             headers={"Authorization": f"Bearer {OPERATOR}"})
        resp.raise_for_status()
        data: dict[str, Any] = resp.json()
        return data

    def calls(self) -> tuple[int, int]:
        """(reads, writes) of the management API counted since the last reset."""
        reads = writes = 0
        for call in self.operator("GET").get("calls", []):
            if not str(call.get("path", "")).startswith("/v3/rest/"):
                continue
            if call.get("method") in ("GET", "HEAD"):
                reads += int(call.get("count", 0))
            else:
                writes += int(call.get("count", 0))
        return reads, writes

    def cpu(self) -> float:
        """User + system CPU seconds of the server process so far."""
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)

    def memory_mb(self, key: str) -> float:
        """``VmHWM`` (peak) or ``VmRSS`` (now) of the server process, in MB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
        return math.nan

    def reset_peak(self) -> bool:
        """Reset the process's ``VmHWM`` to its current RSS (Linux ``clear_refs``)."""
        try:
            Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
            return True
        except OSError:
            return False

    def get(self, path: str, params: dict[str, Any]) -> tuple[float, httpx.Response]:
        started = time.perf_counter()
        resp = self.http.get(self.url + path, params=params)
        seconds = time.perf_counter() - started
        resp.raise_for_status()
        return seconds, resp

    def total(self, path: str) -> int:
        """How many objects a top-level collection holds (``X-Total-Count``, else by reading)."""
        _, resp = self.get(path, {"limit": 1, "fields": "id"})
        if "x-total-count" in resp.headers:
            return int(resp.headers["x-total-count"])
        _, resp = self.get(path, {"limit": PAGE, "fields": "id"})
        return len(resp.json())

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()


@contextlib.contextmanager
def serving(folder: Path, db: Path, dialect: str) -> Iterator[Server]:
    server = Server(folder, db, dialect)
    try:
        yield server
    finally:
        server.stop()


# --- manifests -----------------------------------------------------------------------------


def write_manifests(doc: dict[str, Any], folder: Path) -> int:
    """One YAML file per service, plus ``packages.yaml`` and ``domains.yaml``; answers bytes."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)

    def dump(name: str, data: dict[str, Any]) -> int:
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
        (folder / name).write_text(text, encoding="utf-8")
        return len(text.encode())

    size = dump("domains.yaml", {"domains": doc["domains"]})
    size += dump("packages.yaml", {"packages": doc["packages"]})
    for svc in doc["services"]:
        size += dump(f"{svc['name']}.yaml", {"services": [svc]})
    return size


# --- one size ------------------------------------------------------------------------------


@dataclass
class Figures:
    """Everything measured at one size."""

    endpoints: int
    services: int
    packages: int
    plans: int
    manifest_mb: float = math.nan
    values: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key)


def connection(server: Server) -> list[str]:
    return ["--url", server.url, "--token", TOKEN, "--qps", "0"]


CALLS_LINE = re.compile(r"Calls:\s*(\d+)\s*\((\d+)\s*writes?,\s*(\d+)\s*reads?\)")


def median_get(server: Server, params: dict[str, Any], repeat: int) -> tuple[float, httpx.Response]:
    """Median seconds of ``repeat`` identical ``GET /services``, and the last response."""
    timings, resp = [], None
    for _ in range(repeat):
        seconds, resp = server.get("/services", params)
        timings.append(seconds)
    assert resp is not None
    return statistics.median(timings), resp


def measure(endpoints: int, scale: float, repeat: int, dialect: str) -> Figures:
    services = max(1, endpoints // ENDPOINTS_PER_SERVICE)
    packages = max(1, services // 10)
    fig = Figures(endpoints=services * ENDPOINTS_PER_SERVICE, services=services, packages=packages,
                  plans=packages * PLANS_PER_PACKAGE)
    size_factor = fig.endpoints / 1000
    short = (60 + 2 * size_factor) * scale  # validate, plan, apply 1%, export
    long = (120 + 10 * size_factor) * scale  # the load: apply from empty
    v = fig.values
    doc = area(services, packages)
    changed_doc, changed = one_percent_change(doc)
    v["changed"] = changed
    with tempfile.TemporaryDirectory(prefix="apimctl-scale-") as tmp:
        folder = Path(tmp)
        base, changed_dir, db = folder / "manifests", folder / "changed", folder / "area.db"
        fig.manifest_mb = write_manifests(doc, base) / 1e6
        write_manifests(changed_doc, changed_dir)
        del doc, changed_doc

        v["validate"] = run(["validate", str(base)], folder, short)

        with serving(folder, db, dialect) as server:
            v["load"] = run(["apply", str(base), "--auto-approve", "--no-color", *connection(server)],
                            folder, long)

        with serving(folder, db, dialect) as server:  # a fresh process: clean peak RSS and CPU
            measure_server(server, fig, repeat)

            bound = sum(max(1, math.ceil(server.total(p) / PAGE)) for p in TOP_LEVEL)
            server.operator("DELETE")
            cpu_before = server.cpu()
            v["plan"] = run(["plan", str(base), "--no-color", "--detailed-exitcode",
                             *connection(server)], folder, short, ok=(0, 2))
            v["plan_server_cpu"] = server.cpu() - cpu_before
            v["plan_calls"] = server.calls()
            v["plan_bound"] = bound

            server.operator("DELETE")
            cpu_before = server.cpu()
            v["apply"] = run(["apply", str(changed_dir), "--auto-approve", "--no-color",
                              *connection(server)], folder, short)
            v["apply_server_cpu"] = server.cpu() - cpu_before
            v["apply_calls"] = server.calls()
            match = CALLS_LINE.search(v["apply"].out + v["apply"].err)
            v["apply_summary"] = tuple(map(int, match.groups())) if match else None

            v["export"] = run(["export", "--out", str(folder / "export"), *connection(server)],
                              folder, short)
            v["server_hwm"] = server.memory_mb("VmHWM")
    return fig


def measure_server(server: Server, fig: Figures, repeat: int) -> None:
    """Page timings, a filtered lookup and the memory of one page, on a fresh server."""
    v = fig.values
    first = {"limit": PAGE, "offset": 0, "fields": PAGE_FIELDS}
    # Memory first, while the process has answered nothing big yet: warm up with a tiny page,
    # then the growth of the peak RSS while it answers one full page.
    server.get("/services", {"limit": 1, "fields": PAGE_FIELDS})
    v["server_rss_start"] = server.memory_mb("VmHWM")
    v["peak_reset"] = server.reset_peak()
    before = server.memory_mb("VmHWM")
    _, resp = server.get("/services", first)
    v["page_rss"] = (server.memory_mb("VmHWM") - before, len(resp.content) / 1e6,
                     len(resp.json()))

    last_offset = (math.ceil(fig.services / PAGE) - 1) * PAGE
    v["page_first"], resp = median_get(server, first, repeat)
    v["page_first_n"] = len(resp.json())
    v["page_last"], resp = median_get(server, {**first, "offset": last_offset}, repeat)
    v["page_last_n"] = (len(resp.json()), last_offset)

    name = f"svc-{fig.services // 2:05d}"
    v["filter"], resp = median_get(server, {"filter": f"name:{name}"}, max(repeat, 5))
    v["filter_n"] = len(resp.json()) if isinstance(resp.json(), list) else 1


# --- the report ----------------------------------------------------------------------------


def label(endpoints: int) -> str:
    return f"{endpoints // 1000}k" if endpoints % 1000 == 0 else f"{endpoints:,}"


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def wall_rss(r: Run) -> str:
    return f"{r.wall:.2f} s / {r.rss_mb:.0f} MB{r.note}{_exit(r, (0,))}"


def _exit(r: Run, ok: Sequence[int]) -> str:
    return "" if r.timed_out or r.code in ok else f" (exit {r.code})"


def rows(figs: list[Figures]) -> list[tuple[str, list[str], str]]:
    """(measure, one cell per size, goal) for the table."""
    out: list[tuple[str, list[str], str]] = []

    def row(measure: str, cell: Callable[[Figures], str], goal: str = "—") -> None:
        cells = []
        for f in figs:
            try:
                cells.append(cell(f))
            except (TypeError, KeyError, ZeroDivisionError, AttributeError):
                cells.append("n/a")
        out.append((measure, cells, goal))

    row("services / endpoints / plans",
        lambda f: f"{f.services:,} / {f.endpoints:,} / {f.plans:,}")
    row("manifests (YAML, one file per service)", lambda f: f"{f.manifest_mb:.1f} MB")
    row("load: apply from empty, wall / RSS", lambda f: wall_rss(f["load"]), "(setup, for reference)")

    def plan_wall(f: Figures) -> str:
        r: Run = f["plan"]
        status = {0: "no changes", 2: "CHANGES!"}.get(r.code, f"exit {r.code}")
        return f"{r.wall:.2f} s ({status}){r.note}"

    row("plan, no changes: wall", plan_wall, "< 6 s at 50k")
    row("plan: client CPU / server CPU",
        lambda f: f"{f['plan'].cpu:.2f} s / {f['plan_server_cpu']:.2f} s")
    row("plan: client peak RSS", lambda f: f"{f['plan'].rss_mb:.0f} MB", "< 300 MB at 50k")
    row("plan: read calls / bound Σ⌈N/1000⌉",
        lambda f: f"{f['plan_calls'][0]} / {f['plan_bound']}"
                  + ("" if f["plan_calls"][0] == f["plan_bound"] else " (≠)")
                  + (f", {f['plan_calls'][1]} writes" if f["plan_calls"][1] else ""),
        "equal")

    row("apply 1%: objects changed", lambda f: f"{f['changed']}")
    row("apply 1%: wall / peak RSS", lambda f: wall_rss(f["apply"]),
        "< plan + writes + 2 s")
    row("apply 1%: wall - plan wall",
        lambda f: f"{f['apply'].wall - f['plan'].wall:+.2f} s "
                  f"({1000 * (f['apply'].wall - f['plan'].wall) / max(1, f['apply_calls'][1]):.0f} "
                  f"ms per write)",
        "< writes + 2 s")
    row("apply 1%: writes / reads (server count)",
        lambda f: f"{f['apply_calls'][1]} / {f['apply_calls'][0]}")
    row("apply 1%: 'Calls:' line (total, writes, reads)",
        lambda f: "{} ({} w, {} r)".format(*f["apply_summary"]) if f["apply_summary"] else "absent")
    row("apply 1%: RSS / plan RSS",
        lambda f: f"{f['apply'].rss_mb / f['plan'].rss_mb:.2f}", "within 10% (0.90-1.10)")
    row("apply 1%: client CPU / server CPU",
        lambda f: f"{f['apply'].cpu:.2f} s / {f['apply_server_cpu']:.2f} s")

    row("export: wall / peak RSS", lambda f: wall_rss(f["export"]), "< 8 s and 300 MB at 50k")
    row("validate: wall / peak RSS", lambda f: wall_rss(f["validate"]), "< 3 s and 250 MB at 50k")

    row(f"server: page fields={PAGE_FIELDS}, offset 0",
        lambda f: f"{ms(f['page_first'])} ({f['page_first_n']} svc)", "flat across sizes")
    row("server: same, last page",
        lambda f: f"{ms(f['page_last'])} ({f['page_last_n'][0]} svc @ {f['page_last_n'][1]})")
    row("server: last / first page",
        lambda f: f"{f['page_last'] / f['page_first']:.2f}", "within 20% (0.8-1.2)")
    row("server: filter=name:X",
        lambda f: f"{ms(f['filter'])} ({f['filter_n']} obj)", "< 20 ms at 5,000 services")
    row("server: ΔVmHWM for one page / page size",
        lambda f: "{:.1f} MB / {:.1f} MB = {:.2f}x{}".format(
            f["page_rss"][0], f["page_rss"][1], f["page_rss"][0] / f["page_rss"][1],
            "" if f["peak_reset"] else " *"),
        "< 2x page size (~22 MB at 1,000 svc)")
    row("server: RSS after start-up / peak at the end",
        lambda f: f"{f['server_rss_start']:.0f} MB / {f['server_hwm']:.0f} MB")
    return out


def print_table(figs: list[Figures]) -> None:
    table = rows(figs)
    headers = ["measure", *(label(f.endpoints) for f in figs), "goal"]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print_plain(headers, table)
        return
    else:
        t = Table(title="apimctl at scale (figures only; no assertions)", show_lines=False)
        for i, h in enumerate(headers):
            t.add_column(h, justify="right" if 0 < i < len(headers) - 1 else "left")
        for measure, cells, goal in table:
            t.add_row(measure, *cells, goal)
        Console(width=max(120, shutil.get_terminal_size().columns)).print(t)


def print_plain(headers: list[str], table: list[tuple[str, list[str], str]]) -> None:
    widths = [max(len(h), *(len(r[1][i - 1]) if 0 < i < len(headers) - 1 else
                            len(r[0] if i == 0 else r[2]) for r in table))
              for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for measure, cells, goal in table:
        line = [measure.ljust(widths[0]), *(c.rjust(w) for c, w in zip(cells, widths[1:-1],
                                                                       strict=True)), goal]
        print("  ".join(line))


def print_growth(figs: list[Figures], startup_mb: float) -> None:
    if len(figs) < 2:
        return
    print("\nGrowth of plan (no changes); 'linear' means the ratio is about the size ratio:")
    for a, b in itertools.pairwise(figs):
        ra, rb = a["plan"], b["plan"]
        size = b.endpoints / a.endpoints
        above = (rb.rss_mb - startup_mb) / max(1e-9, ra.rss_mb - startup_mb)
        print(f"  {label(a.endpoints)} -> {label(b.endpoints)} (size x{size:.0f}): "
              f"wall x{rb.wall / ra.wall:.1f}, client CPU x{rb.cpu / max(ra.cpu, 1e-9):.1f}, "
              f"server CPU x{b['plan_server_cpu'] / max(a['plan_server_cpu'], 1e-9):.1f}, "
              f"peak RSS x{rb.rss_mb / ra.rss_mb:.1f} "
              f"(x{above:.1f} above the {startup_mb:.0f} MB start-up RSS)")


# --- main ----------------------------------------------------------------------------------


def size_arg(text: str) -> int:
    text = text.strip().lower().replace(",", "").replace("_", "")
    value = int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    if value < ENDPOINTS_PER_SERVICE:
        raise argparse.ArgumentTypeError(f"at least {ENDPOINTS_PER_SERVICE} endpoints")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=size_arg, nargs="+", default=[1000, 10000],
                        metavar="ENDPOINTS", help="sizes in endpoints (1000, 10k, ...); "
                        "default: 1k 10k")
    parser.add_argument("--with-50k", action="store_true", help="add the 50k size (slow)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="repetitions of each timed server GET (median); default 3")
    parser.add_argument("--dialect", choices=("spec", "mashery"), default="spec",
                        help="the dialect of the server (apimctl serve --dialect); default spec")
    parser.add_argument("--no-workers", action="store_true",
                        help="run every apimctl command without its worker process (APIMCTL_WORKERS=0)")
    parser.add_argument("--timeout-scale", type=float, default=1.0,
                        help="multiply every child-process timeout by this")
    args = parser.parse_args()
    sizes = sorted(set(args.sizes) | ({50000} if args.with_50k else set()))
    if args.no_workers:
        CHILD_SETTINGS["APIMCTL_WORKERS"] = "0"
    if not Path("/proc/self/stat").exists():
        raise SystemExit("scale.py reads /proc (Linux)")

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="apimctl-scale-") as tmp:
        startup = run(["plan", "--help"], Path(tmp), 60)
    print(f"apimctl: {' '.join(apimctl())}; server dialect {args.dialect}; start-up RSS (apimctl plan --help) "
          f"{startup.rss_mb:.0f} MB, {startup.wall:.2f} s")
    figs: list[Figures] = []
    for n in sizes:
        t0 = time.perf_counter()
        print(f"measuring {label(n)} endpoints ...", flush=True)
        figs.append(measure(n, args.timeout_scale, max(1, args.repeat), args.dialect))
        print(f"  done in {time.perf_counter() - t0:.0f} s", flush=True)
    print()
    print_table(figs)
    if any(not f["peak_reset"] for f in figs):
        print("* VmHWM could not be reset (clear_refs): the figure is the growth over the peak "
              "after start-up and a 1-service warm-up page.")
    print_growth(figs, startup.rss_mb)
    print(f"\nTotal {time.perf_counter() - started:.0f} s. The machine's load skews wall times; "
          "compare runs on an idle machine.")


if __name__ == "__main__":
    main()
