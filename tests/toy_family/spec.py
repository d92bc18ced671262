"""The toy spec: ``setting``, ``family: toy``, ``seed``, ``side`` (grid side) and rows per split."""

from dataclasses import dataclass, field, replace

from cogen.specs._fields import expect_keys, read_int, read_str

SPLITS = ("train", "test")


@dataclass(frozen=True)
class ToyConfig:
    name: str
    sizes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ToySetting:
    name: str
    seed: int
    side: int
    rows: int
    source: str = field(default="", compare=False)
    family: str = "toy"

    @property
    def configs(self) -> tuple[ToyConfig, ...]:
        return (ToyConfig(f"{self.name}-mirror", tuple((split, self.rows) for split in SPLITS)),)

    def only(self, names):
        return self

    def scaled(self, scale: float):
        return replace(self, rows=max(1, round(self.rows * scale)))

    def with_seed(self, seed):
        return self if seed is None else replace(self, seed=int(seed))


def parse(doc) -> ToySetting:
    top = expect_keys(doc, (), doc.data, ("setting", "family", "seed", "side", "rows"))
    return ToySetting(read_str(doc, ("setting",), top["setting"]), read_int(doc, ("seed",), top["seed"], minimum=0),
                      read_int(doc, ("side",), top["side"], 1, 30), read_int(doc, ("rows",), top["rows"], 1),
                      doc.source)
