"""The program compositionality score (seed 003): the paper's worked fragments, the bounds, Table 1
arithmetic, every counting rule, and a Hypothesis property over programs of known structure."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogen.families.programs.analysis import analyze, value_text
from cogen.families.programs.functions import INPUTS, SETTINGS, sample, stream_seed
from cogen.families.programs.score import (
    L_S,
    L_Z,
    FunctionScore,
    Program,
    compositionality,
    markdown_table,
    program_length,
    program_type,
    score_programs,
    summarize,
    table,
)
from cogen.families.programs.styles import EXPECTED_LENGTH, STYLES, corrupt, program
from cogen.sandbox import Sandbox

FRAGMENT_1 = '''
def f(letters):
    # First row is determined by the first letter (A or B): ".*.*" in a comment never counts
    if letters[0] == "A": row1 = ".*.*"
    else: row1 = "*.*."
    if letters[1] == "C" and letters[3] == "G": row2 = "...."
    elif letters[1] == "C" and letters[3] == "H": row2 = "**.."
    elif letters[1] == "D" and letters[3] == "G": row2 = ".*.*"
    else: row2 = "*.**"
    if letters[2] == "E": row3 = ".**."
    else: row3 = "*..*"
    if letters[1] == "C" and letters[3] == "G": row4 = "*..."
    elif letters[1] == "C" and letters[3] == "H": row4 = "..*."
    elif letters[1] == "D" and letters[3] == "G": row4 = ".*.."
    else: row4 = "...*"
    return "\\n".join([row1, row2, row3, row4])
'''

FRAGMENT_2 = '''
row1_patterns = {("A", "E"): "...*", ("A", "F"): "***.", ("B", "E"): ".*.*", ("B", "F"): "****"}
row2_patterns = {"C": "**.*", "D": "...."}
row3_patterns = {("A", "E"): "*.*.", ("A", "F"): "..**", ("B", "E"): "...*", ("B", "F"): ".*.*"}
row4_patterns = {"G": ".*.*", "H": "*.*."}
'''


def _blocks(analysis, ranges):
    """(Σn, Σm) of each range of source lines."""
    return [(sum(c.size for c in analysis.combinations if lo <= c.line <= hi),
             sum(o.count for o in analysis.outputs if lo <= o.line <= hi)) for lo, hi in ranges]


def test_fragment_1_if_trees_counts_as_the_paper_says():
    analysis = analyze(FRAGMENT_1)
    assert (analysis.sum_n, analysis.sum_m, analysis.length) == (12, 48, 60)
    # blocks 1-3 contribute n 2, 8, 2 and m 8, 16, 8; block 4 repeats block 2's combinations: n 0, m 16
    assert _blocks(analysis, [(4, 5), (6, 9), (10, 11), (12, 15)]) == [(2, 8), (8, 16), (2, 8), (0, 16)]
    combos = {frozenset(map(value_text, c.values)) for c in analysis.combinations}
    assert frozenset({"else@2{C,D}", "else@4{G,H}"}) in combos and frozenset({"else@1{A}"}) in combos
    assert compositionality(program_length(analysis.length, 0)) == pytest.approx(92.857, abs=1e-3)


def test_fragment_2_dicts_counts_as_the_paper_says():
    analysis = analyze(FRAGMENT_2)
    assert (analysis.sum_n, analysis.sum_m) == (12, 48)
    assert _blocks(analysis, [(2, 2), (3, 3), (4, 4), (5, 5)]) == [(8, 16), (2, 8), (0, 16), (2, 8)]


def _function(setting="random", index=0):
    batch = sample(setting, stream_seed(2, setting), [index])
    return batch.groups[0], batch.patterns[0], ["".join("*" if v else "." for v in o) for o in batch.outputs()[0]]


def test_enumerating_all_16_samples_is_zero_compositionality():
    groups, patterns, _ = _function()
    analysis = analyze(program("enumeration", groups, patterns))
    assert (analysis.sum_n, analysis.sum_m, analysis.length) == (64, 256, 320) == (64, 256, L_Z)
    assert compositionality(analysis.length) == 0


def test_one_dictionary_per_letter_is_sufficient_compositionality():
    groups, patterns, _ = _function("horizontal")
    source = "\n".join(f"ROW_{i} = {{'{'ABCDEFGH'[2 * i]}': '.*.*', '{'ABCDEFGH'[2 * i + 1]}': '*.*.'}}"
                       for i in range(4)) + "\ndef f(s):\n    return '\\n'.join([ROW_0[s[0]], ROW_1[s[1]], ROW_2[s[2]], ROW_3[s[3]]])\n"
    analysis = analyze(source)
    assert (analysis.sum_n, analysis.sum_m, analysis.length) == (8, 32, 40) == (8, 32, L_S)
    assert compositionality(analysis.length) == 100
    assert analyze(program("letter_dicts", groups, patterns)).length == 40


def test_bounds_and_clipping():
    assert (L_S, L_Z) == (40, 320)
    assert compositionality(10) == 100 and compositionality(40) == 100 and compositionality(320) == 0
    assert compositionality(340) == 0 and compositionality(180) == 50
    assert program_length(60, 14) == 340  # E = 14 takes 60 to 340, clipped to 320: C = 0
    assert compositionality(program_length(60, 14)) == 0


@pytest.mark.parametrize(("l_plus", "errors", "c"), [
    (46.73, 8 / 30, 95.69),    # o3-mini, Horizontal
    (45.83, 21 / 30, 92.92),   # Gemini-2.5, Horizontal
    (49.43, 9 / 30, 94.49),    # o1-mini, Horizontal
])
def test_table_1_arithmetic(l_plus, errors, c):
    assert round(compositionality(program_length(l_plus, errors)), 2) == c


def _score(l_plus, errors, model="m", setting="horizontal"):
    return FunctionScore(f"id{l_plus}-{errors}", model, setting, "ok", 0, int(l_plus), int(errors))


def test_c_is_averaged_per_function_not_computed_from_the_means():
    scores = [_score(40, 0), _score(300, 5)]  # C 100 and 0 (300 + 100 clips at 320)
    summary, = summarize(scores)
    assert summary.c == pytest.approx(50.0)
    assert compositionality(program_length(summary.l_plus, summary.errors)) == pytest.approx(
        (320 - (170 + 50)) / 2.8)  # the C of the means would differ
    # 30 functions averaging L(P+) 46.73 and E 8/30 without clipping give the printed 95.69
    scores = [_score(47, 0) for _ in range(22)] + [_score(46, 1) for _ in range(8)]
    summary, = summarize(scores)
    assert summary.errors == pytest.approx(8 / 30) and round(summary.c, 2) == round(
        compositionality(program_length(summary.l_plus, summary.errors)), 2)


def test_types_use_decision_3_thresholds_and_keep_the_fourth_cell():
    assert [program_type(60, 0), program_type(320, 0), program_type(45, 15), program_type(320, 15)] == \
        ["T1", "T2", "T3", "T0"]
    assert program_type(180, 4) == "T1" and program_type(181, 4) == "T2" and program_type(180, 4.1) == "T3"
    assert program_type(100, 2, low_length=90) == "T2" and program_type(100, 2, low_errors=1) == "T3"
    summary, = summarize([_score(40, 0), _score(320, 0), _score(40, 16)])
    assert summary.types == {"T1": 1, "T2": 1, "T3": 1} and summary.type == "T3"  # means: L(P+) 133, E 5.3


def test_table_report_is_the_papers_layout():
    scores = [_score(40, 0, "a", "horizontal"), _score(320, 0, "a", "random"), _score(60, 2, "b|<i>", "horizontal"),
              FunctionScore("x", "b|<i>", "horizontal", "no code", 0, 0, 16)]
    report = table(summarize(scores))
    assert report["settings"] == ["horizontal", "random"] and report["models"] == ["a", "b|<i>"]
    lines = markdown_table(report).splitlines()
    assert "| Model | Horizontal |  |  | Random |  |  | n_valid / n |" in lines
    assert "| a | 40.00 | 0.00 | 100.00 | 320.00 | 0.00 | 0.00 | 1/1 · 1/1 |" in lines
    # b: (60, 2) gives C 78.57 and the reply without code (0, 16) C 0: means 30 / 9 / 39.29, 1 of 2 valid
    assert "| b\\|&lt;i&gt; | 30.00 | 9.00 | 39.29 | – | – | – | 1/2 · – |" in lines  # a model name cannot break the table
    assert "- a: Horizontal T1, Random T2" in lines


# ---------------------------------------------------------------- counting rules
@pytest.mark.parametrize(("source", "n", "m"), [
    ('x = "ACEG"', 0, 0),                                      # input values alone determine no output
    ('x = "ACEG" + ".*"', 4, 2),                               # one row: 4 values, 2 output values
    ('"""A docstring with .*.* and ACEG."""\nx = 1', 0, 0),   # bare strings write nothing
    ('x = ".*" # "A": "...."', 0, 2),                          # comments never count
    ('x = ".*" if s[0] == "A" else "*."', 2, 4),               # conditional expression = if/else
    ('x = ".*" if s[0] == "A" else "*." if s[1] == "C" else ".."', 4, 6),  # {A}, {C}, {else A, else C}
    ('T = {(0, 1): ".*", (2, 3): "*."}', 2, 4),                # a key of bits holds input values (F4); (2, 3) none
    ('T = {"x": ".*", 2: "*."}', 0, 4),                        # keys without input values: no combination
    ('T = {"A": [(0, 1), (2, 3)], "B": [(1, 1)]}', 2, 3),      # a coordinate is one atomic unit
    ('T = {"A": [1, 0, 1, 1], "B": [True, None]}', 2, 5),      # numbers and booleans are units, None is not
    ('T = {"A": {"C": "....", "D": "****"}}', 4, 8),           # nested maps: the path holds both keys
    ('T = {"A": "..\\n.."}', 1, 4),                            # blanks in dict values are not units
    ('k = s[0] == "A"\nx = ".*" if k else "*."', 2, 4),        # values flow through variables
    ('k = s[0] == "A"\ny = k\nz = y + ".."', 1, 2),            # ... to a fixed point
    ('T = {"A": "."}\nx = T[s[0]] + ".."', 1, 3),              # dict keys do not flow through variables
    ('x = ".."\nx = ".."', 0, 4),                              # Σm counts each occurrence
])
def test_counting_rules(source, n, m):
    analysis = analyze(source)
    assert analysis.error is None and (analysis.sum_n, analysis.sum_m) == (n, m), \
        [(c.line, sorted(map(value_text, c.values)), c.size) for c in analysis.combinations]


def test_elif_and_a_nested_if_in_else_are_different_trees():
    chain = 'if s[0] == "A":\n    x = "."\nelif s[1] == "C":\n    x = "*"\nelse:\n    x = "."\n'
    nested = 'if s[0] == "A":\n    x = "."\nelse:\n    if s[1] == "C":\n        x = "*"\n    else:\n        x = "."\n'
    chain_sets = {frozenset(map(value_text, c.values)) for c in analyze(chain).combinations}
    nested_sets = {frozenset(map(value_text, c.values)) for c in analyze(nested).combinations}
    assert chain_sets == {frozenset({"A"}), frozenset({"C"}), frozenset({"else@1{A}", "else@2{C}"})}
    assert nested_sets == {frozenset({"A"}), frozenset({"else@1{A}", "C"}), frozenset({"else@1{A}", "else@2{C}"})}


def test_match_statements_are_if_chains():
    source = 'match s[0]:\n    case "A":\n        x = "..**"\n    case _:\n        x = "**.."\n'
    analysis = analyze(source)
    assert (analysis.sum_n, analysis.sum_m) == (2, 8)


def test_the_assignment_target_never_counts():
    assert analyze('k = "A"\nk2 = ".*" + k').sum_n == 1          # k's value on the right counts
    assert analyze('k = "A"\nk = ".*"').sum_n == 0               # the target k does not


@pytest.mark.parametrize("source", ["def f(s) return 1", "x = (", "\0", 12, None])
def test_unparsable_programs_are_errors_not_exceptions(source):
    analysis = analyze(source)
    assert analysis.error and analysis.length == 0


def test_deeply_nested_programs_are_refused_cleanly():
    assert analyze("x = " + "(" * 5000 + "1" + ")" * 5000).error
    assert analyze("x = 1\n" * 100).error is None


# ---------------------------------------------------------------- property: known structure
@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2, timeout=5.0) as box:
        yield box


functions = st.tuples(st.sampled_from(SETTINGS), st.integers(0, 2**32), st.integers(0, 10_000))


def _targets(setting, seed, index):
    batch = sample(setting, stream_seed(seed, setting), [index])
    outputs = ["".join("*" if v else "." for v in o) for o in batch.outputs()[0]]
    return batch.groups[0], batch.patterns[0], outputs


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(function=functions, styles=st.lists(st.sampled_from(sorted(STYLES)), min_size=1, max_size=3, unique=True))
def test_correct_programs_of_known_structure_lie_between_the_bounds_with_no_error(sandbox, function, styles):
    groups, patterns, outputs = _targets(*function)
    sources = [program(style, groups, patterns) for style in styles]
    for style, source in zip(styles, sources, strict=True):
        analysis = analyze(source)
        assert L_S <= analysis.length <= L_Z and analysis.length == EXPECTED_LENGTH[style], style
    for style, result in zip(styles, sandbox.run(sources, INPUTS), strict=True):
        assert result.errors(outputs) == 0, (style, result.reasons)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(function=functions, wrong=st.sets(st.integers(0, 15), max_size=16), raising=st.sets(st.integers(0, 15)))
def test_injected_errors_give_exactly_the_injected_e(sandbox, function, wrong, raising):
    groups, patterns, outputs = _targets(*function)
    corrupted = corrupt(groups, patterns, sorted(wrong))
    failing = [INPUTS[k] for k in sorted(raising)]
    raises = program("if_else", groups, patterns).replace(
        "def f(s):\n", f"def f(s):\n    if s in {failing!r}:\n        raise ValueError(s)\n")
    first, second = sandbox.run([corrupted, raises], INPUTS)
    assert first.errors(outputs) == len(wrong)
    assert second.errors(outputs) == len(raising)
    assert all(second.reasons[k].startswith("ValueError") for k in raising)


@pytest.mark.slow
def test_score_programs_puts_it_together(sandbox):
    groups, patterns, outputs = _function("block", 3)
    programs = [Program("a", "m", program("letter_dicts", groups, patterns), prompt_version="v1"),
                Program("a", "n", corrupt(groups, patterns, [0, 1])),
                Program("a", "o", None, "no code"),
                Program("a", "p", "def f(s) return")]
    scores, explanations = score_programs(programs, {"a": ("block", outputs)}, sandbox, explain=True)
    assert [(s.status, s.l_plus, s.errors) for s in scores] == [
        ("ok", 40, 0), ("ok", 320, 2), ("no code", 0, 16), ("syntax error", 0, 16)]
    assert [round(s.c, 2) for s in scores] == [100.0, 0.0, 0.0, 0.0]
    assert scores[1].failures == {"wrong output": 2} and scores[0].prompt_version == "v1"
    assert scores[0].function == "f" and scores[2].function is None
    assert scores[3].failures == {"syntax error": 16}
    text = "\n".join(explanations["m / a"])
    assert "combination {A}" in text and "m +4" in text and "E = 0, L(P) = 40 + 20 x 0 = 40, C(P) = 100.00" in text
    wrong = "\n".join(explanations["n / a"])
    assert wrong.count("wrong (got") == 2 and "L(P) = 320 + 20 x 2 = 360" in wrong
    assert "syntax error, line 1" in "\n".join(explanations["p / a"])
    assert math.isclose(summarize(scores)[0].c, 100.0)
