"""Benchmark: ``apimctl import openapi`` of an OpenAPI 3.0 document with 20,000 paths.

Generates the document (one ``get`` with an ``operationId``, a path parameter and a response
per path; 20,000 by default) in a temporary directory and prints the seconds taken by each
stage: reading the YAML (positions, duplicate keys and alias bounds), validating it
(``load_document``), making the service (``import_service``), and ``apimctl import openapi``
as a new process. Run it at two sizes to see that the time grows with the size of the
document, not its square. This script reports, it does not assert.

    .venv/bin/python benchmarks/openapi_import_bench.py [--paths 20000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from apimctl.openapi.document import load_document
from apimctl.openapi.mapping import ImportOptions, import_service
from apimctl.openapi.reading import decode, parse, read_bytes


def document(paths: int) -> str:
    lines = ["openapi: 3.0.3", "info: {title: Big, version: '1'}",
             "servers: [{url: 'https://api.example.com/v1'}]", "paths:"]
    for i in range(paths):
        lines += [f"  /items{i}/{{id}}:", "    get:", f"      operationId: getItem{i}",
                  "      parameters:", "        - {name: id, in: path, required: true, schema: {type: string}}",
                  "      responses:", "        '200': {description: ok}"]
    return "\n".join(lines) + "\n"


def timed(label: str, action: object) -> object:
    start = time.perf_counter()
    result = action() if callable(action) else None
    print(f"{label:<28} {time.perf_counter() - start:7.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        file = str(Path(folder) / "big.yaml")
        Path(file).write_text(document(args.paths), encoding="utf-8")
        print(f"{args.paths:,} paths, {Path(file).stat().st_size / 1e6:.1f} MB")
        timed("read (YAML, positions)", lambda: parse(file, decode(file, read_bytes(file))))
        doc = timed("load_document (validated)", lambda: load_document(file))
        timed("import_service", lambda: import_service(doc, ImportOptions()))  # type: ignore[arg-type]
        timed("apimctl import openapi", lambda: subprocess.run(
            [sys.executable, "-m", "apimctl", "import", "openapi", file], check=True,
            stdout=subprocess.DEVNULL))


if __name__ == "__main__":
    main()
