"""A fourth family, built from ``tests/`` alone: every grid mirrored left to right.

It shows what a family needs (``docs/architecture.md``, "Checklist: adding a family"): this record
and the seven modules it names, nothing in cogen's generic packages. ``tests/test_families.py``
registers it for one test, then builds, verifies, scores, prompts and cards it.
"""

from types import MappingProxyType

from cogen.family import Family

TOY = Family(
    name="toy",
    title="Toy mirrors",
    description="random grids mirrored left to right",
    spec_parser="toy_family.spec:parse",
    builder="toy_family.build:ToyBuilder",
    shard_writer="toy_family.build:shard_tables",
    checks="toy_family.checks:checks",
    evaluator="toy_family.evaluate",
    prompts="toy_family.prompts:prompts",
    card="toy_family.card:CARD",
    viewer="toy_family.view",
    column_notes=MappingProxyType({"id": "config, split and index", "input": "a random grid",
                                   "output": "the input mirrored left to right"}),
    eval_help=MappingProxyType({}),
)
