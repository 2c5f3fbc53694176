"""Train a tutor model and export it for the NumPy runtime.

The data is either the synthetic template corpus (`corrige.synth.data`) or a pairs file of real
sentences with injected errors (`TrainConfig.pairs`, see `train.pairs`); a model trained on
pairs gets a tokenizer with the `<|gloss|>` separator token.

Deterministic by seed (data, init, batch order), resumable from `checkpoint.pt`, bounded by
steps and wall-clock minutes (the cosine schedule follows whichever runs out first), with a
periodic dev evaluation that decodes with the same NumPy runtime that serves the model.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from corrige.model.config import GPTConfig, preset
from corrige.model.generate import greedy_generate_scored
from corrige.model.numpy_gpt import KVCache, prepare
from corrige.model.torch_gpt import TorchGPT
from corrige.model.weights import load_model, save_model
from corrige.synth.data import make_splits
from corrige.tokenizer import BPETokenizer
from corrige.train.gloss_token import add_gloss_token
from corrige.train.pairs import TextPair, encode_pairs, pair_splits
from corrige.tutor.plausibility import write_known_words
from corrige.tutor.token_codec import EncodedExample, encode_pair, encode_prompt, split_answer

log = logging.getLogger(__name__)

IGNORE = -100  # label for prompt and padding positions: the loss only reads the answer


@dataclass(frozen=True)
class TrainConfig:
    preset: str = "tutor"
    data_seed: int = 0
    seed: int = 0
    n_train: int = 200_000
    n_dev: int = 2_000
    n_test: int = 2_000
    batch_size: int = 64
    lr: float = 3e-3
    min_lr_ratio: float = 0.05
    warmup_steps: int = 200
    weight_decay: float = 0.01
    max_steps: int = 20_000
    max_minutes: float = 40.0
    eval_every: int = 1_000
    eval_examples: int = 500
    checkpoint_every: int = 500
    threads: int = 0  # 0: torch's default
    pairs: str | None = None  # a pairs TSV of real sentences; None: the synthetic corpus
    pairs_limit: int | None = None  # read at most this many rows of `pairs`
    bf16: bool = False  # bfloat16 autocast: about 2-3x faster on CPUs with AVX-512 BF16
    tokenizer_sample: int = 300_000  # training pairs the BPE merges are learned from
    init_from: str | None = None  # a model directory whose weights and tokenizer the run starts from


@dataclass
class EvalPoint:
    step: int
    dev_loss: float
    dev_exact: float
    minutes: float


@dataclass
class TrainResult:
    out_dir: Path
    steps: int
    minutes: float
    final_loss: float
    history: list[EvalPoint] = field(default_factory=list)
    dropped_too_long: int = 0


StepCallback = Callable[[int, float, float], None]  # (step, loss, progress in [0, 1])


def build_tokenizer(train_examples, vocab_size: int) -> BPETokenizer:
    """BPE learned from the examples' three texts, with `<|gloss|>` for the answer's separator."""
    texts = (t for ex in train_examples for t in (ex.source, ex.corrected, ex.gloss))
    return BPETokenizer.train(texts, vocab_size=vocab_size, gloss_token=True)


def encode_split(tok: BPETokenizer, examples, n_ctx: int) -> tuple[list[EncodedExample], int]:
    if examples and isinstance(examples[0], TextPair):  # real-text pairs: batched encoding
        return encode_pairs(tok, examples, n_ctx)
    encoded, dropped = [], 0
    for ex in examples:
        e = encode_pair(tok, ex.source, ex.corrected, ex.gloss)
        if len(e.ids) > n_ctx:
            dropped += 1
            continue
        encoded.append(e)
    return encoded, dropped


def make_batch(batch: list[EncodedExample], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs (B, T) and next-token labels (B, T), IGNORE outside the answer."""
    T = max(len(e.ids) for e in batch) - 1
    x = torch.full((len(batch), T), pad_id, dtype=torch.long)
    y = torch.full((len(batch), T), IGNORE, dtype=torch.long)
    for i, e in enumerate(batch):
        ids = torch.as_tensor(np.asarray(e.ids), dtype=torch.long)
        x[i, : len(ids) - 1] = ids[:-1]
        y[i, e.n_prompt - 1 : len(ids) - 1] = ids[e.n_prompt :]
    return x, y


def lr_at(cfg: TrainConfig, step: int, progress: float) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    cosine = 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def dev_exact_match(model: TorchGPT, tok: BPETokenizer, examples, n_ctx: int, limit: int) -> float:
    """Share of dev sentences whose greedy output equals the reference target exactly."""
    w = prepare(model.export_params(), model.cfg)
    subset = examples[:limit]
    hits = 0
    for start in range(0, len(subset), 64):
        chunk = subset[start : start + 64]
        prompts = [encode_prompt(tok, ex.source) for ex in chunk]
        room = n_ctx - max(len(p) for p in prompts)
        outs = greedy_generate_scored(w, KVCache.allocate(model.cfg, len(chunk)), prompts, room, eos_id=tok.special.eos)
        for ex, out in zip(chunk, outs, strict=True):
            parsed = split_answer(tok, out.tokens)
            hits += parsed is not None and parsed[:2] == (ex.corrected, ex.gloss)
    return hits / max(len(subset), 1)


@torch.no_grad()
def dev_loss(model: TorchGPT, batches) -> float:
    model.eval()
    total, count = 0.0, 0
    for x, y in batches:
        logits = model(x)
        total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE, reduction="sum").item()
        count += int((y != IGNORE).sum())
    model.train()
    return total / max(count, 1)


def train(cfg: TrainConfig, out_dir: Path, resume: bool = False, on_step: StepCallback | None = None) -> TrainResult:
    """Train, checkpoint and export `model.safetensors`, `config.json`, `tokenizer.json` into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)

    t0 = time.perf_counter()
    if cfg.pairs:
        splits = pair_splits(cfg.pairs, cfg.n_dev, cfg.n_test, cfg.pairs_limit)
    else:
        splits = make_splits(cfg.data_seed, cfg.n_train, cfg.n_dev, cfg.n_test)
    ckpt = out_dir / "checkpoint.pt"
    tok, model_cfg, start_params = _tokenizer_and_start(cfg, out_dir, splits, resume and ckpt.is_file(), resume)
    train_set, dropped = encode_split(tok, splits["train"], model_cfg.n_ctx)
    dev_set, _ = encode_split(tok, splits["dev"], model_cfg.n_ctx)
    log.info(
        "data ready in %.1fs: %d train, %d dev (%d too long dropped)",
        time.perf_counter() - t0,
        len(train_set),
        len(dev_set),
        dropped,
    )
    dev_batches = [make_batch(dev_set[i : i + 256], tok.special.pad) for i in range(0, min(len(dev_set), 2048), 256)]

    model = TorchGPT(model_cfg)
    if start_params is not None:
        model.load_params(start_params)
        log.info("starting from the weights of %s", cfg.init_from)
    opt = _optimizer(model, cfg)
    step, spent_minutes, history = _resume(ckpt, model, opt) if resume and ckpt.is_file() else (0, 0.0, [])
    batches = _BatchOrder(train_set, cfg.batch_size, cfg.seed)

    def evaluate_now(at_step: int, at_minutes: float) -> EvalPoint:
        exact = dev_exact_match(model, tok, splits["dev"], model_cfg.n_ctx, cfg.eval_examples)
        return EvalPoint(at_step, dev_loss(model, dev_batches), exact, at_minutes)

    model.train()
    start = time.perf_counter() - spent_minutes * 60
    loss_ema = float("nan")
    while True:
        minutes = (time.perf_counter() - start) / 60
        progress = max(step / cfg.max_steps, minutes / cfg.max_minutes)
        if progress >= 1.0:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(cfg, step, progress)
        loss = _train_step(model, opt, make_batch(batches.at(step), tok.special.pad), cfg.bf16)
        step += 1
        loss_ema = loss if math.isnan(loss_ema) else 0.98 * loss_ema + 0.02 * loss
        if on_step:
            on_step(step, loss_ema, progress)
        if step % cfg.eval_every == 0:
            point = evaluate_now(step, minutes)
            history.append(point)
            log.info(
                "step %d: train loss %.4f, dev loss %.4f, dev exact %.3f",
                step,
                loss_ema,
                point.dev_loss,
                point.dev_exact,
            )
        if step % cfg.checkpoint_every == 0:
            _save_checkpoint(ckpt, model, opt, step, (time.perf_counter() - start) / 60, history)

    minutes = (time.perf_counter() - start) / 60
    final = evaluate_now(step, minutes)
    history.append(final)
    log.info("done: %d steps in %.1f min, dev exact %.3f", step, minutes, final.dev_exact)
    _save_checkpoint(ckpt, model, opt, step, minutes, history)
    _export(cfg, out_dir, model, model_cfg, tok, splits["train"], step, minutes, history)
    return TrainResult(out_dir, step, minutes, loss_ema, history, dropped)


def _tokenizer_and_start(
    cfg: TrainConfig, out_dir: Path, splits: dict, has_checkpoint: bool, resume: bool
) -> tuple[BPETokenizer, GPTConfig, dict | None]:
    """The tokenizer (the earlier model's with --init-from, the run's own on resume, else a new
    one), the model's shape for it, and the weights to start from (None: random)."""
    model_cfg: GPTConfig = preset(cfg.preset)
    tok_path = out_dir / "tokenizer.json"
    start_params = None
    if cfg.init_from and not has_checkpoint:
        # a model trained before (e.g. the bundled one) goes on learning: its tokenizer, shape and weights
        model_cfg, start_params = load_model(cfg.init_from)
        tok, start_params = add_gloss_token(BPETokenizer.load(cfg.init_from), start_params)
        tok.save(tok_path)
    elif resume and tok_path.is_file():
        tok = BPETokenizer.load(tok_path)
    else:
        sample = splits["train"][: cfg.tokenizer_sample] if cfg.pairs else splits["train"]
        tok = build_tokenizer(sample, model_cfg.vocab_size)
        tok.save(tok_path)
    return tok, model_cfg.with_(vocab_size=tok.vocab_size), start_params


def _optimizer(model: TorchGPT, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices only (not on biases, norms' gains)."""
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.98),
    )


def _resume(ckpt: Path, model: TorchGPT, opt: torch.optim.Optimizer) -> tuple[int, float, list[EvalPoint]]:
    """Load the checkpoint into the model and the optimizer: the step, the minutes spent and the history."""
    state = torch.load(ckpt, weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    log.info("resumed from step %d (%.1f min)", state["step"], state["minutes"])
    return state["step"], state["minutes"], [EvalPoint(**h) for h in state["history"]]


class _BatchOrder:
    """The batch of each step. The order is a pure function of (seed, step), so a resumed run
    sees the same batches; each epoch's order is bucketed by length (`_bucketed_order`)."""

    def __init__(self, train_set: list[EncodedExample], batch_size: int, seed: int) -> None:
        self.train_set, self.batch_size, self.seed = train_set, batch_size, seed
        self.lengths = np.array([len(e.ids) for e in train_set])
        self.epoch_perm: dict[int, np.ndarray] = {}

    def at(self, step: int) -> list[EncodedExample]:
        per_epoch = len(self.train_set) // self.batch_size
        epoch, k = divmod(step, per_epoch)
        if epoch not in self.epoch_perm:
            self.epoch_perm.clear()
            rng = np.random.default_rng([self.seed, epoch])
            self.epoch_perm[epoch] = _bucketed_order(self.lengths, self.batch_size, rng)
        idx = self.epoch_perm[epoch][k * self.batch_size : (k + 1) * self.batch_size]
        return [self.train_set[i] for i in idx]


def _train_step(
    model: TorchGPT, opt: torch.optim.Optimizer, batch: tuple[torch.Tensor, torch.Tensor], bf16: bool
) -> float:
    """One optimizer step on one batch (gradients clipped at norm 1); returns the batch's loss."""
    x, y = batch
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(x)
    loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), ignore_index=IGNORE)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


def _export(
    cfg: TrainConfig,
    out_dir: Path,
    model: TorchGPT,
    model_cfg: GPTConfig,
    tok: BPETokenizer,
    train_examples: list,
    step: int,
    minutes: float,
    history: list[EvalPoint],
) -> None:
    """The model for the NumPy runtime, its known words, and `train_config.json` (the runs it continues too)."""
    save_model(out_dir, model.export_params(), model_cfg, bos_id=tok.special.bos, eos_id=tok.special.eos)
    # real-text sources hold injected misspellings: only corrected sentences count as known words
    known = (
        (ex.corrected for ex in train_examples)
        if cfg.pairs
        else (t for ex in train_examples for t in (ex.source, ex.corrected))
    )
    write_known_words(out_dir, known)
    summary = {"steps": step, "minutes": round(minutes, 1), "history": [asdict(h) for h in history]}
    record = {"train": asdict(cfg), "model": model_cfg.to_dict(), "result": summary}
    earlier = Path(cfg.init_from or "") / "train_config.json"
    if cfg.init_from and earlier.is_file():  # the runs this one continues, so the card tells all of them
        before = json.loads(earlier.read_text())
        record["continued_from"] = [*before.pop("continued_from", []), before]
    (out_dir / "train_config.json").write_text(_json(record))


def _bucketed_order(lengths: np.ndarray, batch_size: int, rng: np.random.Generator, group: int = 50) -> np.ndarray:
    """A permutation whose consecutive batches hold examples of similar length.

    The data is shuffled, cut into groups of `group` batches, each group sorted by length, and
    the batches then shuffled: batches pad less (real sentences run from 3 to 60 words) while
    each batch still mixes sentences from all over the corpus.
    """
    order = rng.permutation(len(lengths))
    span = batch_size * group
    for start in range(0, len(order), span):
        part = order[start : start + span]
        order[start : start + span] = part[np.argsort(lengths[part], kind="stable")]
    n_batches = len(order) // batch_size
    batches = order[: n_batches * batch_size].reshape(n_batches, batch_size)
    return np.concatenate([batches[rng.permutation(n_batches)].ravel(), order[n_batches * batch_size :]])


def _save_checkpoint(path: Path, model, opt, step: int, minutes: float, history: list[EvalPoint]) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "step": step,
            "minutes": minutes,
            "history": [asdict(h) for h in history],
        },
        tmp,
    )
    tmp.replace(path)  # atomic: a crash mid-write leaves the previous checkpoint


def _json(obj) -> str:
    import json

    return json.dumps(obj, indent=2) + "\n"
