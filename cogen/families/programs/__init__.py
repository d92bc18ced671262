"""String-to-grid programs: functions whose 16 pairs a model explains with a program (seed 003).

This folder holds the functions (``functions.py``, ``styles.py``), the program score by static
analysis (``score.py``, ``analysis.py``, ``values.py``, ``variables.py``, ``entry.py``, ``code.py``,
``tables.py``) and the family's plug-ins; programs run confined by :mod:`cogen.sandbox`. The
record below is all that the shared machinery reads before it imports any of them.
"""

from types import MappingProxyType

from cogen.family import ID_NOTE, Family, Option

EVAL = ("eval", "report")  # the options of cogen eval and of cogen eval programs

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
    options=(
        Option("timeout", "CPU seconds a program may use for all 16 inputs.", EVAL, float, default=2.0,
               minimum=0.01),
        Option("memory_mb", "address space a program may use, in MB.", EVAL, int, default=256, minimum=32),
        Option("workers", "sandbox processes running programs in parallel; one per core.", EVAL, int,
               short="-w", minimum=1),
        Option("low_length", "L(P+) at or below this is low (T1/T3); (L_s + L_z) / 2 = 180.", EVAL, float),
        Option("low_errors", "E at or below this is low (T1/T2); d / 4 = 4.", EVAL, float),
        Option("explain", "print each combination and output value counted, with its source line.", ("eval",),
               bool, default=False),
        Option("unsafe", "run the programs without kernel isolation, where bubblewrap is unavailable: they can "
                         "then read and change your files. Only for programs you trust. When not given: the environment "
                         "variable COGEN_UNSAFE_RUN_UNTRUSTED_CODE.", EVAL, bool,
               flag="--unsafe-run-untrusted-code"),
        Option("version", "the prompt text's version (programs-v1, the only one this release writes).",
               ("prompts",), choices=("programs-v1",), flag="--prompt-version"),
    ),
)
