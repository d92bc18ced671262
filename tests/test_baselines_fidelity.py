"""The authors' code where it and the papers' text differ (issue 39): the 2-D RoPE of the grid paper's code,
RoPE in FP32, each model's initialisation, dropout placement, the text's form behind ``--follow text``,
gradient clipping after unscaling, and the compile fallback that catches compile failures only."""

from __future__ import annotations

import logging
import math

import pytest

torch = pytest.importorskip("torch")

from baselines_helpers import compgen_build, one_thread  # noqa: F401  (fixtures)

from cogen_baselines.models.layers import Block, Rotary, rotary_2d
from cogen_baselines.registry import MODELS, resolve_model
from cogen_baselines.train import Protocol, Trainer

CPU = torch.device("cpu")


def _library_rotation(x: torch.Tensor, side: int) -> torch.Tensor:
    """The grid paper's code's 2-D RoPE written out from ``rotary-embedding-torch`` (``freqs_for='pixel'``,
    ``max_freq = side // 2``, ``get_axial_freqs(side, side)``, ``apply_rotary_emb``) for ``x`` of shape
    ``(..., side * side, head_dim)``: frequencies repeated for both members of a pair, ``rotate_half``
    on neighbouring dimensions, the first ``2 * head_dim // 4`` dimensions rotated."""
    head_dim = x.shape[-1]
    dim = head_dim // 4
    frequencies = torch.linspace(1.0, (side // 2) / 2, dim // 2, dtype=torch.float64) * math.pi
    positions = torch.linspace(-1, 1, side, dtype=torch.float64)
    per_axis = (positions[:, None] * frequencies).repeat_interleave(2, dim=-1)           # (side, dim)
    rows = per_axis[:, None, :].expand(side, side, dim)
    cols = per_axis[None, :, :].expand(side, side, dim)
    angles = torch.cat([rows, cols], dim=-1).reshape(side * side, 2 * dim)
    middle, rest = x[..., : 2 * dim].double(), x[..., 2 * dim:]
    pairs = middle.unflatten(-1, (-1, 2))
    rotated_half = torch.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).flatten(-2)
    return torch.cat([(middle * angles.cos() + rotated_half * angles.sin()).to(x.dtype), rest], dim=-1)


@pytest.mark.parametrize(("side", "head_dim"), [(22, 32), (7, 16)])
def test_the_2d_rope_is_the_grid_papers_code(side, head_dim):
    """Grid-TF's and PL-TF's RoPE: the library's pixel frequencies over positions in [-1, 1], half of each
    head rotated; registers before and task tokens after the grid are not rotated."""
    before, after = 6, 4
    x = torch.randn(2, 3, before + side * side + after, head_dim, dtype=torch.float64)
    got = Rotary(rotary_2d(side, side, head_dim, before=before, after=after).double())(x)
    grid = slice(before, before + side * side)
    assert torch.allclose(got[:, :, grid], _library_rotation(x[:, :, grid], side), rtol=1e-5, atol=1e-5)
    assert torch.equal(got[:, :, :before], x[:, :, :before]) and torch.equal(got[:, :, -after:], x[:, :, -after:])


def test_rope_rotates_in_fp32_whatever_the_activations():
    """Under FP16 autocast q and k are FP16: the rotation is computed in FP32 and rounded once."""
    rotary = Rotary(rotary_2d(22, 22, 32))
    x = torch.randn(2, 4, 484, 32).half()
    assert rotary(x).dtype == torch.float16
    assert torch.equal(rotary(x), rotary(x.float()).half())


def _build(name: str, follow: str = "code"):
    card = resolve_model(name)
    shape = card.workload().paper_input(card)
    torch.manual_seed(0)
    return card.build(shape, "paper", follow).requires_grad_(False)


def _uniform(weight: torch.Tensor, bound: float) -> bool:
    """Drawn from U(-bound, bound): inside it, and with its standard deviation bound / sqrt(3)."""
    return float(weight.abs().max()) <= bound + 1e-7 and float(weight.std()) == pytest.approx(bound / 3 ** 0.5, rel=0.1)


def test_each_model_is_initialised_as_the_authors_code_does():
    """Task-token tables N(0, 1) in every transformer; Vanilla-TF's learned APE randn; the cell embedding
    as PyTorch initialises a 1x1 convolution of the one-hot grid; the trunk's linear layers std 0.02 (ViT),
    xavier-uniform (PL-TF); heads and ResNet as PyTorch initialises them; MLC's tables N(0, 1) and its
    transformer's matrices xavier-uniform."""
    vanilla = _build("vanilla-tf")
    assert float(vanilla.task.weight.std()) == pytest.approx(1.0, rel=0.05)
    assert float(vanilla.ape.std()) == pytest.approx(1.0, rel=0.05) and vanilla.project is None
    assert _uniform(vanilla.embed.weight, 11 ** -0.5) and float(vanilla.embed.bias.abs().max()) <= 11 ** -0.5
    assert float(vanilla.encoder.blocks[0].attention.qkv.weight.std()) == pytest.approx(0.02, rel=0.05)
    assert _uniform(vanilla.head.net[0].weight, 128 ** -0.5)
    grid = _build("grid-tf")
    assert _uniform(grid.embed.weight, 15 ** -0.5) and float(grid.task.weight.std()) == pytest.approx(1.0, rel=0.05)
    pl_tf = _build("pl-tf")
    xavier = (6 / (256 + 768)) ** 0.5
    assert _uniform(pl_tf.block.attention.qkv.weight, xavier) and not pl_tf.block.attention.qkv.bias.any()
    assert _uniform(pl_tf.halt[0].weight, (6 / (256 + 128)) ** 0.5)
    assert float(pl_tf.task.weight.std()) == pytest.approx(1.0, rel=0.05)
    resnet = _build("resnet")
    assert _uniform(resnet.blocks[1].conv1.weight, (64 * 9) ** -0.5)
    llada = _build("llada")
    assert float(llada.task.weight.std()) == pytest.approx(1.0, rel=0.05) and _uniform(llada.head.net[0].weight,
                                                                                        128 ** -0.5)
    mlc = _build("mlc")
    assert float(mlc.encoder_embed.weight.std()) == pytest.approx(1.0, rel=0.02)
    assert float(mlc.row.weight.std()) == pytest.approx(1.0, rel=0.5)
    layer = mlc.encoder.layers[0]
    assert _uniform(layer.self_attn.in_proj_weight, (6 / (128 + 384)) ** 0.5)
    assert not layer.self_attn.out_proj.bias.any() and _uniform(layer.linear1.weight, (6 / (128 + 768)) ** 0.5)


def test_the_texts_form_is_one_switch_away():
    """``--follow text``: the text's truncated-normal init, Vanilla-TF without dropout and with the linear
    layer before the head, dropout after the attention and the feed-forward, the OOD-loss rule, LLaDA's
    batch 64; the code's form is every card's default."""
    text = _build("vanilla-tf", "text")
    assert text.project is not None and float(text.ape.std()) < 0.03 and float(text.task.weight.std()) < 0.03
    assert all(block.dropout.p == 0 and block.attention.dropout == 0 for block in text.encoder.blocks)
    code = _build("vanilla-tf")
    assert all(block.dropout.p == 0 and block.attention.dropout == 0.1 for block in code.encoder.blocks)
    assert _build("grid-tf", "text").encoder.blocks[0].dropout.p == 0.1
    for name, card in MODELS.items():
        assert card.setting("checkpoint", "code") == {"llada": "ood_cell_acc", "llada-sft": "ood_cell_acc",
                                                      "mlc": "final"}.get(name, "ood_acc")
        assert card.setting("clip") == (None if name == "mlc" else 1.0)
    llada = resolve_model("llada")
    assert (llada.setting("batch_size"), llada.setting("batch_size", "text")) == (32, 64)
    assert llada.setting("checkpoint", "text") == "ood_loss" == resolve_model("grid-tf").setting("checkpoint", "text")


def test_dropout_sits_where_dropout_at_says():
    """``inner`` (the code): the attention probabilities and inside the feed-forward; ``residual`` (the
    text): on the sub-layers' outputs. In evaluation neither drops anything."""
    torch.manual_seed(0)
    x = torch.randn(2, 9, 16)
    for place in ("inner", "residual"):
        block = Block(16, 2, 32, dropout=0.5, dropout_at=place)
        inner = [block.attention.dropout, block.feed_forward[2].p, block.feed_forward[4].p]
        assert inner == ([0.5] * 3 if place == "inner" else [0.0] * 3)
        assert block.dropout.p == (0.0 if place == "inner" else 0.5)
        block.eval()
        assert torch.equal(block(x), block(x))
        block.train()
        torch.manual_seed(1)
        first = block(x)
        torch.manual_seed(2)
        assert not torch.equal(first, block(x))


def _workload(compgen, name: str = "vanilla-tf"):
    return resolve_model(name).workload().load(compgen, "E-1", resolve_model(name), device=CPU, task_codes="auto",
                                               train_limit=16, eval_batch_size=64, seed=0, eval_limit=4)


def _step_norm(model, workload, protocol) -> float:
    """The gradient norm the optimiser steps with (after GradScaler's unscaling, where it has one)."""
    trainer = Trainer(model, protocol, CPU, total_updates=10, updates_per_epoch=10)
    norms, step = [], trainer.optimizer.step

    def record(*args, **kwargs):
        scale = float(trainer.scaler.get_scale()) if protocol.precision == "fp16" and not protocol.clip else 1.0
        norms.append(float(torch.linalg.vector_norm(torch.stack([p.grad.float().norm() for p in model.parameters()
                                                                 if p.grad is not None]))) / scale)
        return step(*args, **kwargs)

    trainer.optimizer.step = record
    torch.manual_seed(1)
    trainer.update(workload, torch.arange(8))
    return norms[0]


def test_gradients_are_clipped_after_unscaling(compgen):
    """Clipping at norm c (the grid paper's code: 1.0, after Lightning unscales FP16 gradients): the
    optimiser steps with a gradient of norm c where the unclipped one is larger, FP16 scaling included."""
    workload = _workload(compgen)
    card = resolve_model("vanilla-tf")

    def norm(precision: str, clip: float | None) -> float:
        torch.manual_seed(0)
        model = card.builder(workload.model_input, **{**card.sizes["small"], "dropout": 0.0})
        return _step_norm(model, workload, Protocol(1, 8, 1e-3, 0.0, precision=precision, clip=clip))

    unclipped = norm("fp32", None)
    assert norm("fp16", None) == pytest.approx(unclipped, rel=0.02)
    assert norm("fp32", unclipped / 4) == pytest.approx(unclipped / 4, rel=1e-4)
    assert norm("fp16", unclipped / 4) == pytest.approx(unclipped / 4, rel=1e-3)
    assert norm("fp32", 10 * unclipped) == pytest.approx(unclipped, rel=1e-5)      # below the cap: untouched


def _compiled_trainer(workload, backend, monkeypatch):
    import cogen_baselines.train as train_module

    real = torch.compile
    monkeypatch.setattr(train_module.torch, "compile",
                        lambda function, **options: real(function, backend=backend, **options))
    card = resolve_model("vanilla-tf")
    torch.manual_seed(0)
    model = card.build(workload.model_input, "small")
    return Trainer(model, Protocol(1, 8, 1e-3, 0.0, compile=True), CPU, total_updates=10, updates_per_epoch=10)


@pytest.mark.slow
def test_an_error_of_the_compiled_update_itself_is_not_a_compile_failure(compgen, monkeypatch, caplog):
    """A compiled update that compiles but fails when it runs (a device-side assert, say) stops the run with
    that error: no fallback, nothing restored, no warning."""
    from torch._dynamo.backends.common import aot_autograd

    def compiles(graph, inputs):
        def run(*args):
            raise RuntimeError("simulated device-side assert")
        return run

    workload = _workload(compgen)
    torch._dynamo.reset()
    trainer = _compiled_trainer(workload, aot_autograd(fw_compiler=compiles), monkeypatch)
    with caplog.at_level(logging.WARNING, logger="cogen_baselines"), \
            pytest.raises(RuntimeError, match="simulated device-side assert"):
        trainer.update(workload, torch.arange(8))
    assert not trainer.fell_back and "torch.compile failed" not in caplog.text


@pytest.mark.slow
def test_when_the_eager_redo_fails_too_the_compile_failure_is_reported(compgen, monkeypatch, caplog):
    """The first error is the one raised (unmasked by the redo's), with the redo's error as a note."""
    from torch._dynamo.backends.common import aot_autograd

    def fails(graph, inputs):
        raise RuntimeError("simulated failure in the forward compiler")

    workload = _workload(compgen)
    torch._dynamo.reset()
    trainer = _compiled_trainer(workload, aot_autograd(fw_compiler=fails), monkeypatch)

    def broken(batch):
        raise ValueError("the eager pass broke as well")

    trainer.eager = broken
    with caplog.at_level(logging.WARNING, logger="cogen_baselines"), pytest.raises(Exception) as raised:
        trainer.update(workload, torch.arange(8))
    assert "simulated failure in the forward compiler" in str(raised.value)
    assert any("the eager pass broke as well" in note for note in getattr(raised.value, "__notes__", []))
    assert "torch.compile failed" in caplog.text


def test_the_models_keep_the_papers_parameter_counts_in_both_forms():
    """The code's form drops the text's projection before the head (16,512 parameters for d 128); both
    forms stay within 2 % of the spec's figures."""
    for name in ("vanilla-tf", "grid-tf", "pl-tf"):
        card = resolve_model(name)
        for follow in ("code", "text"):
            model = card.build(card.workload().paper_input(card), "paper", follow)
            count = sum(p.numel() for p in model.parameters())
            assert abs(count / card.paper_parameters - 1) < 0.02, (name, follow, count)
