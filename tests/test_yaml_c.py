"""libyaml's C parser and emitter where PyYAML has them, with the results of the Python ones: specs read
into the same values and lines, and the card's header written to the same text (:mod:`cogen.specs._yaml`,
:func:`cogen.card.card.header_yaml`)."""

from __future__ import annotations

import random
import string

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cogen._resources import packaged_specs, resource_path
from cogen.card.card import header_yaml
from cogen.errors import SpecError
from cogen.specs import _yaml
from cogen.specs._yaml import C_PARSER_AVOIDS, compose, load_located

pytestmark = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")


def _tree(node, path=()) -> list:
    """What the spec reader takes from a node tree: tags, values and lines, by path."""
    if node is None:
        return []
    out = [(path, node.tag, node.start_mark.line)]
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out += _tree(item, (*path, i))
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out += _tree(key, (*path, "key")) + _tree(value, (*path, key.value))
    else:
        out.append(node.value)
    return out


def _python(text: str):
    """(tree, None) or (None, error text) from PyYAML's Python parser alone."""
    try:
        return _tree(yaml.compose(text, Loader=yaml.SafeLoader)), None
    except yaml.YAMLError as error:
        return None, str(error)
    except RecursionError:
        return None, "RecursionError"


def _ours(text: str):
    try:
        return _tree(compose(text)), None
    except yaml.YAMLError as error:
        return None, str(error)
    except RecursionError:
        return None, "RecursionError"


def _spec_texts() -> list[str]:
    return [resource_path("split_specs").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
            for name in packaged_specs()]


def test_every_packaged_spec_reads_as_the_python_parser_reads_it(monkeypatch):
    texts = _spec_texts()
    assert len(texts) > 20
    ours = [load_located(text, "spec.yaml") for text in texts]
    assert [_ours(text) for text in texts] == [_python(text) for text in texts]
    monkeypatch.delattr(yaml, "CSafeLoader")  # PyYAML without libyaml
    assert [load_located(text, "spec.yaml") for text in texts] == ours


def test_the_c_parser_is_the_one_that_reads_them(monkeypatch):
    used = []
    compose_ = yaml.compose
    monkeypatch.setattr(yaml, "compose", lambda text, Loader: used.append(Loader) or compose_(text, Loader=Loader))
    compose(_spec_texts()[0])
    assert used == [yaml.CSafeLoader]
    compose("a: 'b\tc'\n")  # a tab: the two parsers differ, so only the Python one reads it
    assert used[1:] == [yaml.SafeLoader]


def test_the_characters_avoided_are_read_differently():
    """Why :data:`C_PARSER_AVOIDS`: libyaml takes a tab where PyYAML refuses it, and counts lines apart
    from it with YAML 1.1's extra line breaks."""
    assert _python("a: [b,\tc]\n")[1] is not None
    assert yaml.compose("a: [b,\tc]\n", Loader=yaml.CSafeLoader) is not None
    text = "# one\u2028two\nkey: 1\n"
    assert _python(text)[1] is not None or _tree(yaml.compose(text, Loader=yaml.CSafeLoader)) != _python(text)[0]


def test_errors_keep_the_python_parsers_words():
    """libyaml words its errors its own way ("not allowed in this context"): a text it refuses is read again
    by the Python parser, so users keep the messages they know."""
    for text in ("a: [1, 2\n", "a: b: c\n", "- a\nb: 1\n", "a: 'unclosed\n"):
        with pytest.raises(SpecError) as ours:
            load_located(text, "bad.yaml")
        assert _python_problem(text) in str(ours.value)


def _python_problem(text: str) -> str:
    try:
        yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        return error.problem
    raise AssertionError(text)


def _mutants(count: int, seed: int) -> list[str]:
    """Packaged specs cut and mutated at random: what a user's edits (and typos) make of them."""
    rng = random.Random(seed)
    texts = _spec_texts()
    alphabet = list(" \n\r:-[]{},#&*!|>'\"%@`?\\é∂\x00\x07\x1b\x7f\ud7ff\ue000\U0001F600\ufffe0123456789abcxyz.eE+_~<=")
    alphabet += ["\n  ", "\n    - ", ": ", "- ", "&a ", "*a", "!!str ", "!!int ", "? ", "...\n", "---\n", "|\n  ", ">\n  ",
                 "\t", "\x85", "\u2028", "\ufeff"]
    out = []
    for _ in range(count):
        base = rng.choice(texts)
        start = rng.randrange(max(1, len(base) - 600))
        chars = list(base[start:start + rng.randint(50, 800)])
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(chars) + 1)
            roll = rng.random()
            if roll < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif chars and roll < 0.7:
                del chars[min(at, len(chars) - 1)]
            elif chars:
                chars[min(at, len(chars) - 1)] = rng.choice(alphabet)
        out.append("".join(chars))
    return out


@pytest.mark.slow
def test_mutated_specs_read_as_the_python_parser_reads_them():
    texts = _mutants(3000, seed=3)
    avoided = sum(not C_PARSER_AVOIDS.isdisjoint(text) for text in texts)
    assert 300 < avoided < 2700  # both kinds of text are tried
    for text in texts:
        assert _ours(text) == _python(text), repr(text)


# -- the card's header ---------------------------------------------------------------------------------------

_TEXT = st.text(st.sampled_from(list(string.printable) + list("éà∂ßΩ中—“”\u00a0\u00ad\u2028\x85\ufeff😀\x00\x1b")),
                max_size=300) | st.sampled_from(["yes", "no", "null", "~", "1e3", "0x1", "", " ", "- a", "a: b", "'", '"'])
_KEY = _TEXT | st.text(st.sampled_from(string.ascii_letters + "_-. "), min_size=1, max_size=140)
_SCALAR = _TEXT | st.integers(-10**15, 10**15) | st.floats(allow_nan=False) | st.booleans() | st.none()
_HEADER = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEY, inner, max_size=4),
                       max_leaves=25)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEY, _HEADER, max_size=5))
def test_the_header_is_the_text_the_python_emitter_writes(header):
    assert header_yaml(header) == yaml.dump(header, Dumper=yaml.SafeDumper, sort_keys=False, allow_unicode=True,
                                            width=120)


def test_a_cards_header_goes_to_the_c_emitter(monkeypatch):
    from cogen.card.card import card_header

    manifest = {"config": "C1-1", "columns": {"id": "string", "input": "list<list<int8>>", "output": "list<list<int8>>"},
                "splits": {"train": {"rows": 3, "num_bytes": 10, "download_bytes": 9},
                           "test": {"rows": 1, "num_bytes": 4, "download_bytes": 4}}}
    used = []
    dump = yaml.dump
    monkeypatch.setattr(yaml, "dump", lambda data, Dumper, **options: used.append(Dumper) or dump(data, Dumper=Dumper,
                                                                                                  **options))
    header_yaml(card_header({"C1-1": manifest}))
    assert used == [yaml.CSafeDumper]
    header_yaml({"pretty_name": "two\nlines"})
    assert used[1:] == [yaml.SafeDumper]


def test_without_libyaml_the_python_parser_and_emitter_do_it_all(monkeypatch):
    monkeypatch.delattr(yaml, "CSafeLoader")
    monkeypatch.delattr(yaml, "CSafeDumper")
    assert _tree(_yaml.compose("a: [1, 2]\n")) == _python("a: [1, 2]\n")[0]
    assert header_yaml({"a": [1, "b"]}) == "a:\n- 1\n- b\n"
