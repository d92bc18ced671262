"""Every baseline model as one frozen record: how to build it and the paper's protocol for it.

``MODELS`` maps a name to a :class:`ModelCard`: the builder, its sizes (``paper``: spec A.2 and
A.6; ``small``: the CPU smoke size of spec A.7), the optimiser settings (spec A.1, decision 2),
the workload that reads its data (:mod:`cogen_baselines.workload`: the columns a config must
have), what the data must look like (visual tokens, object indices, task codes) and the
parameter count the spec derives for the paper size (A.7), which the tests hold each model to
within 15 %.
"""

from __future__ import annotations

import importlib
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
    workload: Callable[[], type]       # the Workload class that reads this model's data (imported on call)
    builder: Callable
    sizes: Mapping[str, Mapping]       # size name -> builder keyword arguments
    paper_parameters: int | None       # spec A.7 (A.6 for MLC); None where the paper has no such model
    batch_size: int = 64
    epochs: int = 10
    lr: float = 1e-3
    weight_decay: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: str = "warmup_cosine"
    accumulate: int = 1                # the paper's gradient accumulation: an update sees batch_size x accumulate
    grad_accum: int = 1                # default micro-batches per update (memory: see `cogen baselines preflight`)
    visual_tokens: bool = False
    objects: bool = False
    beyond_paper: bool = False
    needs_task_codes: bool = False     # refused on data without task codes (EnvGen) ...
    without_task_codes: str | None = None  # ... where this model is the same as that one
    validate_every: int = 1
    notes: tuple[str, ...] = field(default=())

    def build(self, shape, size: str = "paper"):
        """The model for data of ``shape`` (a :class:`~cogen_baselines.models.base.GridShape`, or the
        MLC encoder length) at ``size``."""
        if size not in self.sizes:
            raise UnknownNameError("model size", size, self.sizes)
        return self.builder(shape, **self.sizes[size])

    @property
    def effective_batch(self) -> int:
        """Samples per optimiser update (the paper's batch times its accumulation)."""
        return self.batch_size * self.accumulate


def _named(name: str) -> type:
    """A workload class by its ``"module:class"`` name. Workloads are named, not imported, as a family's roles are:
    a workload refuses a model that cannot read a config by asking this registry which can
    (:func:`cogen_baselines.workload.models_for`), so importing it here would make an import cycle."""
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _grids():
    return _named("cogen_baselines.grids:GridWorkload")


def _episodes():
    return _named("cogen_baselines.episodes:MLCWorkload")


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
_LLADA = {"loss": "mean", "init": "mitchell"}
_LLADA_SFT = {"loss": "sft", "init": "normal"}
_SMALL_LLADA = {"dim": 64, "depth": 2, "heads": 2, "hidden": 192, "head_hidden": 64, "decode_steps": 4}
_VANILLA = {"position": "learned", "rope": False, "registers": 0, "dropout": 0.0}
_GRID = {"position": "sincos+objects", "rope": True, "registers": 6, "dropout": 0.1}

_CARDS = (
    ModelCard("resnet", "ResNet: 5 stride-1 residual blocks; task code appended after the encoder (the paper)",
              _grids, _resnet, {"paper": {}, "small": _SMALL_RESNET}, 1_360_000),
    ModelCard("resnet-film", "ResNet whose task code conditions every block by FiLM (beyond the paper)",
              _grids, _resnet, {"paper": {"film": True}, "small": {**_SMALL_RESNET, "film": True}}, None,
              beyond_paper=True, needs_task_codes=True, without_task_codes="resnet"),
    ModelCard("vanilla-tf", "Transformer: 6 layers, d 128, learned 1-D APE", _grids, _transformer,
              {"paper": _VANILLA, "small": {**_VANILLA, **_SMALL_TF}}, 1_260_000),
    ModelCard("grid-tf", "Grid transformer: visual tokens, 2-D sin-cos APE + OPE, 2-D RoPE, 6 registers",
              _grids, _transformer, {"paper": _GRID, "small": {**_GRID, **_SMALL_TF}}, 1_220_000,
              visual_tokens=True, objects=True),
    ModelCard("pl-tf", "Looped transformer: one shared block (d 256) under PonderNet halting, up to 7 steps",
              _grids, _ponder,
              {"paper": {}, "small": {"dim": 64, "heads": 2, "hidden": 256, "max_steps": 2, "halt_hidden": 32,
                                      "head_hidden": 64}},
              870_000, batch_size=32, visual_tokens=True),
    ModelCard("llada", "Masked diffusion (the paper's code): 12 tokens, 6 layers, d 128, SwiGLU 384, RoPE, "
              "mitchell init, unweighted loss",
              _grids, _llada, {"paper": _LLADA, "small": {**_LLADA, **_SMALL_LLADA}},
              1_290_000, epochs=20, lr=2e-4, weight_decay=0.01),
    ModelCard("llada-sft", "LLaDA's SFT form (departs from the paper): visual tokens (16 tokens), 1/p-weighted "
              "loss, std-0.02 init",
              _grids, _llada, {"paper": _LLADA_SFT, "small": {**_LLADA_SFT, **_SMALL_LLADA}},
              1_290_000, epochs=20, lr=2e-4, weight_decay=0.01, visual_tokens=True, beyond_paper=True),
    ModelCard("mlc", "MLC (the MLC paper): encoder-decoder 3+3 layers, d 128, 2x2 patch tokens, copy task",
              _episodes, _mlc,
              {"paper": {}, "small": {"dim": 64, "layers": (1, 1), "heads": 2, "hidden": 128}},
              5_700_000, batch_size=200, epochs=300, lr=0.01, weight_decay=0.01, betas=(0.9, 0.95), schedule="mlc",
              accumulate=2, grad_accum=8, validate_every=10,
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
    """The input the spec's parameter counts assume (the card's workload says): a 20x20 CompGen grid
    with depth-4 task codes (a 22x22 canvas with visual tokens); for MLC the systematicity episodes."""
    return card.workload().paper_input(card)


def parameter_counts(size: str = "paper") -> list[dict]:
    """Every model's parameter count at ``size`` for :func:`paper_input`, beside the spec's figure (A.7)."""
    from cogen_baselines.models.base import count_parameters

    return [{"model": card.name, "parameters": count_parameters(card.build(paper_input(card), size)),
             "paper": card.paper_parameters, "summary": card.summary} for card in MODELS.values()]
