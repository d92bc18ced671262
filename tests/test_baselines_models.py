"""The models of ``cogen_baselines``: shapes and classes, gradients, parameter counts against the spec,
what each model can see (task codes, other cells), and the PonderNet, LLaDA and MLC pieces against oracles."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from baselines_helpers import one_thread  # noqa: F401  (autouse fixture)

from cogen_baselines.grids import GridWorkload
from cogen_baselines.models.base import GridBatch, GridShape, count_parameters
from cogen_baselines.registry import MODELS, paper_input, resolve_model

GRID_MODELS = [name for name, card in MODELS.items() if card.workload() is GridWorkload]


def _shape(card, tasks: bool = True) -> GridShape:
    side = 8 if card.visual_tokens else 6
    return GridShape(side, side, 15 if card.visual_tokens else 11, 29 if tasks else None)


def _batch(shape: GridShape, size: int = 4, seed: int = 0) -> GridBatch:
    generator = torch.Generator().manual_seed(seed)
    grid = (size, shape.height, shape.width)
    return GridBatch(torch.randint(0, shape.classes, grid, generator=generator),
                     torch.randint(0, shape.classes, grid, generator=generator),
                     torch.randint(0, 29, (size, 4), generator=generator) if shape.task_vocab else None,
                     torch.randint(0, 4, grid, generator=generator))


def _model(name: str, shape: GridShape, seed: int = 0):
    torch.manual_seed(seed)
    return resolve_model(name).build(shape, "small")


@pytest.mark.parametrize("name", GRID_MODELS)
@pytest.mark.parametrize("tasks", [True, False], ids=["compgen", "envgen"])
def test_forward_backward_and_classes(name, tasks):
    card = resolve_model(name)
    shape = _shape(card, tasks)
    if card.needs_task_codes and not tasks:
        with pytest.raises(ValueError, match="needs task codes"):
            _model(name, shape)
        return
    model, batch = _model(name, shape), _batch(shape)
    logits = model.logits(batch)
    assert logits.shape == (4, shape.height, shape.width, 15 if card.visual_tokens else 11)
    loss = model.training_loss(batch)
    assert loss.ndim == 0 and torch.isfinite(loss)
    loss.backward()
    trained = [p for p in model.parameters() if p.grad is not None and p.grad.abs().sum() > 0]
    assert len(trained) >= 0.8 * len(list(model.parameters()))
    model.eval()
    losses, predictions = model.evaluate(batch, torch.Generator().manual_seed(0))
    assert losses.shape == (4,) and torch.isfinite(losses).all()
    assert predictions.shape == batch.targets.shape
    assert 0 <= int(predictions.min()) and int(predictions.max()) < shape.classes


@pytest.mark.parametrize("name", list(MODELS))
def test_paper_size_parameter_counts_are_within_15_percent_of_the_spec(name):
    card = resolve_model(name)
    count = count_parameters(card.build(paper_input(card)))
    reference = card.paper_parameters or resolve_model("resnet").paper_parameters  # resnet-film: vs ResNet
    print(f"{name}: {count:,} parameters (spec {reference:,}, {count / reference - 1:+.1%})")
    assert abs(count / reference - 1) <= 0.15


def _logits_change(model, batch, changed: GridBatch) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return (model.logits(batch) - model.logits(changed)).abs().amax(dim=-1)


@pytest.mark.parametrize("name", GRID_MODELS)
def test_a_cell_sees_other_cells(name):
    """Changing one corner cell changes the prediction of the opposite corner: the model mixes the grid."""
    shape = _shape(resolve_model(name))
    model, batch = _model(name, shape), _batch(shape)
    inputs = batch.inputs.clone()
    inputs[:, -1, -1] = (inputs[:, -1, -1] + 1) % shape.classes
    change = _logits_change(model, batch, batch._replace(inputs=inputs))
    assert (change[:, 0, 0] > 0).all()


@pytest.mark.parametrize("name", GRID_MODELS)
def test_only_the_papers_resnet_ignores_the_task_code(name):
    """The paper appends ResNet's task code after the encoder, where no cell can see it; every other model uses it."""
    shape = _shape(resolve_model(name))
    model, batch = _model(name, shape), _batch(shape)
    change = _logits_change(model, batch, batch._replace(tasks=(batch.tasks + 1) % 29))
    if name == "resnet":
        assert float(change.max()) == 0.0
    else:
        assert (change.flatten(1).amax(dim=1) > 0).all()


def test_same_seed_same_weights_other_seed_other_weights():
    shape = _shape(resolve_model("grid-tf"))
    first, again, other = (_model("grid-tf", shape, seed).state_dict() for seed in (7, 7, 8))
    assert all(torch.equal(first[key], again[key]) for key in first)
    assert not all(torch.equal(first[key], other[key]) for key in first)


def _code_prior(prior: float, max_steps: int) -> list[float]:
    """The authors' code's truncated geometric prior: lambda (1 - lambda)^k, the last step holding the rest."""
    mass, left = [], 1.0
    for k in range(max_steps):
        mass.append(left if k == max_steps - 1 else left * prior)
        left *= 1 - prior
    return mass


def _ponder_oracle(losses, halts, prior, beta, max_steps=None):
    """PonderNet's loss for one sample, step by step as the authors' code computes it: the last step that
    ran takes the remaining mass; KL(p || prior) with p clamped to [1e-6, 1 - 1e-6] and the prior of
    ``max_steps`` steps cut to the steps that ran (not renormalised)."""
    steps = len(losses)
    p, reach = [], 1.0
    for t in range(steps):
        p.append(reach * (halts[t] if t < steps - 1 else 1.0))
        reach *= 1 - halts[t]
    geometric = _code_prior(prior, max_steps or steps)[:steps]
    clamped = [min(max(q, 1e-6), 1 - 1e-6) for q in p]
    kl = sum(q * math.log(q / g) for q, g in zip(clamped, geometric, strict=True))
    return sum(q * loss for q, loss in zip(p, losses, strict=True)) + beta * kl


def test_the_ponder_prior_puts_the_remaining_mass_on_the_last_step():
    from cogen_baselines.models.pl_tf import ponder_prior

    prior = ponder_prior(0.05, 7, dtype=torch.float64)
    assert prior.tolist() == pytest.approx(_code_prior(0.05, 7), rel=1e-12)
    assert float(prior.sum()) == pytest.approx(1.0) and float(prior[-1]) == pytest.approx(0.95 ** 6)   # 0.735


def test_ponder_loss_matches_a_step_by_step_oracle():
    from cogen_baselines.models.pl_tf import ponder_loss

    generator = torch.Generator().manual_seed(1)
    losses, halts = torch.rand(5, 6, generator=generator, dtype=torch.float64) * 3, \
        torch.rand(5, 6, generator=generator, dtype=torch.float64)
    got = ponder_loss(losses, halts, 0.05, 0.01)
    cut = ponder_loss(losses, halts, 0.05, 0.01, torch.tensor([True, True, True, False, False]))
    for b in range(6):
        expected = _ponder_oracle(losses[:, b].tolist(), halts[:, b].tolist(), 0.05, 0.01)
        assert float(got[b]) == pytest.approx(expected, rel=1e-9)
        early = _ponder_oracle(losses[:3, b].tolist(), halts[:3, b].tolist(), 0.05, 0.01, max_steps=5)
        assert float(cut[b]) == pytest.approx(early, rel=1e-9)


def _early_exit_loss(model, batch):
    """PonderNet's training loss as the authors' code computes it: a loop that stops (a host sync) once
    every sample's remaining halting mass is below epsilon, feeding back the normalised state from
    h_0 = x, then the reconstruction loss and KL to the prior cut to the steps that ran."""
    x = model._embedded(batch)
    state, reach, losses, p = x, torch.ones(len(x)), [], []
    for step in range(model.max_steps):
        state = model.norm(model.block(x + state, model.rotary))
        logits = model.head(state[:, : model.shape.cells]).view(-1, *batch.targets.shape[1:], model.shape.classes)
        losses.append(model._cell_losses(logits, batch.targets))
        if step == model.max_steps - 1:
            p.append(reach)
            break
        halt = torch.sigmoid(model.halt(state.mean(dim=1)).squeeze(-1))
        p.append(reach * halt)
        reach = reach * (1 - halt)
        if bool((reach < model.epsilon).all()):
            p[-1] = p[-1] + reach
            break
    p = torch.stack(p)                                                        # (T, B)
    reconstruction = (p * torch.stack(losses)).sum(dim=0).mean()
    prior = torch.tensor(_code_prior(model.prior, model.max_steps)[: len(p)])[:, None]
    clamped = p.clamp(1e-6, 1 - 1e-6)
    kl = (clamped * (clamped.log() - prior.log())).sum() / p.shape[1]          # KLDivLoss(batchmean)
    return reconstruction + model.beta * kl, len(losses)


@pytest.mark.parametrize(("bias", "steps"), [(6.0, 1), (1.4, 3), (0.0, 7)])
def test_pl_tf_masked_ponder_loss_equals_the_early_exit_loop(bias, steps):
    """Training runs every pondering step and masks those after the cut; the loss (and its gradient)
    equals the loop that stops there. The halting bias sets lambda for every sample, hence the cut."""
    from cogen_baselines.models.pl_tf import PonderTransformer

    shape = _shape(resolve_model("pl-tf"))
    torch.manual_seed(0)
    model = PonderTransformer(shape, dim=32, heads=2, hidden=64, max_steps=7, halt_hidden=16, head_hidden=16)
    torch.nn.init.zeros_(model.halt[2].weight)
    torch.nn.init.constant_(model.halt[2].bias, bias)
    batch = _batch(shape)
    model.train()
    torch.manual_seed(1)
    expected, ran = _early_exit_loss(model, batch)
    expected.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    torch.manual_seed(1)
    got = model.training_loss(batch)
    got.backward()
    assert ran == steps and float(got.detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    for p, grad in zip(model.parameters(), grads, strict=True):
        assert torch.allclose(p.grad, grad, rtol=1e-5, atol=1e-7)


def test_llada_decoding_reveals_every_cell_on_schedule():
    from cogen_baselines.models.llada import transfer_schedule

    for length, steps in [(484, 32), (81, 32), (10, 32), (64, 4)]:
        schedule = transfer_schedule(length, steps)
        assert sum(schedule) == length and max(schedule) - min(schedule) <= 1 and schedule == sorted(schedule)[::-1]
    card = resolve_model("llada")
    shape = _shape(card)
    model = _model("llada", shape)
    predictions = model.decode(_batch(shape))
    assert int(predictions.max()) < shape.classes  # no MASK token left


def _llada_cells(model, batch, draws: torch.Generator):
    """The oracle's view of one masked-diffusion draw: per sample, the list of -log p(target) of its masked
    cells (the prompt, the input grid, is never masked), and the mask rate p."""
    p = (1 - model.epsilon) * torch.rand(len(batch.targets), 1, generator=draws) + model.epsilon
    targets = batch.targets.flatten(1)
    masked = torch.rand(targets.shape, generator=draws) < p
    scores = model._target_logits(batch, torch.where(masked, model.mask_token, targets)).log_softmax(dim=-1)
    cells = [[-float(scores[b, i, targets[b, i]]) for i in range(targets.shape[1]) if masked[b, i]]
             for b in range(len(targets))]
    return cells, p


def test_llada_sft_loss_is_the_masked_target_cross_entropy_over_the_mask_rate():
    """llada-sft (LLaDA's SFT form): per sample, the cross-entropy of the masked target cells divided by
    the mask rate, over the target length."""
    shape = _shape(resolve_model("llada-sft"))
    model, batch = _model("llada-sft", shape), _batch(shape)
    model.eval()
    with torch.no_grad():
        got = model._masked_loss(batch, torch.Generator().manual_seed(3))
        cells, p = _llada_cells(model, batch, torch.Generator().manual_seed(3))
    for b in range(4):
        assert float(got[b]) == pytest.approx(sum(cells[b]) / float(p[b]) / shape.cells, rel=1e-5)


def test_the_papers_llada_has_12_tokens_and_an_unweighted_loss_over_the_batchs_masked_cells():
    """llada (the paper's code): 11 classes + MASK, no visual tokens; the training loss is the plain
    mean cross-entropy over every masked target cell of the batch (``per_sample_loss.mean()`` there)."""
    card = resolve_model("llada")
    assert not card.visual_tokens and paper_input(card).classes == 11
    shape = _shape(card)
    model, batch = _model("llada", shape), _batch(shape)
    assert model.embed.num_embeddings == 12 and model.mask_token == 11
    torch.manual_seed(5)
    draws = torch.Generator()
    draws.set_state(torch.get_rng_state())          # the draws training_loss makes from the global generator
    with torch.no_grad():
        got = model.training_loss(batch)
        cells, _ = _llada_cells(model, batch, draws)
    flat = [cell for sample in cells for cell in sample]
    assert float(got) == pytest.approx(sum(flat) / len(flat), rel=1e-5)


def test_llada_mitchell_init_scales_by_fan_in_and_depth():
    """The paper's LLaDA: std 1/sqrt(fan_in) for the trunk's weights, output projections of layer i
    further divided by sqrt(2(i+1)); llada-sft keeps std 0.02."""
    shape = GridShape(20, 20, 11, 29)
    model = resolve_model("llada").build(shape).requires_grad_(False)
    for layer, block in enumerate(model.encoder.blocks):
        scale = (2 * (layer + 1)) ** -0.5
        expected = {block.attention.qkv: 128 ** -0.5, block.attention.out: 128 ** -0.5 * scale,
                    block.feed_forward.gate: 128 ** -0.5, block.feed_forward.down: 384 ** -0.5 * scale}
        for linear, std in expected.items():
            # a normal cut at 3 std has std 0.9866 of the uncut one
            assert float(linear.weight.std()) == pytest.approx(0.9866 * std, rel=0.08), (layer, linear)
            assert float(linear.weight.abs().max()) <= 3 * std + 1e-6
    assert float(model.embed.weight.std()) == pytest.approx(0.9866 * 128 ** -0.5, rel=0.15)
    sft = resolve_model("llada-sft").build(GridShape(22, 22, 15, 29)).requires_grad_(False)
    assert float(sft.encoder.blocks[0].attention.qkv.weight.std()) == pytest.approx(0.02 * 0.88, rel=0.1)


def test_mlc_loss_weights_background_patches_and_generates_grids():
    from cogen.carc.mlc import PATCH_OFFSET, VOCAB_SIZE, encoder_length

    torch.manual_seed(0)
    model = resolve_model("mlc").build(encoder_length(2), "small")
    encoder = torch.randint(5, VOCAB_SIZE, (3, encoder_length(2)))
    target = torch.randint(5, VOCAB_SIZE, (3, 26))
    target[:, :10] = PATCH_OFFSET  # all-background patches
    decoder_input = torch.cat([torch.ones(3, 1, dtype=torch.long), target[:, :-1]], dim=1)
    logits = model(encoder, decoder_input)
    per_token = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, reduction="none")
    weights = torch.where(target == PATCH_OFFSET, 0.2, 1.0)
    expected = (per_token * weights).sum() / weights.sum()
    assert model.loss(encoder, decoder_input, target).item() == pytest.approx(expected.item(), rel=1e-5)
    model.loss(encoder, decoder_input, target).backward()
    assert model.generate(encoder).shape == (3, 25)
