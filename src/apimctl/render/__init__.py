"""Renderers: turn plans (and apply results) into text, JSON or Markdown.

The CLI picks one by ``--format`` and prints what it returns; renderers never print, never
touch the network, and never let a secret value through (see :mod:`apimctl.render.style`).
"""
