"""Compositional-ARC: visual-grammar episodes with a systematicity-aware split (seeds 000 and 002).

This folder holds the family's plug-ins (spec reader, build, checks, evaluator, prompts, card text,
viewer, exporter); the episode sampler and grammar live in :mod:`cogen.carc`, which the metrics
also use. The record below is all that the shared machinery reads before it imports any of them.
"""

from pathlib import Path
from types import MappingProxyType

from cogen.family import ID_NOTE, Family, Option

FAMILY = Family(
    name="carc",
    title="Compositional-ARC",
    description="visual-grammar episodes: study examples, then queries of a level-2 composition",
    spec_parser="cogen.families.carc.spec:parse",
    builder="cogen.families.carc.build:CarcBuilder",
    shard_writer="cogen.families.carc.build:shard_tables",
    checks="cogen.families.carc.checks:checks",
    evaluator="cogen.families.carc.evaluate",
    prompts="cogen.families.carc.prompts:carc_split_prompts",
    card="cogen.families.carc.card:CARD",
    viewer="cogen.families.carc.view",
    exporter="cogen.families.carc.export",
    testing="cogen.families.carc.testing",
    # the systematicity-aware split holds whole triplets out of training: its validation and test hold them
    held_out_splits=("validation", "test"),
    column_notes=MappingProxyType({
        **ID_NOTE,
        "episode": "index of the episode in the generated pool",
        "study_inputs": "study examples: input grids (10x10 each)",
        "study_outputs": "study examples: output grids",
        "study_roles": "what each study example shows (shape, color, neighbor, shape+color, ...)",
        "query_inputs": "queries: input grids, to be solved with the level-2 composition",
        "query_outputs": "queries: target grids",
        "query_roles": "what each query asks for",
        "shot_inputs": "level-2 examples (inputs) that the 3-shot configs use as study examples",
        "shot_outputs": "level-2 examples (outputs)",
        "triplet": "the episode's transformation triplet",
        "transformations": "the transformations of the shape, colour and neighbour roles",
        "transformation_kwargs": "their parameters (JSON)",
        "rotation_type_8": "what rotation_type 8 does in this dataset: counter-clockwise (the paper) or "
                           "clockwise (the public code)",
        "shape_indicator": "cells of the shape indicator, from its top-left corner",
        "color_indicator": "the colour indicator",
        "neighbor_indicator": "cells of the neighbour indicator on the grid",
        "neighbor_color": "colour of the neighbour indicator",
    }),
    reply_parser="cogen.llm.parse:parse_reply",
    options=(
        Option("queries", "score all queries of each episode, or only the first (the paper's LLM protocol).",
               ("eval", "baseline"), default="all", choices=("all", "first")),
        Option("queries", "prompt for the first query of each episode (the paper's protocol), or all.",
               ("prompts",), default="first", choices=("first", "all")),
        Option("selection", "paper: one query per episode, as the paper.", ("prompts",), default="cogen",
               choices=("cogen", "paper")),
        Option("images", "draw each prompt's study pairs and query into a PNG in this folder (text+image "
                         "prompts); the record names it under 'image'.", ("prompts",), Path),
        Option("no_code", "add the paper's 'Do not generate any code to solve the task' line.", ("prompts",),
               bool, default=False),
    ),
)
