"""Several areas in one repository: ``apimctl export --area NAME=TARGET ... --into DIR``,
``apimctl diff`` and ``apimctl promote``.

A platform team runs dev, QA and prod (per region, per partner), edited by hand for years.
This package turns them into one base holding what they share and one overlay per area
holding only what differs there, compares any two of them, and moves a difference from one
to another:

- ``reading`` reads the areas concurrently (each in one list call per 1,000 top-level
  objects) and exports each one's documents (:func:`apimctl.export.export_documents`: the
  normal forms ``plan`` compares, defaults left out, secrets as ``${VAR}`` references);
- ``rules`` reads the ``--rewrite`` file: values that differ by a rule (a host per area, a
  name prefix) become ``${VAR}`` references of the base, each area's value in its overlay's
  ``variables.env`` (:mod:`apimctl.manifests.area_values`);
- ``split`` computes the base and the overlays (an object most areas have is in the base,
  the others delete it with ``$patch: delete``; an object fewer have is added by their
  overlays with ``$patch: add``; a field goes to the base with the value most areas give it);
- ``repository`` writes them (``DIR/base``, ``DIR/overlays/NAME``), all or nothing;
- ``compare`` lists the differences between two sides per object (``apimctl diff``);
- ``promote`` writes chosen differences into an overlay, keeping the file's comments.
"""
