"""COGITAO: sequences of object transformations applied to grids of objects from the bank (seed 001).

This folder holds everything that knows the family: its spec reader (``spec.py``, ``schema.py``), its
sampler (``generate/``, Numba kernels over :mod:`cogen.engine` and :mod:`cogen.bank`), its build
plug-in, ``cogen verify`` checks, evaluator, prompts, card text, viewer, exporter and stream. The
record below is all that the shared machinery reads before it imports any of them.
"""

from types import MappingProxyType

from cogen.family import ID_NOTE, Family, Option

PROMPTS, EVAL = ("prompts",), ("eval",)

FAMILY = Family(
    name="cogitao",
    title="COGITAO",
    description="sequences of object transformations applied to grids of bank objects",
    spec_parser="cogen.families.cogitao.spec:parse",
    builder="cogen.families.cogitao.build:CogitaoBuilder",
    shard_writer="cogen.families.cogitao.build:shard_tables",
    checks="cogen.families.cogitao.checks:checks",
    evaluator="cogen.families.cogitao.evaluate",
    prompts="cogen.families.cogitao.prompts:cogitao_split_prompts",
    card="cogen.families.cogitao.card:CARD",
    viewer="cogen.families.cogitao.view",
    stream="cogen.families.cogitao.stream:stream_source",
    exporter="cogen.families.cogitao.export",
    sample="cogen.families.cogitao.generate.single:sample_one",
    testing="cogen.families.cogitao.testing",
    column_notes=MappingProxyType({
        **ID_NOTE,
        "input": "input grid, true height x width, colours 0-9 (0 = background)",
        "output": "output grid after the transformations, true height x width",
        "transformations": "the transformation sequence, applied in order (names of the table below)",
        "n_objects": "number of objects on the input grid",
        "object_ids": "object-bank ids of the objects, in placement order",
        "object_positions": "top-left (row, col) of each object on the input grid",
        "frames": "sequential builds (`output: {frames: true}`): depth + 1 whole grids, the input then the grid "
                  "after each step, exactly the frames the sampler checked",
        "actions": "sequential builds: the transformation that makes each frame from the one before",
        "object_boxes": "object-frame builds (`output: {object_frames: true}`): per object (in `object_ids` order), "
                        "per step (0 = input ... depth = output), its box (row, col, height, width) on the grid",
        "object_grids": "object-frame builds: per object, per step, its tight height x width array (0 = background, "
                        "so its mask is `!= 0`), exactly the objects the sampler checked; drawn at their boxes "
                        "they make the frames",
        "input_image": "RGB builds (`render:`): the input drawn as an image (PNG or JPEG; `datasets.Image`); "
                       "`cogen.render.to_grid` reads it back",
        "output_image": "RGB builds (`render:`): the output drawn as an image",
    }),
    reply_parser="cogen.llm.parse:parse_reply",
    options=(
        Option("regime", "task codes: explicit (the transformation names) or coded (t1, t2, ...).",
               PROMPTS, default="explicit", choices=("explicit", "coded")),
        Option("examples", "in-context examples per prompt (from train).", PROMPTS, int, default=5, minimum=1),
        Option("seed", "seed of the in-context example draw and of --per-experiment sampling; "
                       "0, or 42 with --selection paper.", PROMPTS, int),
        Option("selection", "cogen (cogen's example rule) or paper (the paper's selection and sampling of App. C).",
               PROMPTS, default="cogen", choices=("cogen", "paper")),
        Option("per_experiment", "prompts per config (the paper: 10, seed 42); every row, or 10 with "
                                 "--selection paper.", PROMPTS, int, minimum=1),
        Option("pad", "fixed HxW of the padded per-pixel accuracy (e.g. 30x30); the experiment's largest grid.",
               EVAL, parse="cogen.families.cogitao.evaluate:parse_pad"),
        Option("stubbornness", "compute stubbornness (OOD splits of composition experiments).", EVAL, bool,
               default=True, negatable=True),
    ),
)
