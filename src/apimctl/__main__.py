"""``python -m apimctl``: same as the ``apimctl`` console script."""

from apimctl.cli import main

main()
