"""Help texts speak of what a user has: the README, not the project's design documents."""

from __future__ import annotations

import click
import pytest

from apimctl.cli import cli

NOT_SHIPPED = ("SUPPLEMENT", "DESIGN.md", "spec/", "STYLE")


@pytest.mark.parametrize("name", [None, *sorted(cli.commands)])
def test_help_names_no_document_users_lack(name: str | None) -> None:
    root = click.Context(cli, info_name="apimctl")
    if name is None:
        text = cli.get_help(root)
    else:
        command = cli.commands[name]
        text = command.get_help(click.Context(command, info_name=name, parent=root))
    for word in NOT_SHIPPED:
        assert word not in text, (name, word)
