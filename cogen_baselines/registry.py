"""Every baseline model as one frozen record: how to build it and the paper's protocol for it.

``MODELS`` maps a name to a :class:`ModelCard`: the builder, its sizes (``paper``: spec A.2 and
A.6; ``small``: the CPU smoke size of spec A.7), the optimiser settings (spec A.1, decision 2),
what the data must look like (visual tokens, object indices) and the parameter count the spec
derives for the paper size (A.7), which the tests hold each model to within 15 %.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cogen.errors import UnknownNameError

__all__ = ["MODELS", "SIZES", "ModelCard", "build_model", "paper_input", "parameter_counts", "resolve_model"]

#: Model sizes: the paper's, and the reduced one for CPU tests and smoke runs.
SIZES = ("paper", "small")


@dataclass(frozen=True)
class ModelCard:
    """One baseline: builder, sizes, protocol and data needs."""

    name: str
    summary: str
    family: str                        # "cogitao" or "carc"
    builder: Callable
    sizes: Mapping[str, Mapping]       # size name -> builder keyword arguments
    paper_parameters: int | None       # spec A.7 (A.6 for MLC); None where the paper has no such model
    batch_size: int = 64
    epochs: int = 10
    lr: float = 1e-3
    weight_decay: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: str = "warmup_cosine"
    accumulate: int = 1
    visual_tokens: bool = False
    objects: bool = False
    beyond_paper: bool = False
    validate_every: int = 1
    notes: tuple[str, ...] = field(default=())

    def build(self, shape, size: str = "paper"):
        """The model for data of ``shape`` (a :class:`~cogen_baselines.models.base.GridShape`, or the
        MLC encoder length) at ``size``."""
        if size not in self.sizes:
            raise UnknownNameError("model size", size, self.sizes)
        return self.builder(shape, **self.sizes[size])


def _resnet(shape, **kwargs):
    from cogen_baselines.models.resnet import ResNet

    return ResNet(shape, **kwargs)


def _transformer(shape, **kwargs):
    from cogen_baselines.models.vit import GridTransformer

    return GridTransformer(shape, **kwargs)


def _ponder(shape, **kwargs):
    from cogen_baselines.models.pl_tf import PonderTransformer

    return PonderTransformer(shape, **kwargs)


def _llada(shape, **kwargs):
    from cogen_baselines.models.llada import LLaDA

    return LLaDA(shape, **kwargs)


def _mlc(encoder_length, **kwargs):
    from cogen_baselines.models.mlc import MLC

    return MLC(encoder_length, **kwargs)


_SMALL_RESNET = {"blocks": ((8, 16, 3), (16, 32, 3), (32, 32, 1), (32, 64, 3), (64, 32, 1)), "stem": 8, "embed": 32,
                 "head_hidden": 32}
_SMALL_TF = {"dim": 64, "depth": 2, "heads": 2, "hidden": 256, "head_hidden": 64}
_VANILLA = {"position": "learned", "rope": False, "registers": 0, "dropout": 0.0}
_GRID = {"position": "sincos+objects", "rope": True, "registers": 6, "dropout": 0.1}

_CARDS = (
    ModelCard("resnet", "ResNet: 5 stride-1 residual blocks; task code appended after the encoder (the paper)",
              "cogitao", _resnet, {"paper": {}, "small": _SMALL_RESNET}, 1_360_000),
    ModelCard("resnet-film", "ResNet whose task code conditions every block by FiLM (beyond the paper)",
              "cogitao", _resnet, {"paper": {"film": True}, "small": {**_SMALL_RESNET, "film": True}}, None,
              beyond_paper=True),
    ModelCard("vanilla-tf", "Transformer: 6 layers, d 128, learned 1-D APE", "cogitao", _transformer,
              {"paper": _VANILLA, "small": {**_VANILLA, **_SMALL_TF}}, 1_260_000),
    ModelCard("grid-tf", "Grid transformer: visual tokens, 2-D sin-cos APE + OPE, 2-D RoPE, 6 registers",
              "cogitao", _transformer, {"paper": _GRID, "small": {**_GRID, **_SMALL_TF}}, 1_220_000,
              visual_tokens=True, objects=True),
    ModelCard("pl-tf", "Looped transformer: one shared block (d 256) under PonderNet halting, up to 7 steps",
              "cogitao", _ponder,
              {"paper": {}, "small": {"dim": 64, "heads": 2, "hidden": 256, "max_steps": 2, "halt_hidden": 32,
                                          "head_hidden": 64}},
              870_000, batch_size=32, visual_tokens=True),
    ModelCard("llada", "Masked diffusion: 6 layers, d 128, SwiGLU 384, RoPE; 32-step low-confidence decoding",
              "cogitao", _llada,
              {"paper": {}, "small": {"dim": 64, "depth": 2, "heads": 2, "hidden": 192, "head_hidden": 64,
                                          "decode_steps": 4}},
              1_290_000, epochs=20, lr=2e-4, weight_decay=0.01, visual_tokens=True),
    ModelCard("mlc", "Compositional-ARC's MLC: encoder-decoder 3+3 layers, d 128, 2x2 patch tokens, copy task",
              "carc", _mlc,
              {"paper": {}, "small": {"dim": 64, "layers": (1, 1), "heads": 2, "hidden": 128}},
              5_700_000, batch_size=200, epochs=300, lr=0.01, weight_decay=0.01, betas=(0.9, 0.95), schedule="mlc",
              accumulate=2, validate_every=10,
              notes=("epochs: 300 for systematicity configs, 200 for 3-shot ones (the paper)",)),
)

MODELS: Mapping[str, ModelCard] = MappingProxyType({card.name: card for card in _CARDS})


def resolve_model(name: str) -> ModelCard:
    """The card of model ``name``; unknown names raise :class:`cogen.errors.UnknownNameError` with suggestions."""
    if name not in MODELS:
        raise UnknownNameError("model", name, MODELS)
    return MODELS[name]


def build_model(name: str, shape, size: str = "paper"):
    """Build model ``name`` for ``shape`` at ``size`` (``paper`` or ``small``)."""
    return resolve_model(name).build(shape, size)


def paper_input(card: ModelCard):
    """The input the spec's parameter counts assume: a 20x20 CompGen grid with depth-4 task codes
    (a 22x22 canvas with visual tokens); for MLC the systematicity episodes (12 study pairs)."""
    from cogen.carc.mlc import encoder_length
    from cogen_baselines.data import task_vocabulary
    from cogen_baselines.models.base import GridShape

    if card.family == "carc":
        return encoder_length(12)
    side = 22 if card.visual_tokens else 20
    return GridShape(side, side, 15 if card.visual_tokens else 11, task_vocabulary())


def parameter_counts(size: str = "paper") -> list[dict]:
    """Every model's parameter count at ``size`` for :func:`paper_input`, beside the spec's figure (A.7)."""
    from cogen_baselines.models.base import count_parameters

    return [{"model": card.name, "parameters": count_parameters(card.build(paper_input(card), size)),
             "paper": card.paper_parameters, "summary": card.summary} for card in MODELS.values()]
