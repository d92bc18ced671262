"""The family kit: everything a family folder (``cogen/families/<name>/``) needs from cogen, public, by role.

A family imports the kit, the public layer-0 modules (:mod:`cogen.errors`, :mod:`cogen.family` for its record,
:mod:`cogen.rng`, and for Numba kernels :mod:`cogen.jit` and :mod:`cogen.slots`), the shared domains and services of
layer 1 it uses (the transformation engine, the object bank, rendering, the sandbox ...) and the metrics; never a
private module of a generic package (``tests/test_architecture.py`` checks it). Each module of the kit
matches a module of the folder, and is imported only where needed (importing :mod:`cogen.kit` loads nothing):

========================  ===========================================================================
:mod:`cogen.kit.spec`     located YAML and field readers for ``spec.py``: errors name file, line and field
:mod:`cogen.kit.build`    :class:`~cogen.kit.build.FamilyBuilder` (ids, shards, dedup with the manifest's
                          regenerations, ``stats``, regeneration for ``cogen verify``), shard tasks and plans
:mod:`cogen.kit.arrow`    Arrow columns made from NumPy buffers, and read back
:mod:`cogen.kit.checks`   :class:`~cogen.kit.checks.FamilyChecks` (determinism built in) and collectors for
                          re-derivation, held-out rules and uniqueness
:mod:`cogen.kit.evaluate` predictions files, format errors, :class:`~cogen.kit.evaluate.GridEvaluator`
:mod:`cogen.kit.view`     the items a row is drawn with, :class:`~cogen.kit.view.GridViewer`
:mod:`cogen.kit.prompts`  the :class:`~cogen.kit.prompts.Prompt` record, grids as text, seeded draws
:mod:`cogen.kit.card`     :class:`~cogen.kit.card.FamilyCard`, papers, differences, preview drawing
:mod:`cogen.kit.export`   export records, ARC tasks, column views
:mod:`cogen.kit.testing`  what the ``testing`` role gives the shared tests: the tiny build, the tampers
========================  ===========================================================================

``docs/architecture.md`` ("Checklist: adding a family") says what a family writes; ``tests/toy_family/`` is a
complete one made with the kit.
"""
