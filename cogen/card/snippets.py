"""The card's "Load" section: the code a Hub visitor copies first, true for every family the folder holds.

For each family in the folder the section loads that family's default config (its card text's
``default_config``: the paper's headline config) with ``datasets`` and with cogen's loaders, naming only
splits and array keys that config has: the split held out of training is the family's
(``held_out_splits`` of its record), the keys are the config's grid columns (as
:func:`cogen.io.split_arrays` names them) plus what the family's ``array_notes`` add (such as
``tokens``). ``tests/test_card_snippets.py`` builds every packaged spec and runs every block.
"""

from __future__ import annotations

from collections.abc import Mapping

from cogen.family import DEFAULT_FAMILY, family

__all__ = ["PAD", "SIZE", "default_config", "family_configs", "load_section"]

#: The side and pad value the examples use (ARC grids are at most 30 x 30; 10 is no colour).
SIZE, PAD = 30, 10


def family_configs(manifests: Mapping[str, dict]) -> dict[str, list[dict]]:
    """Family name -> its configs' manifests, both in folder order."""
    found: dict[str, list[dict]] = {}
    for manifest in manifests.values():
        found.setdefault(manifest.get("family", DEFAULT_FAMILY), []).append(manifest)
    return found


def default_config(manifests: Mapping[str, dict]) -> str | None:
    """The folder's default config (the card header marks it ``default``): the first family's default
    config (its card text's ``default_config``); None for an empty folder."""
    for name, members in family_configs(manifests).items():
        chosen = family(name).load("card").default_config(members)
        if chosen in manifests:
            return chosen
        return members[0]["config"]
    return None


def _splits(manifest: dict, name: str) -> tuple[str, str]:
    """(a split to train on, a split held out of training) of one config, each the best it has."""
    splits = [split for split, info in manifest["splits"].items() if info.get("rows", 1)] or list(manifest["splits"])
    held = [split for split in splits if family(name).is_held_out(split)]
    kept = [split for split in splits if split not in held]
    return (kept or splits)[0], (held or splits)[-1]


def _grid_keys(manifest: dict) -> list[tuple[str, bool]]:
    """``(column, many)`` for the input and output columns of the config's first kind of grid pair."""
    from cogen.card.preview import grid_columns

    pairs = grid_columns(manifest["columns"])
    if not pairs:
        return []
    _, inputs, outputs, many = pairs[0]
    return [(inputs, many), (outputs, many)]


def _datasets_block(repo_id: str, manifest: dict, name: str) -> str:
    config = manifest["config"]
    _, held = _splits(manifest, name)
    what = "held out of training" if family(name).is_held_out(held) else "one split"
    return (f'```python\nfrom datasets import load_dataset\n\n'
            f'dataset = load_dataset("{repo_id}", "{config}")  # every split: {", ".join(manifest["splits"])}\n'
            f'{held} = load_dataset("{repo_id}", "{config}", split="{held}")  # {what}\n```')


def _shape(many: bool, rows: str = "rows") -> str:
    return f"({rows}, n, {SIZE}, {SIZE})" if many else f"({rows}, {SIZE}, {SIZE})"


def _arrays_block(repo_id: str, manifest: dict, name: str) -> str:
    config = manifest["config"]
    train, _ = _splits(manifest, name)
    keys = _grid_keys(manifest)
    lines = [f'arrays = split_arrays("{repo_id}", "{config}", split="{train}", size={SIZE}, pad_value={PAD})']
    for position, (column, many) in enumerate(keys):
        per_row = ", n grids per row (the most any row has)" if many else ""
        lines.append(f'arrays["{column}"]  # {_shape(many)} int8, padded with {PAD}{per_row}')
        if position == 0:
            shape = "(rows, n, 2)" if many else "(rows, 2)"
            lines.append(f'arrays["{column}_shape"]  # {shape} true height and width of each grid (0 x 0: none)')
    for key, note in family(name).load("card").array_notes.items():
        lines.append(f'arrays["{key}"]  # {note}')
    return "```python\nfrom cogen.io import split_arrays\n\n" + "\n".join(lines) + "\n```"


def _torch_block(repo_id: str, manifest: dict, name: str) -> str:
    config = manifest["config"]
    train, _ = _splits(manifest, name)
    column, many = _grid_keys(manifest)[0]
    return ("```python\nfrom cogen.io import GridDataset\n\n"
            f'data = GridDataset("{repo_id}", "{config}", split="{train}", size={SIZE})\n'
            "for batch in data.loader(batch_size=64, shuffle=True, seed=0):\n"
            f'    batch["{column}"]  # torch.int8 {_shape(many, "64")}\n'
            "    break\n```")


def load_section(manifests: Mapping[str, dict], repo_id: str) -> str:
    """The body of the card's "Load" section (see the module docstring)."""
    groups = family_configs(manifests)
    parts = []
    for name, members in groups.items():
        record = family(name)
        chosen = record.load("card").default_config(members) or members[0]["config"]
        manifest = manifests.get(chosen, members[0])
        head = f"**{record.title}** configs, such as `{manifest['config']}`:\n\n" if len(groups) > 1 else ""
        text = head + _datasets_block(repo_id, manifest, name)
        if _grid_keys(manifest):
            text += ("\n\nFor training, cogen turns a split into padded NumPy arrays, one per grid column "
                     "(`pip install cogen-arc`):\n\n" + _arrays_block(repo_id, manifest, name)
                     + "\n\nor PyTorch tensors, a batch per gather, int8 grids kept "
                     "(`pip install 'cogen-arc[baselines]'`, which installs PyTorch):\n\n"
                     + _torch_block(repo_id, manifest, name))
        parts.append(text)
    return "\n\n".join(parts) or "(no configs built yet)"
