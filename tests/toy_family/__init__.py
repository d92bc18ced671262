"""A family built from ``tests/`` alone with the family kit (:mod:`cogen.kit`): random grids mirrored left to right.

It has the shape of a real family (``docs/architecture.md``, "Checklist: adding a family"): in-domain and
out-of-domain splits (larger grids out of domain), every input grid unique across the splits (dedup, the
regenerations recorded in the manifest), checks of its own with a tamper each. ``tests/test_families.py`` registers
it for a test, then runs the same contract tests as on every registered family, and builds, verifies, scores,
prompts and cards it; ``tests/test_verify_tamper.py`` runs its tampers.
"""

from types import MappingProxyType

from cogen.family import ID_NOTE, Family

TOY = Family(
    name="toy",
    title="Toy mirrors",
    description="random grids mirrored left to right",
    spec_parser="toy_family.spec:parse",
    builder="toy_family.build:ToyBuilder",
    shard_writer="toy_family.build:shard_tables",
    checks="toy_family.checks:ToyChecks",
    evaluator="toy_family.evaluate:EVALUATOR",
    prompts="toy_family.prompts:prompts",
    card="toy_family.card:CARD",
    viewer="toy_family.view:VIEWER",
    testing="toy_family.testing",
    column_notes=MappingProxyType({**ID_NOTE, "input": "a random grid of 0s and 1s",
                                   "output": "the input mirrored left to right"}),
    reply_parser="cogen.llm.parse:parse_reply",
)
