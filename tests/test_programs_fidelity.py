"""Replies as models really write them, scored as seed 003's definitions score them (the fidelity
review's F1-F9). Each test's comment computes the paper's value by hand: L(P⁺) = Σn_z + Σm_z,
L(P) = L(P⁺) + 20 E, C = 100 (320 - clip(L(P), 40, 320)) / 280."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_support import build_programs
from typer.testing import CliRunner

from cogen.cli import app
from cogen.families.programs.analysis import analyze
from cogen.families.programs.code import extract_code
from cogen.families.programs.evaluate import evaluate_table
from cogen.families.programs.functions import INPUTS
from cogen.families.programs.score import ModelSummary, Program, program_type, score_programs, table
from cogen.families.programs.tables import markdown_tables
from cogen.folder import read_split
from cogen.sandbox import Sandbox


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    settings = ["horizontal", "block", "vertical", "random", "random_index", "horizontal_random"]
    return build_programs(tmp_path_factory, "F", 2, settings, seed=11)


@pytest.fixture(scope="module")
def horizontal(data) -> dict:
    return read_split(data, "F-horizontal", "test").table.to_pylist()[0]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2) as box:
        yield box


def _letter_rows(row) -> dict[str, str]:
    """Horizontal: letter i of the input writes row i; the first letters' rows are those of ACEG, the
    second letters' those of BDFH."""
    first, second = row["outputs"][0].split("\n"), row["outputs"][-1].split("\n")
    return {letter: (first if k % 2 == 0 else second)[k // 2] for k, letter in enumerate("ABCDEFGH")}


def _rows_dict(row) -> str:
    return "ROWS = " + repr(_letter_rows(row)) + "\n"


def _score(code: str, row, sandbox) -> dict:
    wanted = [grid.replace("\n", "") for grid in row["outputs"]]
    (score,), _ = score_programs([Program(row["id"], "m", code)], {row["id"]: ("horizontal", wanted)}, sandbox)
    return {"n": score.sum_n, "m": score.sum_m, "E": score.errors, "L": score.length, "C": round(score.c, 2),
            "type": program_type(score.l_plus, score.errors), "function": score.function}


def _int_grid(text: str) -> str:
    return repr([[int(c == "*") for c in line] for line in text.split("\n")])


# ---------------------------------------------------------------- F1: outputs in any encoding
def test_f1_an_enumeration_written_with_0_1_ints_is_zero_compositionality(horizontal, sandbox):
    branches = [f'    {"if" if k == 0 else "elif"} s == "{text}":\n        return {_int_grid(grid)}'
                for k, (text, grid) in enumerate(zip(INPUTS, horizontal["outputs"], strict=True))]
    code = "def grid(s):\n" + "\n".join(branches) + \
        '\n\n\ndef f(s):\n    return "\\n".join("".join(".*"[v] for v in row) for row in grid(s))\n'
    # Hand (paper): 16 branches, each {4 input values} -> 16 cells: Σn = 16 x 4 = 64, Σm = 16 x 16 = 256,
    # plus the converter's two output values "." and "*": Σm = 258, L(P⁺) = 322, E = 0, clip(322) = 320,
    # C = 0, type T2 (the review's 320 sets the converter aside). Before: L(P⁺) = 2, C = 100, T1.
    assert _score(code, horizontal, sandbox) == {"n": 64, "m": 258, "E": 0, "L": 322, "C": 0.0, "type": "T2",
                                                "function": "f"}


def test_f1_an_enumeration_written_with_0_1_strings_counts_every_cell(horizontal, sandbox):
    branches = [f'    {"if" if k == 0 else "elif"} s == "{text}":\n        return {grid.translate(str.maketrans(".*", "01"))!r}'
                for k, (text, grid) in enumerate(zip(INPUTS, horizontal["outputs"], strict=True))]
    code = "def grid(s):\n" + "\n".join(branches) + \
        '\n\n\ndef f(s):\n    return grid(s).replace("0", ".").replace("1", "*")\n'
    # Hand: each "0110\n..." grid string spells 16 cells: Σn = 64, Σm = 256; the converter writes "."
    # and "*" (2; the single digits "0" and "1" spell no grid): L(P⁺) = 322, C = 0, T2.
    assert _score(code, horizontal, sandbox)["L"] == 322


# ---------------------------------------------------------------- F2: the entry point
def test_f2_the_main_function_is_called_not_the_helper_after_it(horizontal, sandbox):
    code = _rows_dict(horizontal) + \
        '\n\ndef solve(s):\n    return "\\n".join(lookup(c) for c in s)\n\n\ndef lookup(c):\n    return ROWS[c]\n'
    # Hand: one dict of 8 letters -> 4 cells: Σn = 8, Σm = 32, L(P⁺) = 40; solve is the function no other
    # function uses, and it is correct: E = 0, L(P) = 40, C = 100, T1. Before: lookup was called, E = 16.
    assert _score(code, horizontal, sandbox) == {"n": 8, "m": 32, "E": 0, "L": 40, "C": 100.0, "type": "T1",
                                                "function": "solve"}


def test_f2_make_grid_is_called_not_print_grid(horizontal, sandbox):
    code = _rows_dict(horizontal) + '\n\ndef make_grid(s):\n    return [ROWS[c] for c in s]\n\n\n' \
        'def print_grid(grid):\n    print("\\n".join(grid))\n\n\nif __name__ == "__main__":\n' \
        '    print_grid(make_grid(input()))\n'
    # Hand: Σn = 8, Σm = 32; make_grid returns the grid (print_grid returns nothing): E = 0, C = 100.
    assert _score(code, horizontal, sandbox)["function"] == "make_grid"
    assert _score(code, horizontal, sandbox)["C"] == 100.0


# ---------------------------------------------------------------- F3: a row per element
def test_f3_a_list_of_16_pairs_is_16_rows(horizontal, sandbox):
    pairs = "".join(f"    ({text!r}, {grid!r}),\n" for text, grid in zip(INPUTS, horizontal["outputs"], strict=True))
    code = f"PAIRS = [\n{pairs}]\n\n\ndef f(s):\n    return dict(PAIRS)[s]\n"
    # Hand: each (input, grid) element is a row: {4 input values} + 16 cells; 16 rows: Σn = 64, Σm = 256,
    # L(P⁺) = 320 = L_z, E = 0, C = 0, T2. Before: one statement = one row: Σn = 8, L(P⁺) = 264, C = 20.
    assert _score(code, horizontal, sandbox) == {"n": 64, "m": 256, "E": 0, "L": 320, "C": 0.0, "type": "T2",
                                                "function": "f"}


def test_f3_rows_of_one_grid_stay_one_combination():
    # Hand: a list of 4 row strings under one test is 4 rows of the same combination {A}: Σn = 1 (the
    # repeats count once), Σm = 16; a tuple pairing one input with one grid is one row: {A, C} + 4 cells.
    analysis = analyze('if s[0] == "A":\n    g = ["....", "*...", "....", "...."]\nT = [("AC", "*.*.")]\n')
    assert (analysis.sum_n, analysis.sum_m) == (1 + 2, 16 + 4)


# ---------------------------------------------------------------- F4: encoded inputs
def test_f4_a_table_keyed_by_bit_tuples_counts_its_input_values(horizontal, sandbox):
    def bits(text):
        return tuple(int(c in "BDFH") for c in text)

    entries = "".join(f"    {bits(text)!r}: {grid!r},\n" for text, grid in zip(INPUTS, horizontal["outputs"], strict=True))
    code = f"TABLE = {{\n{entries}}}\n\n\ndef f(s):\n    return TABLE[tuple(int(c in 'BDFH') for c in s)]\n"
    # Hand: each key (0, 1, 1, 0) holds one value of each of the 4 components: Σn = 16 x 4 = 64; each value
    # 16 cells: Σm = 256; L(P⁺) = 320, E = 0, C = 0, T2. Before: Σn = 0, L(P⁺) = 256, C = 22.86.
    assert _score(code, horizontal, sandbox) == {"n": 64, "m": 256, "E": 0, "L": 320, "C": 0.0, "type": "T2",
                                                "function": "f"}


def test_f4_pairs_pasted_as_text_count_their_input_values(horizontal, sandbox):
    blob = "".join(f"{text}\n{grid}\n" for text, grid in zip(INPUTS, horizontal["outputs"], strict=True))
    code = f'DATA = """\n{blob}"""\n\n\ndef f(s):\n    lines = DATA.split()\n    k = lines.index(s)\n' \
        '    return "\\n".join(lines[k + 1:k + 5])\n'
    # Hand: the text is a table of 16 entries: each word ACEG... holds 4 input values (Σn = 64) and each
    # grid 16 cells (Σm = 256): L(P⁺) = 320, E = 0, C = 0, T2. Before: Σn = 0, C = 22.86.
    assert _score(code, horizontal, sandbox) == {"n": 64, "m": 256, "E": 0, "L": 320, "C": 0.0, "type": "T2",
                                                "function": "f"}


# ---------------------------------------------------------------- F5: printed grids, scripts
def test_f5_a_function_that_prints_its_grid(horizontal, sandbox):
    code = _rows_dict(horizontal) + '\n\ndef f(s):\n    print("\\n".join(ROWS[c] for c in s))\n'
    # Hand: Σn = 8, Σm = 32; P outputs y_i on x_i (printed): E = 0, L(P) = 40, C = 100, T1. Before: E = 16.
    assert _score(code, horizontal, sandbox) == {"n": 8, "m": 32, "E": 0, "L": 40, "C": 100.0, "type": "T1",
                                                "function": "f"}


def test_f5_a_script_that_reads_input_and_prints(horizontal, sandbox):
    code = _rows_dict(horizontal) + 's = input("Letters? ")\nprint("\\n".join(ROWS[c] for c in s))\n'
    # Hand: as above, run once per input with the input on stdin (the prompt is not output): E = 0, C = 100.
    assert _score(code, horizontal, sandbox) == {"n": 8, "m": 32, "E": 0, "L": 40, "C": 100.0, "type": "T1",
                                                "function": None}


# ---------------------------------------------------------------- F6, F9: n_valid and the paper's layout
def _summary(model, setting, l_plus, errors, c, valid=30):
    return ModelSummary(model, setting, 30, l_plus, errors, l_plus + 20 * errors, c, "T1", {}, 0.0, 0.0, valid)


def test_f9_the_markdown_reproduces_tables_1_and_2_of_the_paper():
    # DeepSeek-R1 in seed 003: means over 30 functions are k/30. Table 1: Horizontal 43.23 / 1.33 / 89.80
    # (1297/30, 40/30), Block 254.43 / 3.63 / 7.62, Vertical 254.77 / 6.00 / 0.00, Random 270.00 / 5.13 / 0.00.
    # Table 2 by hand: Random Index 174.07 - 43.23 = 3925/30 = +130.83; 4.17 - 1.33 = 85/30 = +2.83;
    # 26.54 - 89.80 = -63.26. H+R against mean(H, R): 187.30 - (1297 + 8100)/60 = +30.68;
    # 3.57 - (40 + 154)/60 = +0.33; 27.43 - (89.80 + 0.00)/2 = -17.47.
    cells = [("horizontal", 1297 / 30, 40 / 30, 89.80), ("block", 7633 / 30, 109 / 30, 7.62),
             ("vertical", 7643 / 30, 6.0, 0.0), ("random", 270.0, 154 / 30, 0.0),
             ("random_index", 5222 / 30, 125 / 30, 26.54), ("horizontal_random", 5619 / 30, 107 / 30, 27.43)]
    text = markdown_tables(table([_summary("DeepSeek-R1", *cell) for cell in cells]))
    lines = text.splitlines()
    assert "| Model | Horizontal |  |  | Block |  |  | Vertical |  |  | Random |  |  | n_valid / n |" in lines
    assert "| | L(P⁺) | E | C(P) | L(P⁺) | E | C(P) | L(P⁺) | E | C(P) | L(P⁺) | E | C(P) | |" in lines
    assert "| DeepSeek-R1 | 43.23 | 1.33 | 89.80 | 254.43 | 3.63 | 7.62 | 254.77 | 6.00 | 0.00 | 270.00 | 5.13 | " \
           "0.00 | 30/30 · 30/30 · 30/30 · 30/30 |" in lines
    assert "| Model | Random Index (H) |  |  | Horizontal+Random |  |  | n_valid / n |" in lines
    assert "| DeepSeek-R1 | 174.07 (+130.83) | 4.17 (+2.83) | 26.54 (−63.26) | 187.30 (+30.68) | 3.57 (+0.33) | " \
           "27.43 (−17.47) | 30/30 · 30/30 |" in lines
    assert not any(kind in line for line in lines if line.startswith("| DeepSeek") for kind in ("T1", "T2", "T3"))


def test_f6_invalid_replies_are_counted_in_n_valid(data, tmp_path):
    rows = read_split(data, "F-horizontal", "test").table.to_pylist()
    code = _rows_dict(rows[0]) + '\n\ndef f(s):\n    return "\\n".join(ROWS[c] for c in s)\n'
    records = [{"id": rows[0]["id"], "model": "one of two", "reply": f"```python\n{code}```"},
               {"id": rows[1]["id"], "model": "one of two", "reply": "I cannot do this."}]
    replies = tmp_path / "r.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = evaluate_table(data, replies)
    # Hand: function 1 correct (L(P⁺) 40, E 0, C 100); function 2 has no code (L(P⁺) 0, E 16, C 0):
    # means 20.00 / 8.00 / 50.00 over n = 2, of which n_valid = 1.
    assert "| one of two | 20.00 | 8.00 | 50.00 | 1/2 |" in report["markdown"].splitlines()
    assert report["report"]["cells"]["one of two"]["horizontal"]["valid"] == 1


def test_f9_cogen_eval_programs_prints_both_tables(data, tmp_path):
    records = []
    for config in ("F-horizontal", "F-random", "F-random-index", "F-horizontal-random"):
        for row in read_split(data, config, "test").table.to_pylist():
            enumeration = "TABLE = " + repr(dict(zip(INPUTS, row["outputs"], strict=True))) + \
                "\ndef f(s):\n    return TABLE[s]\n"
            records.append({"id": row["id"], "model": "enumerator", "reply": enumeration})
    replies = tmp_path / "r.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = CliRunner().invoke(app, ["eval", "programs", "-d", str(data), "-p", str(replies), "--markdown",
                                      str(tmp_path / "t.md"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "t.md").read_text().splitlines()
    # Hand: an enumeration is 320 / 0 / 0 in every setting, so every bracketed change is +0.00.
    assert "| enumerator | 320.00 | 0.00 | 0.00 | 320.00 | 0.00 | 0.00 | 2/2 · 2/2 |" in lines
    assert "| enumerator | 320.00 (+0.00) | 0.00 (+0.00) | 0.00 (+0.00) | 320.00 (+0.00) | 0.00 (+0.00) | " \
           "0.00 (+0.00) | 2/2 · 2/2 |" in lines


# ---------------------------------------------------------------- F7: indented fences
def test_f7_a_fence_indented_in_a_list_is_dedented(horizontal, sandbox):
    code = _rows_dict(horizontal) + '\n\ndef f(s):\n    return "\\n".join(ROWS[c] for c in s)\n'
    indented = "".join("   " + line + "\n" for line in code.splitlines())
    reply = f"1. The program:\n\n   ```python\n{indented}   ```\n2. Done."
    extracted, reason = extract_code(reply)
    # Hand: the dedented block is the program above: Σn = 8, Σm = 32, E = 0, C = 100. Before: syntax error.
    assert reason is None and extracted == code
    assert _score(extracted, horizontal, sandbox)["C"] == 100.0
    prose = f"Answer = the following program\n{code}"
    assert extract_code(prose) == (code, None)  # a prose line that looks like an assignment is dropped


# ---------------------------------------------------------------- F8: the types are cogen's
def test_f8_types_use_cogens_thresholds_and_stay_out_of_the_papers_columns():
    # DeepSeek-V3, Horizontal, in Table 1: L(P⁺) 165.27 <= 180 and E 3.20 <= 4 give cogen's T1, where the
    # paper's relative reading calls the model T2; so types are labelled cogen's, beside the tables.
    assert program_type(165.27, 3.20) == "T1"
    text = markdown_tables(table([_summary("DeepSeek-V3", "horizontal", 165.27, 3.20, 42.87)]))
    assert "| DeepSeek-V3 | 165.27 | 3.20 | 42.87 | 30/30 |" in text.splitlines()
    assert "cogen's types (decision 3: low L(P⁺) <= 180, low E <= 4; the paper types models relatively):" in text
    assert "- DeepSeek-V3: Horizontal T1" in text.splitlines()


# ---------------------------------------------------------------- obfuscation cannot buy a score (issue 34)
def _scored(code: str, row, sandbox) -> dict:
    """The JSON form of one program's score (``c`` None when withheld)."""
    wanted = [grid.replace("\n", "") for grid in row["outputs"]]
    (score,), _ = score_programs([Program(row["id"], "m", code)], {row["id"]: ("horizontal", wanted)}, sandbox)
    return score.as_dict()


def _table_bits(row) -> str:
    """The 256 cells of the 16 samples, in input order, as 0/1 (a cell '*' is 1)."""
    return "".join("1" if c == "*" else "0" for grid in row["outputs"] for c in grid.replace("\n", ""))


_INDEX = "    i = sum(1 << (3 - k) for k, c in enumerate(s) if ord(c) % 2 == 0)\n"  # B, D, F, H are even
_CELLS = '    return "\\n".join("".join(".*"[bits[16 * i + 4 * r + c]] for c in range(4)) for r in range(4))\n'


def test_a01_a_table_hidden_in_an_integer_counts_its_bits(horizontal, sandbox):
    """The second red team's A01: the 16 samples in one 256-bit integer literal."""
    table = int(_table_bits(horizontal), 2)
    code = (f"T = {hex(table)}\n\n\ndef f(s):\n{_INDEX}    v = (T >> (16 * (15 - i))) & 0xFFFF\n"
            '    return "\\n".join("".join(".*"[(v >> (15 - 4 * r - c)) & 1] for c in range(4)) for r in range(4))\n')
    # Hand: each cell of the table is one bit of T, one output value each: Σm = bit length of T (256 but
    # for leading '.' cells), + 16 for the mask 0xFFFF (above 16: data, not an index), + 2 for ".*";
    # no A-H letters: Σn = 0. E = 0. Before: L(P⁺) = 2, C = 100, T1 (an honest enumeration: 320, 0).
    score = _scored(code, horizontal, sandbox)
    length = table.bit_length() + 16 + 2
    assert (score["sum_n"], score["sum_m"], score["errors"], score["status"]) == (0, length, 0, "ok")
    assert score["c"] == round(100 * (320 - length) / 280, 4) and score["c"] < 25 and score["type"] == "T2"


def test_a02_a_program_run_from_a_hex_string_is_obfuscated(horizontal, sandbox):
    """The second red team's A02: the enumeration exec'd from a hex string; its table is in no text."""
    inner = "TABLE = " + repr(dict(zip(INPUTS, horizontal["outputs"], strict=True))) + "\ndef g(s):\n    return TABLE[s]\n"
    code = f"exec(bytes.fromhex({inner.encode().hex()!r}).decode())\n\n\ndef f(s):\n    return g(s)\n"
    # Hand: the program's P⁺ cannot be read from its text (App. A parses P): status obfuscated, E = 0
    # counted, L(P⁺) and C(P) withheld (the means count it as L_z, C = 0), type T2 (high L, low E).
    # Before: L(P⁺) = 0, C = 100, T1.
    score = _scored(code, horizontal, sandbox)
    assert (score["status"], score["errors"], score["l_plus"], score["c"], score["type"]) == \
        ("obfuscated", 0, None, None, "T2")
    assert score["detail"] == "line 1: calls exec()"


@pytest.mark.parametrize(("name", "build", "status"), [
    ("bytes literal", lambda bits: f"T = {bytes(int(bits[k:k + 8], 2) for k in range(0, 256, 8))!r}\n\n\n"
                                   f"def f(s):\n{_INDEX}    bits = [(T[k // 8] >> (7 - k % 8)) & 1 for k in range(256)]\n"
                                   + _CELLS, "ok"),
    ("escaped string", lambda bits: "T = " + repr("".join(chr(0x80 + int(bits[k:k + 4], 2)) for k in range(0, 256, 4)))
                                    + f"\n\n\ndef f(s):\n{_INDEX}"
                                      "    bits = [(ord(T[k // 4]) >> (3 - k % 4)) & 1 for k in range(256)]\n" + _CELLS,
     "ok"),
    ("a long 0/1 string", lambda bits: f"T = {bits!r}\n\n\ndef f(s):\n{_INDEX}    bits = [int(c) for c in T]\n"
                                       + _CELLS, "ok"),
    ("hex decoded by int()", lambda bits: f"T = {hex(int(bits, 2))[2:].zfill(64)!r}\n\n\ndef f(s):\n{_INDEX}"
                                          "    bits = [int(b) for b in bin(int(T, 16))[2:].zfill(256)]\n" + _CELLS,
     "obfuscated"),
    ("base64 and zlib", lambda bits: "import base64, zlib\nT = " +
     repr(__import__("base64").b64encode(__import__("zlib").compress(bits.encode())).decode()) +
     f"\n\n\ndef f(s):\n{_INDEX}    bits = [int(c) for c in zlib.decompress(base64.b64decode(T)).decode()]\n" + _CELLS,
     "obfuscated"),
    ("a docstring read at run time", lambda bits: f'"""{bits}"""\n\n\ndef f(s):\n{_INDEX}'
                                                  "    bits = [int(c) for c in __doc__]\n" + _CELLS, "obfuscated"),
    ("getattr on a computed name", lambda bits: f"T = {bits!r}\n\n\ndef f(s):\n{_INDEX}"
                                                "    bits = list(map(int, getattr(T, 'st' + 'rip')()))\n" + _CELLS,
     "obfuscated"),
])
def test_hidden_tables_are_not_scored_as_short(horizontal, sandbox, name, build, status):
    """Adversarial fixtures (issue 34): the 16 samples hidden in a literal, or decoded at run time, never
    score as a short program: the bits are counted (C below 25, type T2), or C(P) is withheld."""
    score = _scored(build(_table_bits(horizontal)), horizontal, sandbox)
    assert score["errors"] == 0 and score["status"] == status, (name, score)
    if status == "ok":
        assert score["l_plus"] >= 256 and score["c"] < 25 and score["type"] == "T2", (name, score)
    else:
        assert score["c"] is None and score["l_plus"] is None and score["type"] == "T2", (name, score)


def test_an_enumeration_in_any_two_symbols_counts_every_cell(horizontal, sandbox):
    branches = [f'    {"if" if k == 0 else "elif"} s == "{text}":\n        return {grid.translate(str.maketrans(".*", "ox"))!r}'
                for k, (text, grid) in enumerate(zip(INPUTS, horizontal["outputs"], strict=True))]
    code = "def grid(s):\n" + "\n".join(branches) + \
        '\n\n\ndef f(s):\n    return grid(s).replace("o", ".").replace("x", "*")\n'
    # Hand: each "xoox\n..." grid is 16 cells in two symbols: Σn = 64, Σm = 256; the converter's "." and "*"
    # count 2 (single "o", "x" spell nothing): L(P⁺) = 322, C = 0, T2. Before: Σm = 2, L(P⁺) = 66, C = 90.7.
    assert _score(code, horizontal, sandbox)["L"] == 322 and _score(code, horizontal, sandbox)["C"] == 0.0


def test_obfuscated_programs_are_shown_as_such_in_tables_1_and_2():
    # Hand: one of two Horizontal programs obfuscated (E 0) beside a dict per letter (40 / 0 / 100): the
    # means count it as L(P⁺) = 320, C = 0: 180.00 / 0.00 / 50.00, marked †; a setting where every program
    # is obfuscated reads "withheld" for L(P⁺) and C(P); n_valid counts them, and says how many.
    from cogen.families.programs.score import FunctionScore, summarize

    scores = [FunctionScore("h0", "m", "horizontal", "ok", 8, 32, 0),
              FunctionScore("h1", "m", "horizontal", "obfuscated", 0, 2, 0, detail="line 1: calls exec()"),
              FunctionScore("r0", "m", "random_index", "obfuscated", 0, 0, 3)]
    text = markdown_tables(table(summarize(scores), isolation="bubblewrap"))
    lines = text.splitlines()
    assert "| m | 180.00† | 0.00 | 50.00† | 2/2 (1 obfuscated) |" in lines
    assert "| m | withheld | 3.00 (+3.00) | withheld | 1/1 (1 obfuscated) |" in lines
    assert any(line.startswith("† the mean includes obfuscated programs") for line in lines)
    assert lines[-1] == "isolation: bubblewrap"
    assert scores[1].as_dict()["c"] is None and scores[1].as_dict()["type"] == "T2"
    from cogen.families.programs.view import _program_lines

    (title, _), = _program_lines({**scores[1].as_dict(), "failures": {}})
    assert title == "m: L(P+) withheld, E 0, C withheld (T2; obfuscated)"
