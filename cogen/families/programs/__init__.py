"""String-to-grid programs: functions whose 16 pairs a model explains with a program (seed 003).

This folder holds the functions (``functions.py``, ``styles.py``), the program score by static
analysis (``score.py``, ``analysis.py``, ``values.py``, ``variables.py``, ``entry.py``, ``code.py``,
``tables.py``) and the family's plug-ins; programs run confined by :mod:`cogen.sandbox`. The
record below is all that the shared machinery reads before it imports any of them.
"""

from types import MappingProxyType

from cogen.family import ID_NOTE, Family

FAMILY = Family(
    name="programs",
    title="String-to-grid programs",
    description="string-to-grid functions whose 16 pairs a model explains with a program (seed 003)",
    spec_parser="cogen.families.programs.spec:parse",
    builder="cogen.families.programs.build:ProgramsBuilder",
    shard_writer="cogen.families.programs.build:shard_tables",
    checks="cogen.families.programs.checks:checks",
    evaluator="cogen.families.programs.evaluate",
    prompts="cogen.families.programs.prompts:split_prompts",
    card="cogen.families.programs.card:CARD",
    viewer="cogen.families.programs.view",
    report="cogen.families.programs.evaluate:evaluate_table",
    report_help="Score program replies against every string-to-grid config their ids name: the paper's Tables 1 "
                "and 2. Programs run confined by the kernel (bubblewrap); without it this refuses to run them.",
    testing="cogen.families.programs.testing",
    # nothing is held out: a model sees all 16 pairs of a function and is scored on its program
    held_out_splits=(),
    column_notes=MappingProxyType({
        **ID_NOTE,
        "setting": "how the letters' cells are laid out (horizontal, block, vertical, random, random_index, "
                   "horizontal_random)",
        "inputs": "the 16 input strings (A/B, C/D, E/F, G/H), in lexicographic order",
        "outputs": "the output grid of each input: 4 lines of 4 '.'/'*' joined by newlines",
        "cell_groups": "the 4x4 grid of the character (0-3) that controls each cell",
        "patterns": "what each character's first letter writes on its 4 cells, row-major (the second letter "
                    "writes the complement)",
        "character_rows": "the row each character controls (Random Index: the permutation; Horizontal+Random: "
                          "the two kept rows), -1 for none",
        "sample_inputs": "each input as a 1x4 grid: 0 where a character is its first letter, 1 the second",
        "sample_outputs": "each output as a 4x4 grid: 0 for '.', 1 for '*'",
    }),
    eval_help=MappingProxyType({
        "predictions": "program replies (JSONL: id, reply, model, prompt_version).",
        "timeout": "CPU seconds a program may use for all 16 inputs; default 2.",
        "memory_mb": "address space a program may use, in MB; default 256.",
        "workers": "sandbox processes running programs in parallel; default one per core.",
        "low_length": "L(P+) at or below this is low (T1/T3); default (L_s + L_z) / 2 = 180.",
        "low_errors": "E at or below this is low (T1/T2); default d / 4 = 4.",
        "explain": "print each combination and output value counted, with its source line.",
        "markdown": "also write the paper's Tables 1 and 2 (L(P+) | E | C(P) per setting, n_valid) as Markdown.",
        "unsafe": "run the programs without kernel isolation, where bubblewrap is unavailable: they can then "
                  "read and change your files. Only for programs you trust.",
    }),
)
