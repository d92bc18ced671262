"""The toy spec: ``setting``, ``family: toy``, ``seed``, ``side`` (in-domain grids are side x side), ``ood_side``
(out-of-domain grids: the held-out shift) and ``rows`` per split."""

from dataclasses import asdict, dataclass, field, replace

from cogen.kit.spec import SpecError, UnknownNameError, expect_keys, read_int, read_name

SPLITS = ("train", "test", "test_ood")


@dataclass(frozen=True)
class ToyConfig:
    name: str
    sizes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ToySetting:
    name: str
    seed: int
    side: int
    ood_side: int
    rows: int
    source: str = field(default="", compare=False)
    family: str = field(default="toy", init=False)

    @property
    def configs(self) -> tuple[ToyConfig, ...]:
        return (ToyConfig(f"{self.name}-mirror", tuple((split, self.rows) for split in SPLITS)),)

    def only(self, names):
        for name in names or ():
            if name != self.configs[0].name:
                raise UnknownNameError("config", name, [self.configs[0].name], where=self.source)
        return self

    def scaled(self, scale: float):
        return replace(self, rows=max(1, round(self.rows * scale)))

    def with_seed(self, seed):
        return self if seed is None else replace(self, seed=int(seed))

    def to_dict(self) -> dict:
        return {key: value for key, value in asdict(self).items() if key not in ("source", "family")}


def setting_from_dict(data: dict) -> ToySetting:
    return ToySetting(**data)


def parse(doc) -> ToySetting:
    top = expect_keys(doc, (), doc.data, ("setting", "family", "seed", "side", "ood_side", "rows"))
    side, ood_side = (read_int(doc, (key,), top[key], 1, 30) for key in ("side", "ood_side"))
    if side == ood_side:
        raise SpecError("out-of-domain grids have the in-domain side", where=doc.where(("ood_side",)),
                        fix="give ood_side another value than side")
    return ToySetting(read_name(doc, ("setting",), top["setting"], "setting"), read_int(doc, ("seed",), top["seed"], 0),
                      side, ood_side, read_int(doc, ("rows",), top["rows"], 1), doc.source)
