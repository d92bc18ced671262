"""The toy's prompts: one grid to mirror."""

from cogen.kit.prompts import Prompt, format_grid


def prompts(data, split):
    for row in split.table.select(["id", "input"]).to_pylist():
        yield Prompt(row["id"], f"Mirror this grid left to right: {format_grid(row['input'])}", {"row": row["id"]})
