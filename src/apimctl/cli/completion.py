"""``apimctl completion bash|zsh|fish``: print the shell completion script.

The script is click's own (``click.shell_completion``), the same as
``_APIMCTL_COMPLETE=bash_source apimctl`` prints; this command only names it. Install::

    apimctl completion bash > ~/.local/share/bash-completion/completions/apimctl
    apimctl completion zsh > "${fpath[1]}/_apimctl"
    apimctl completion fish > ~/.config/fish/completions/apimctl.fish
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from apimctl.cli.common import EXIT_OK

SHELLS = ("bash", "zsh", "fish")
PROG = "apimctl"
COMPLETE_VAR = "_APIMCTL_COMPLETE"


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def command(ctx: click.Context, /, shell: str) -> int:
    """Print the completion script of SHELL (bash, zsh or fish) on stdout.

    bash: apimctl completion bash > ~/.local/share/bash-completion/completions/apimctl;
    zsh: apimctl completion zsh > "${fpath[1]}/_apimctl";
    fish: apimctl completion fish > ~/.config/fish/completions/apimctl.fish.
    """
    root = ctx.find_root().command
    kind = get_completion_class(shell)
    if kind is None:  # pragma: no cover - click ships all three
        raise click.UsageError(f"no completion for {shell}")
    click.echo(kind(root, {}, PROG, COMPLETE_VAR).source(), nl=False)
    return EXIT_OK
