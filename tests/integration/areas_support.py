"""What the several-areas tests share: areas seeded on ``apimctl serve`` (each area a token
of one server, reached through a profile of its own), the manifests they are seeded from,
and ``apimctl`` runs with the profiles and the secrets the exports reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .apply_support import Completed, Server, apimctl_env, run_in_process

SECRET = "areas-b4ck3nd-s3cr3t"
REFERENCE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Area:
    """One area: its name, the server holding it and its token there."""

    name: str
    server: Server
    token: str

    @property
    def variable(self) -> str:
        return f"AREA_TOKEN_{self.name.upper()}"


@dataclass
class Fleet:
    """Several areas and the config file naming a profile for each."""

    home: Path
    areas: list[Area] = field(default_factory=list)

    def add(self, name: str, server: Server) -> Area:
        area = Area(name, server, server.fresh_token())
        self.areas.append(area)
        lines = []
        for a in self.areas:
            lines += [f"[profiles.{a.name}]", f'url = "{a.server.url}"', f'token = "${{{a.variable}}}"', ""]
        config = self.home / "apimctl" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("\n".join(lines))
        return area

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        first = self.areas[0]
        env = apimctl_env(first.server, first.token)
        env.update({a.variable: a.token for a in self.areas})
        env["XDG_CONFIG_HOME"] = str(self.home)
        env.update(extra or {})
        return env

    def run(self, *args: str, area: Area | None = None, env: Mapping[str, str] | None = None) -> Completed:
        """``apimctl ARGS``; with ``area``: against that area (its URL and token)."""
        environ = self.env(env)
        if area is not None:
            environ.update({"APIMCTL_URL": area.server.url, "APIMCTL_TOKEN": area.token})
        return run_in_process(list(args), environ)

    def seed(self, area: Area, folder: Path) -> None:
        done = self.run("apply", "--auto-approve", str(folder), area=area, env=secrets_of([folder]))
        assert done.returncode == 0, done.stdout + done.stderr

    def plan(self, area: Area, *args: str) -> Completed:
        """``plan --detailed-exitcode ARGS`` against ``area``, the secrets the files name set."""
        folders = [Path(a) for a in args if not a.startswith("-")]
        return self.run("plan", "--detailed-exitcode", *args, area=area, env=secrets_of(folders))


def secrets_of(folders: Sequence[Path]) -> dict[str, str]:
    """A value for every ``${VAR}`` the YAML files in ``folders`` reference that no
    ``variables.env`` there gives: every area is seeded with the one :data:`SECRET`, so the
    secret an export references has that value whatever its variable is called."""
    found: dict[str, str] = {}
    given = {line.split("=", 1)[0] for folder in folders if (folder / "variables.env").is_file()
             for line in (folder / "variables.env").read_text().splitlines() if "=" in line}
    for folder in folders:
        files = [folder] if folder.is_file() else sorted(folder.glob("*.y*ml"))
        for path in files:
            for name in REFERENCE.findall(path.read_text()):
                if name not in given:
                    found.setdefault(name, SECRET)
    return found


def area_manifest(folder: Path, *, prefix: str = "", host: str = "api.example.com",
                  backend: str = "backend.example.com", qps: int = 10, extra_service: bool = False,
                  extra_endpoint: bool = False, secret: bool = True) -> Path:
    """An area's manifests: a domain, a role, two services (two endpoints each, one with a
    back-end secret), a package of two plans; names start with ``prefix``, endpoints answer
    on ``host`` and call ``backend``. ``extra_service``/``extra_endpoint``: objects only this
    area has."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["domains: [example.com]", "roles: [Partners]", "services:"]
    services = ["Payments", "Weather", *(["Reports"] if extra_service else [])]
    for i, base in enumerate(services):
        lines += [f"  - name: {prefix}{base}", '    version: "1"', f"    qpsLimitOverall: {qps if i == 0 else 5}",
                  "    roles: [Partners]", "    endpoints:"]
        endpoints = ["Forecast", "Alerts", *(["Beta"] if extra_endpoint and i == 0 else [])]
        for ep in endpoints:
            lines += [f"      - name: {ep}", f"        requestPathAlias: /{base.lower()}/{ep.lower()}",
                      f"        trafficManagerDomain: {host}", f"        publicDomains: [{host}]",
                      f"        systemDomains: [{backend}]",
                      f"        outboundRequestTargetPath: /v1/{ep.lower()}"]
            if secret and ep == "Forecast" and i == 0:
                lines += ["        systemDomainCredentialKey: svc",
                          '        systemDomainCredentialSecret: "${PAYMENTS_SECRET}"']
    lines += ["packages:", f"  - name: {prefix}Partners", "    plans:",
              "      - name: Gold", "        qpsLimitCeiling: 10", "        roles: [Partners]",
              f"        services: [{{name: {prefix}Payments, endpoints: [Forecast]}}]",
              "      - name: Silver", f"        services: [{{name: {prefix}Weather}}]"]
    (folder / "main.yaml").write_text("\n".join(lines) + "\n")
    return folder
