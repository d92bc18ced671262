"""The package graph: imports run downward through the layers of docs/architecture.md, with no cycle.

Every ``import`` and ``from ... import`` inside ``cogen/`` counts, at module level or inside a
function (only ``if TYPE_CHECKING:`` blocks are skipped): a function-level import hides a
dependency from the reader, not from this test.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import cogen

PACKAGE = Path(cogen.__file__).resolve().parent

#: The family folders under ``cogen/families/``: each is two units, its spec reader (``spec.py`` and
#: ``schema.py``, at the spec layer, so the family's domain sampler may read its setting) and its plug-ins
#: (everything else: builder, checks, evaluator, prompts, card text), above every generic package.
FAMILY_FOLDERS = sorted(path.name for path in (PACKAGE / "families").iterdir()
                        if path.is_dir() and (path / "__init__.py").exists())
#: Modules of a family folder that sit at the spec layer.
FAMILY_SPEC_MODULES = ("spec", "schema")
#: The layers, bottom first; a unit may import its own layer's units only where listed in SAME_LAYER.
LAYERS = (
    {"cogen.errors", "cogen._version", "cogen._resources", "cogen.pins", "cogen._jit", "cogen._rng",
     "cogen.families", "cogen.palette"},
    {"cogen.engine", "cogen.bank", "cogen.folder", "cogen.carc", "cogen.programs", "cogen.render"},
    {"cogen.specs"},
    {f"cogen.families.{name}.spec" for name in FAMILY_FOLDERS},
    {"cogen.generate"},
    {"cogen.card"},
    {"cogen.pipeline"},
    {"cogen.hub", "cogen.io", "cogen.metrics", "cogen.stream", "cogen.export"},
    {"cogen.eval", "cogen.llm", "cogen.view"},
    {f"cogen.families.{name}" for name in FAMILY_FOLDERS},
    {"cogen.cli", "cogen.__main__"},
)
#: Same-layer imports that are part of the design (the lower one listed second).
SAME_LAYER = {("cogen._jit", "cogen.pins"), ("cogen._rng", "cogen._jit"), ("cogen.families", "cogen.errors"),
              ("cogen.bank", "cogen.engine"), ("cogen.llm", "cogen.eval"), ("cogen.stream", "cogen.io"), ("cogen.export", "cogen.io"),
              ("cogen.__main__", "cogen.cli")}


def _unit(module: str) -> str:
    """``cogen.pipeline.driver`` -> ``cogen.pipeline``; root modules (``cogen.errors``) are units of their own;
    ``cogen.families.carc.build`` -> ``cogen.families.carc`` and ``cogen.families.carc.spec`` -> itself."""
    parts = module.split(".")
    if parts[:2] == ["cogen", "families"] and len(parts) > 2:
        if len(parts) > 3 and parts[3] in FAMILY_SPEC_MODULES:
            return f"cogen.families.{parts[2]}.spec"
        return f"cogen.families.{parts[2]}"
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``cogen`` module or package ``path`` imports (``from cogen.x import y`` counts ``cogen.x.y``
    when ``y`` is a module, else ``cogen.x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for block in ast.walk(tree)
               if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
               for node in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & MODULES
            found |= submodules or {node.module}
    return {name for name in found if name.startswith("cogen.")}


MODULES = {_module_name(path) for path in PACKAGE.rglob("*.py")}


def module_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (a package counts as its ``__init__``; itself excluded)."""
    return {_module_name(path): _imports(path) - {_module_name(path)} for path in PACKAGE.rglob("*.py")}


def unit_graph() -> dict[str, set[str]]:
    """Unit -> units it imports (itself excluded)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        source = _unit(_module_name(path))
        graph[source] |= {_unit(name) for name in _imports(path)} - {source}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index, low, stack, on_stack, components, counter = {}, {}, [], set(), [], [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return components


def test_no_package_cycle():
    assert _cycles(unit_graph()) == []


def test_no_module_cycle():
    """No two files import each other, even through function-level imports (a package's ``__init__``
    re-exporting its own modules is the one kind of loop allowed: the modules never import it back)."""
    assert _cycles(module_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_unit_has_a_layer_and_imports_only_downward():
    layer = {unit: level for level, units in enumerate(LAYERS) for unit in units}
    graph = unit_graph()
    assert set(graph) <= set(layer) | {"cogen"}, f"units without a layer: {set(graph) - set(layer)}"
    upward = [(source, target) for source, targets in graph.items() if source != "cogen" for target in targets
              if target in layer and (layer[target] > layer[source]
                                      or (layer[target] == layer[source] and (source, target) not in SAME_LAYER))]
    assert upward == [], "imports that do not run downward (see docs/architecture.md)"


# ------------------------------------------------------------------ the generic machinery names no family
#: Packages that must work for any family: they reach a family only through its record
#: (``family(name).load(role)`` and the record's fields), never by its name.
GENERIC_PACKAGES = ("pipeline", "folder", "card", "eval", "llm", "export", "cli", "stream", "io", "hub", "view")
ROOT = PACKAGE.parent
#: Other words for a family than its name and title.
ALSO_CALLED = ("C-ARC",)


def generic_files() -> list[Path]:
    """Every Python file of the generic packages and of ``cogen_baselines``."""
    folders = [PACKAGE / name for name in GENERIC_PACKAGES] + [ROOT / "cogen_baselines"]
    return sorted(path for folder in folders if folder.is_dir() for path in folder.rglob("*.py"))


def family_words(families) -> re.Pattern:
    """Any registered family's name, title or other name, as a whole word (``_`` and ``.`` separate words)."""
    words = {word for record in families.values() for word in (record.name, record.title)} | set(ALSO_CALLED)
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


def _about_family(node: ast.AST) -> bool:
    return "family" in ast.unparse(node).lower()


def _constant(node: ast.AST) -> bool:
    """A string literal (or a tuple, list or set of them), or a constant named like ``DEFAULT_FAMILY``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_constant(element) for element in node.elts)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.isupper() and "FAMILY" in name


def family_comparisons(source: str) -> list[int]:
    """Lines that compare something about a family with a constant (``family == "x"``, ``"x" in families``,
    ``manifest.get("family") != DEFAULT_FAMILY``): a branch on which family it is."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_about_family(a) and _constant(b) for a in operands for b in operands if a is not b):
                lines.append(node.lineno)
    return lines


def family_mentions(path: Path, families, root: Path = ROOT) -> list[tuple[str, int, str]]:
    """``(file, line number, line)`` for each line of ``path`` that names a family (code, strings,
    docstrings and comments alike) or compares something about a family with a constant."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    pattern = family_words(families)
    numbers = {number for number, line in enumerate(lines, 1) if pattern.search(line)}
    numbers |= set(family_comparisons(source))
    name = path.relative_to(root).as_posix()
    return [(name, number, lines[number - 1].strip()) for number in sorted(numbers)]


def test_generic_packages_name_no_family():
    """``docs/architecture.md``: a generic package that named a family would need an edit for every new
    family, or would treat an unknown one wrongly in silence; it asks the family's record instead."""
    from cogen.families import FAMILIES

    found = [mention for path in generic_files() for mention in family_mentions(path, FAMILIES)]
    offending = [(name, number, line) for name, number, line in found if line not in ALLOWED.get(name, ())]
    assert offending == [], "generic code that names a family (move it into cogen/families/<name>/):\n" + "\n".join(
        f"{name}:{number}: {line}" for name, number, line in offending)


def test_the_family_check_finds_names_titles_and_comparisons(tmp_path):
    from cogen.families import FAMILIES

    planted = tmp_path / "planted.py"
    planted.write_text('"""Reads COGITAO rows."""\n'
                       'import cogen.families.carc.card\n'
                       'def f(manifest, DEFAULT_FAMILY):\n'
                       '    if manifest.get("family", DEFAULT_FAMILY) != DEFAULT_FAMILY:  # a branch\n'
                       '        return "Compositional-ARC"\n'
                       '    return cogitao_table(manifest), record.family in ("a", "b")\n'
                       '# string-to-grid programs, C-ARC\n'
                       'x = family.name == other  # fine: not a constant\n'
                       'carcass = programmes = "cogitaos"  # fine: other words\n')
    found = family_mentions(planted, FAMILIES, root=tmp_path)
    assert [number for _, number, _ in found] == [1, 2, 4, 5, 6, 7] and found[0][0] == "planted.py"


#: Lines that name a family in packages other engineers are cleaning now (issue 27: cogen_baselines and
#: `cogen baselines`), by file and text. Delete an
#: entry when its line goes; the list ends empty. Nothing else may be added here.
ALLOWED: dict[str, tuple[str, ...]] = {
    "cogen/cli/baselines.py": (
        'app = typer.Typer(help="Train the COGITAO / Compositional-ARC model baselines and tabulate them beside the papers.",',
        'stream: Annotated[str | None, typer.Option(help="Train on fresh samples every epoch: the spec --data was built from (a packaged name such as c1, or a file); each epoch draws as many samples as the training split holds from the config\'s endless stream, never a stored validation or test pair. COGITAO models only.")] = None,',
        'headline = "grid_accuracy" if summary["family"] == "cogitao" else "exact_match"',
    ),
    "cogen_baselines/__init__.py": (
        '"""Model baselines of the COGITAO and Compositional-ARC papers, trained and scored on cogen\'s datasets.',
        'table writer), ``cogitao`` / ``carc`` (the two workloads), ``run`` / ``suite`` / ``folder``.',
    ),
    "cogen_baselines/carc.py": (
        '"""Compositional-ARC episodes as a training workload for the MLC model.',
        "episodes becomes :mod:`cogen.carc.mlc`'s token layout on the device, vectorised over episodes",
        'and queries (:func:`episode_tokens`; the tests check it against :func:`cogen.carc.mlc.mlc_arrays`).',
        'from cogen.carc.mlc import EOS, IO_SEP, PATCH_OFFSET, SOS, SUP_SEP, VOCAB_SIZE',
        '"""The paper\'s epochs for a Compositional-ARC config: 300 for systematicity, 200 for 3-shot."""',
        '"""Patch tokens ``(..., 25)`` of 10x10 grids ``(..., 10, 10)`` (the layout of :func:`cogen.carc.mlc.encode_grids`)."""',
        'study pairs come first), as :func:`cogen.carc.mlc.mlc_arrays` stacks them.',
        '"""Train and evaluate the MLC model on one Compositional-ARC config."""',
        'family = "carc"',
        'if manifest.get("family") != "carc":',
        'raise BaselineError(f"{config} is a {manifest.get(\'family\', \'cogitao\')} config; --model {card.name} "',
        '"trains on Compositional-ARC configs")',
        'from cogen.carc.mlc import decode_grids',
        'from cogen.families.carc.evaluate import query_id',
        'return {"config": self.manifest.get("config"), "setting": "carc", "kind": self.manifest.get("kind"),',
    ),
    "cogen_baselines/cogitao.py": (
        '"""COGITAO experiments as a training workload: batches from device tensors, validation, predictions.',
        'for the grid models of the COGITAO paper.',
        '"""Train and evaluate a grid model on one COGITAO experiment held on the device."""',
        'family = "cogitao"',
    ),
    "cogen_baselines/config.py": (
        "then trains on fresh samples of the config's stream (COGITAO models only).",
    ),
    "cogen_baselines/data.py": (
        '"""A COGITAO experiment\'s splits, padded once and held on the device.',
        '#: The splits of a COGITAO experiment, in the order they are loaded.',
        '"""Load every split of COGITAO experiment ``config`` of ``data`` (build folder or Hub repo id) onto ``device``.',
        'if manifest.get("family", "cogitao") != "cogitao":',
        'raise BaselineError(f"{config} is a {manifest.get(\'family\')} config; the COGITAO models train on COGITAO "',
        '"experiments (use --model mlc for Compositional-ARC)")',
        'from cogen.families.cogitao.build import CogitaoBuilder',
    ),
    "cogen_baselines/models/base.py": (
        '"""What every COGITAO model takes and gives: a batch of padded grids in, per-cell class scores out.',
        '"""One batch of a COGITAO split, on the device (see the module docstring)."""',
    ),
    "cogen_baselines/models/llada.py": (
        '"""LLaDA (COGITAO paper App. H; decision 4): a masked-diffusion transformer trained from scratch.',
    ),
    "cogen_baselines/models/mlc.py": (
        '"""Compositional-ARC\'s MLC model (seed 000, Table 3; spec A.6): a transformer encoder-decoder over 2x2 patches.',
        "Tokens are :mod:`cogen.carc.mlc`'s: 5 specials and 10,000 patch ids. The encoder reads the study",
        'from cogen.carc.mlc import GRID_TOKENS, PATCH_OFFSET, SOS, VOCAB_SIZE',
        '""":meth:`loss` of an :class:`~cogen_baselines.carc.MLCBatch`."""',
    ),
    "cogen_baselines/models/pl_tf.py": (
        '"""PL-TF (COGITAO paper App. H): one weight-shared transformer block looped under PonderNet halting.',
    ),
    "cogen_baselines/models/resnet.py": (
        '"""ResNet (COGITAO paper App. H): a stride-1 residual conv stack classifying every cell.',
    ),
    "cogen_baselines/paper.py": (
        "#: Compositional-ARC config kind -> MLC's (exact match, colour accuracy, shape accuracy), %.",
        'CARC_MLC = {',
    ),
    "cogen_baselines/protocol.py": (
        "from 1 to 0.05 (Compositional-ARC's code: lr 0.01 ends at 5e-4).",
        "* ``ood_loss``: the lowest out-of-domain validation loss (the COGITAO paper's rule, the default);",
    ),
    "cogen_baselines/registry.py": (
        'family: str                        # "cogitao" or "carc"',
        '"cogitao", _resnet, {"paper": {}, "small": _SMALL_RESNET}, 1_360_000),',
        '"cogitao", _resnet, {"paper": {"film": True}, "small": {**_SMALL_RESNET, "film": True}}, None,',
        'ModelCard("vanilla-tf", "Transformer: 6 layers, d 128, learned 1-D APE", "cogitao", _transformer,',
        '"cogitao", _transformer, {"paper": _GRID, "small": {**_GRID, **_SMALL_TF}}, 1_220_000,',
        '"cogitao", _ponder,',
        '"cogitao", _llada,',
        'ModelCard("mlc", "Compositional-ARC\'s MLC: encoder-decoder 3+3 layers, d 128, 2x2 patch tokens, copy task",',
        '"carc", _mlc,',
        'from cogen.carc.mlc import encoder_length',
        'if card.family == "carc":',
    ),
    "cogen_baselines/run.py": (
        '"cogitao": ("grid_accuracy", "per_pixel_accuracy", "object_pixel_accuracy", "no_transformation"),',
        '"carc": ("exact_match", "color_accuracy", "shape_accuracy", "valid_rate"),',
        'if card.family == "carc":',
        'from cogen_baselines.carc import MLCWorkload',
        'from cogen_baselines.cogitao import GridWorkload',
        'family = experiment_manifest(config.data, config.config).get("family", "cogitao")',
        'use = "mlc" if family == "carc" else "resnet, vanilla-tf, grid-tf, pl-tf or llada"',
        'if card.family == "carc" and config.epochs is None:',
        'from cogen_baselines.carc import default_epochs',
        'if config.stream is not None and card.family != "cogitao":',
        'raise BaselineError(f"--stream makes COGITAO samples; {card.name} trains on the stored {card.family} data "',
    ),
    "cogen_baselines/table.py": (
        '"""Results tables of finished runs, in the COGITAO paper\'s Table 1 layout, with the paper\'s numbers beside them.',
        'were (marked ``*``). Compositional-ARC runs (MLC) get their own table: exact match, colour and',
        'from cogen_baselines.paper import CARC_MLC, EXPERIMENTS, TABLE_1',
        "#: Numbers a COGITAO table can show: ``cogen eval``'s grid accuracy, or the in-loop padded one (the paper's).",
        'def _cogitao_table(runs: list[dict], rule: str, metric: str) -> list[str]:',
        'def _carc_table(runs: list[dict], rule: str) -> list[str]:',
        'paper = CARC_MLC.get(kind) if model == "mlc" else None',
        'cogitao = [run for run in runs if run.get("family", "cogitao") == "cogitao"]',
        'carc = [run for run in runs if run.get("family") == "carc"]',
        'if cogitao:',
        '"in parentheses the COGITAO paper (Table 1; * = mean of its Tables 5-8 rows for the experiments "',
        'out += _cogitao_table(cogitao, rule, metric)',
        'if carc:',
        '"Compositional-ARC test set (%), mean ± SEM over seeds; in parentheses the paper\'s MLC (Table 1). "',
        'out += _carc_table(carc, rule)',
    ),
}
