"""The skeleton of a repository that keeps an area in git (``apimctl init``).

The files, shipped as package data under ``apimctl/templates`` (the gitops workflows and the
pre-commit config are the same files as ``examples/gitops``, pinned to this release):

- ``apimctl/apimctl.yaml``: a starting manifest, unless the manifests come from ``export``;
- ``.github/workflows/apimctl-plan.yml``, ``-apply.yml``, ``-drift.yml``: plan on pull
  request, apply on merge, nightly drift, through the GitHub Action;
- ``.pre-commit-config.yaml``: ``apimctl validate`` before every commit;
- ``.gitignore``: the embedded server's state and saved plans (lines added to an existing one).

An existing file is kept (and reported) unless ``force``; nothing is written outside ``root``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from apimctl.errors import ApimctlError

MANIFESTS_DIR = "apimctl"
TEMPLATE_MANIFEST = ("apimctl.yaml", f"{MANIFESTS_DIR}/apimctl.yaml")
GITIGNORE = ("gitignore", ".gitignore")
# (the template's name under apimctl/templates, where it goes in the repository)
SKELETON = (
    ("workflows/apimctl-plan.yml", ".github/workflows/apimctl-plan.yml"),
    ("workflows/apimctl-apply.yml", ".github/workflows/apimctl-apply.yml"),
    ("workflows/apimctl-drift.yml", ".github/workflows/apimctl-drift.yml"),
    ("pre-commit-config.yaml", ".pre-commit-config.yaml"),
)


@dataclass(frozen=True)
class Scaffold:
    """What ``init`` did: the files written, the existing ones kept, the ones extended."""

    written: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    extended: tuple[str, ...] = ()


def template(name: str) -> str:
    """The text of one template of ``apimctl/templates``."""
    return resources.files("apimctl").joinpath("templates", name).read_text(encoding="utf-8")


def write_skeleton(root: Path, *, with_manifest: bool, force: bool = False) -> Scaffold:
    """Write the skeleton into ``root`` (created when missing)."""
    if root.exists() and not root.is_dir():
        raise ApimctlError(f"{root}: not a directory")
    files = [*([TEMPLATE_MANIFEST] if with_manifest else []), *SKELETON]
    written: list[str] = []
    kept: list[str] = []
    for name, destination in files:
        path = root / destination
        if path.exists() and not force:
            kept.append(destination)
            continue
        _write(path, template(name))
        written.append(destination)
    extended: list[str] = []
    ignore_name, ignore_path = GITIGNORE
    existed = (root / ignore_path).exists()
    if _extend_gitignore(root / ignore_path, template(ignore_name)):
        (extended if existed else written).append(ignore_path)
    return Scaffold(tuple(written), tuple(kept), tuple(extended))


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ApimctlError(f"cannot write {path}: {exc.strerror or exc}") from None


def _extend_gitignore(path: Path, wanted: str) -> bool:
    """Add the lines of ``wanted`` that ``path`` lacks; whether anything was added."""
    try:
        have = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise ApimctlError(f"cannot read {path}: {exc.strerror or exc}") from None
    present = {line.strip() for line in have.splitlines()}
    missing = [line for line in wanted.splitlines()
               if line.strip() and not line.startswith("#") and line.strip() not in present]
    if not missing:
        return False
    head = [line for line in wanted.splitlines() if line.startswith("#")][:1]
    sep = "" if not have or have.endswith("\n") else "\n"
    gap = "\n" if have else ""
    _write(path, have + sep + gap + "\n".join([*head, *missing]) + "\n")
    return True
