"""Every baseline model as one frozen record: how to build it and the paper's protocol for it.

``MODELS`` maps a name to a :class:`ModelCard`: the builder, its sizes (``paper``: spec A.2 and
A.6; ``small``: the CPU smoke size of spec A.7), the optimiser settings (spec A.1, decision 2),
the workload that reads its data (:mod:`cogen_baselines.workload`: the columns a config must
have), what the data must look like (visual tokens, object indices, task codes) and the
parameter count the spec derives for the paper size (A.7), which the tests hold each model to
within 15 %.

Where the paper's text and the authors' code (which produced its numbers) differ, a card follows
the code: its sizes, batch, checkpoint rule and gradient clipping are the code's. ``text_model``
and ``text_protocol`` hold the text's form where it says otherwise, which ``--follow text``
selects (:data:`FOLLOW`); docs/baselines.md lists every difference and the decision.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cogen.errors import UnknownNameError

__all__ = ["FOLLOW", "MODELS", "SIZES", "ModelCard", "build_model", "paper_input", "parameter_counts", "resolve_model"]

#: Model sizes: the paper's, and the reduced one for CPU tests and smoke runs.
SIZES = ("paper", "small")
#: What a run follows where the paper's text and the authors' code differ: ``code`` (the default: the
#: code produced the paper's numbers) or ``text``.
FOLLOW = ("code", "text")
#: Protocol fields a card's text form may change.
_TEXT_PROTOCOL = frozenset({"batch_size", "checkpoint", "clip"})


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
    schedule: str = "warmup_cosine_epochs"
    cosine_epochs: int = 10            # warmup_cosine_epochs: CosineAnnealingLR's T_max, in epochs
    lr_floor: float = 0.0              # warmup_cosine_epochs: its eta_min over lr
    accumulate: int = 1                # the paper's gradient accumulation: an update sees batch_size x accumulate
    grad_accum: int = 1                # default micro-batches per update (memory: see `cogen baselines preflight`)
    visual_tokens: bool = False
    objects: bool = False
    beyond_paper: bool = False
    needs_task_codes: bool = False     # refused on data without task codes (EnvGen) ...
    without_task_codes: str | None = None  # ... where this model is the same as that one
    validate_every: int = 1
    checkpoint: str = "ood_acc"        # the rule the authors' code keeps (cogen_baselines.protocol.RULES)
    clip: float | None = 1.0           # gradient-norm clipping of the authors' code (None: none)
    text_model: Mapping = field(default_factory=dict)     # builder arguments where the paper's text differs
    text_protocol: Mapping = field(default_factory=dict)  # batch_size / checkpoint / clip where the text differs
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        from cogen_baselines.protocol import RULES

        unknown = set(self.text_protocol) - _TEXT_PROTOCOL
        if unknown:
            raise ValueError(f"{self.name}: text_protocol may set {', '.join(sorted(_TEXT_PROTOCOL))}, not {unknown}")
        if {self.checkpoint, self.setting("checkpoint", "text")} - set(RULES):
            raise ValueError(f"{self.name}: a checkpoint rule is not one of {', '.join(RULES)}")

    def build(self, shape, size: str = "paper", follow: str = "code"):
        """The model for data of ``shape`` (a :class:`~cogen_baselines.models.base.GridShape`, or the
        MLC encoder length) at ``size``, in the authors' code's form or (``follow="text"``) the text's."""
        if size not in self.sizes:
            raise UnknownNameError("model size", size, self.sizes)
        if follow not in FOLLOW:
            raise UnknownNameError("form to follow", follow, FOLLOW)
        return self.builder(shape, **{**self.sizes[size], **(self.text_model if follow == "text" else {})})

    def setting(self, name: str, follow: str = "code"):
        """The protocol field ``name`` (``batch_size``, ``checkpoint``, ``clip``) of the code's or the text's form."""
        if follow == "text" and name in self.text_protocol:
            return self.text_protocol[name]
        return getattr(self, name)

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
_VANILLA = {"position": "learned", "rope": False, "registers": 0, "dropout": 0.1}
_GRID = {"position": "sincos+objects", "rope": True, "registers": 6, "dropout": 0.1}
# The paper's text where it differs from the code (docs/baselines.md, the departures table).
_TEXT_RULE = {"checkpoint": "ood_loss"}                      # J: "lowest validation loss on the OOD validation set"
_TEXT_INIT = {"init": "text"}                                # J: "truncated normal" (decision 2's std 0.02)
_TEXT_VANILLA = {**_TEXT_INIT, "dropout": 0.0, "project": True}   # I.3: dropout is Grid-TF's; I.2: a linear layer before the head
_TEXT_GRID = {**_TEXT_INIT, "dropout_at": "residual", "project": True}  # I.3: "after the MHSA layer and after the feed-forward"
_TEXT_LLADA = {**_TEXT_RULE, "batch_size": 64}               # J.4: "the same hyperparameter configuration" as the ViTs

_CARDS = (
    ModelCard("resnet", "ResNet: 5 stride-1 residual blocks; task code appended after the encoder (the paper)",
              _grids, _resnet, {"paper": {}, "small": _SMALL_RESNET}, 1_360_000,
              text_model=_TEXT_INIT, text_protocol=_TEXT_RULE),
    ModelCard("resnet-film", "ResNet whose task code conditions every block by FiLM (beyond the paper)",
              _grids, _resnet, {"paper": {"film": True}, "small": {**_SMALL_RESNET, "film": True}}, None,
              beyond_paper=True, needs_task_codes=True, without_task_codes="resnet",
              text_model=_TEXT_INIT, text_protocol=_TEXT_RULE),
    ModelCard("vanilla-tf", "Transformer: 6 layers, d 128, learned 1-D APE, dropout 0.1", _grids, _transformer,
              {"paper": _VANILLA, "small": {**_VANILLA, **_SMALL_TF}}, 1_260_000,
              text_model=_TEXT_VANILLA, text_protocol=_TEXT_RULE),
    ModelCard("grid-tf", "Grid transformer: visual tokens, 2-D sin-cos APE + OPE, 2-D RoPE, 6 registers",
              _grids, _transformer, {"paper": _GRID, "small": {**_GRID, **_SMALL_TF}}, 1_220_000,
              visual_tokens=True, objects=True, text_model=_TEXT_GRID, text_protocol=_TEXT_RULE),
    ModelCard("pl-tf", "Looped transformer: one shared block (d 256) under PonderNet halting, up to 7 steps",
              _grids, _ponder,
              {"paper": {}, "small": {"dim": 64, "heads": 2, "hidden": 256, "max_steps": 2, "halt_hidden": 32,
                                      "head_hidden": 64}},
              870_000, batch_size=32, visual_tokens=True,
              text_model={**_TEXT_INIT, "dropout_at": "residual"}, text_protocol=_TEXT_RULE),
    ModelCard("llada", "Masked diffusion (the paper's code): 12 tokens, 6 layers, d 128, SwiGLU 384, RoPE, "
              "mitchell init, unweighted loss",
              _grids, _llada, {"paper": _LLADA, "small": {**_LLADA, **_SMALL_LLADA}},
              1_290_000, batch_size=32, epochs=20, lr=2e-4, weight_decay=0.01, checkpoint="ood_cell_acc",
              cosine_epochs=20, lr_floor=1e-6 / 2e-4, text_protocol=_TEXT_LLADA),
    ModelCard("llada-sft", "LLaDA's SFT form (departs from the paper): visual tokens (16 tokens), 1/p-weighted "
              "loss, std-0.02 init",
              _grids, _llada, {"paper": _LLADA_SFT, "small": {**_LLADA_SFT, **_SMALL_LLADA}},
              1_290_000, batch_size=32, epochs=20, lr=2e-4, weight_decay=0.01, visual_tokens=True, beyond_paper=True,
              checkpoint="ood_cell_acc", cosine_epochs=20, lr_floor=1e-6 / 2e-4, text_protocol=_TEXT_LLADA),
    ModelCard("mlc", "MLC (the MLC paper): encoder-decoder 3+3 layers, d 128, 2x2 patch tokens, copy task",
              _episodes, _mlc,
              {"paper": {}, "small": {"dim": 64, "layers": (1, 1), "heads": 2, "hidden": 128}},
              5_700_000, batch_size=200, epochs=300, lr=0.01, weight_decay=0.01, betas=(0.9, 0.95), schedule="mlc",
              accumulate=2, grad_accum=8, validate_every=10, checkpoint="final", clip=None,
              notes=("epochs: 300 for systematicity configs, 200 for 3-shot ones (the paper)",)),
)

MODELS: Mapping[str, ModelCard] = MappingProxyType({card.name: card for card in _CARDS})


def resolve_model(name: str) -> ModelCard:
    """The card of model ``name``; unknown names raise :class:`cogen.errors.UnknownNameError` with suggestions."""
    if name not in MODELS:
        raise UnknownNameError("model", name, MODELS)
    return MODELS[name]


def build_model(name: str, shape, size: str = "paper", follow: str = "code"):
    """Build model ``name`` for ``shape`` at ``size`` (``paper`` or ``small``), following ``follow`` (:data:`FOLLOW`)."""
    return resolve_model(name).build(shape, size, follow)


def paper_input(card: ModelCard):
    """The input the spec's parameter counts assume (the card's workload says): a 20x20 CompGen grid
    with depth-4 task codes (a 22x22 canvas with visual tokens); for MLC the systematicity episodes."""
    return card.workload().paper_input(card)


def parameter_counts(size: str = "paper") -> list[dict]:
    """Every model's parameter count at ``size`` for :func:`paper_input`, beside the spec's figure (A.7)."""
    from cogen_baselines.models.base import count_parameters

    return [{"model": card.name, "parameters": count_parameters(card.build(paper_input(card), size)),
             "paper": card.paper_parameters, "summary": card.summary} for card in MODELS.values()]
