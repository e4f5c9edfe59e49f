"""LoRA fine-tuning of a causal LM as the parser, with peft and a plain torch loop.

The examples are the prompt-format lines of nsmcore.training_data: for every slot, the exact
prompt the transformers backend scores (the shared instruction prefix, the text, the slots so
far) and the value as it tokenises it. The loss is the mean negative log-likelihood of the value
tokens only, the quantity the constrained decoder ranks candidates by; rows are left-padded with
position ids from the mask, as the decoder reads them, so only the last few positions' logits are
computed.

A plain loop (not transformers' Trainer) because each step is also a unit of progress, of
cancellation and of checkpointing: every ``checkpoint_every`` steps, and when asked to stop, the
adapter, optimizer, scheduler, step, losses and random state are written to
``out_dir/checkpoints/step-N`` (atomically, the older ones removed), and a run with
``resume=True`` goes on from the newest one, provided it was trained on the same data and
settings. Device: CUDA when present (bf16 where supported, else fp16 with a gradient scaler),
otherwise CPU in fp32. The result is the adapter (``save_pretrained``) and ``card.json``: the
data, the settings, the base model and revision, the losses, the versions.

``python -m nsmcore.lora --data train.jsonl --base MODEL --out FOLDER`` trains from a file written
by ``manage.py export_training --format prompt`` on a machine without the web app (``--merge-to``
also writes base + adapter merged, for a server that takes no adapters).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nsmcore.parsers.prompt import PROMPT_VERSION, slot_prefix
from nsmcore.parsers.transformers_lm import quiet_peft
from nsmcore.render import RENDERER_VERSION
from nsmcore.training_data import TrainingDataError, manifest_path, read_prompt_rows

CARD = "card.json"
CHECKPOINTS = "checkpoints"
STATE = "trainer_state.pt"
BASE_SETTING = "the base model (manage.py train_parser --base, the Train form's base model field)"


class LoraError(RuntimeError):
    """Training that cannot start or go on: the message names the setting or the problem."""


#: each numeric setting's bounds, inclusive (None: no bound), declared once: LoraSettings checks
#: them, and the train job's parameters (training.params), so its form, API and command, are built
#: from them and from LoraSettings' defaults (issue 24: declared twice, the two disagreed on the
#: learning rate and the dropout). The upper bounds keep out numbers no run can take (a seed is
#: below 2**32; a 20-digit number of epochs could not even be stored) and sit far above what a
#: LoRA run uses.
BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "rank": (1, 1024), "alpha": (1, 4096), "dropout": (0, 0.99), "epochs": (1, 1000),
    "learning_rate": (1e-7, 0.5), "batch_size": (1, 4096), "grad_accum": (1, 4096),
    "max_length": (64, 131_072), "seed": (0, 2**32 - 1), "warmup_ratio": (0, 0.99),
    "checkpoint_every": (1, 1_000_000),
}  # fmt: skip


def _expected(whole: bool, low: float | None, high: float | None) -> str:
    if whole:
        return f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    return f"a number >= {low:g}" if high is None else f"a number from {low:g} to {high:g}"


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    #: module names to adapt; empty: peft's default for the architecture (q_proj, v_proj for
    #: Llama-like models), or every linear layer for one peft does not know
    target_modules: tuple[str, ...] = ()
    epochs: int = 3
    learning_rate: float = 2e-4
    #: examples per forward pass; an optimizer step reads batch_size * grad_accum examples
    batch_size: int = 4
    grad_accum: int = 1
    max_length: int = 1024
    seed: int = 0
    warmup_ratio: float = 0.03
    checkpoint_every: int = 50
    device: str = "auto"
    #: recompute activations in the backward pass: less memory for long prompts, ~30% slower
    gradient_checkpointing: bool = False

    def __post_init__(self) -> None:
        for name, (low, high) in BOUNDS.items():
            value = getattr(self, name)
            whole = isinstance(getattr(LoraSettings, name), int)  # the default's type is the setting's
            number = isinstance(value, int) if whole else isinstance(value, int | float)
            if (
                isinstance(value, bool)
                or not number
                or (low is not None and value < low)
                or (high is not None and value > high)
            ):
                raise LoraError(f"LoRA setting {name}: expected {_expected(whole, low, high)}, got {value!r}")

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["target_modules"] = list(self.target_modules)
        return out


@dataclass
class TrainResult:
    out_dir: Path
    step: int
    total_steps: int
    losses: list[tuple[int, float]]
    stopped: bool
    card: dict[str, Any] | None = None  # None while unfinished


Progress = Callable[[int, int, list[tuple[int, float]]], None]


def examples_hash(rows: Sequence[Mapping[str, Any]]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row["prompt"], row["completion"]], ensure_ascii=False).encode() + b"\n")
    return digest.hexdigest()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def load_base(base_model: str, device: str) -> tuple[Any, Any, str, Any]:
    """Tokenizer, model (on the device, in its training dtype), the device and the dtype; a
    LoraError naming the setting when the base model is missing or does not load."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nsmcore.parsers.transformers_lm import pick_device

    if not base_model:
        raise LoraError(f"no base model given: set {BASE_SETTING} to a model name or a local folder")
    if base_model.startswith(("/", "./", "../", "~")) and not Path(base_model).expanduser().is_dir():
        raise LoraError(f"base model: no model folder at {base_model}; set {BASE_SETTING}")
    device = pick_device(device)
    if device.startswith("cuda"):
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    else:
        dtype = torch.float32
    try:
        tokenizer = AutoTokenizer.from_pretrained(base_model)
        model = AutoModelForCausalLM.from_pretrained(base_model, dtype=dtype)
    except (OSError, ValueError, ImportError) as error:
        raise LoraError(f"cannot load the base model {base_model!r}: {_first_line(error)}") from None
    try:
        model.to(device)
    except (RuntimeError, AssertionError) as error:
        raise LoraError(f"cannot move the base model to device {device!r}: {_first_line(error)}") from None
    return tokenizer, model, device, dtype


def tokenize_rows(
    tokenizer: Any, rows: Sequence[Mapping[str, Any]], max_length: int
) -> list[tuple[list[int], int]]:
    """(token ids, completion length) per row, tokenised exactly as the decoder does: the prefix
    with special tokens, the rest of the prompt and the completion without. A row longer than
    ``max_length`` loses the start of its text, never the prefix or the completion."""
    prefix = slot_prefix()
    prefix_ids: list[int] = tokenizer(prefix, add_special_tokens=True)["input_ids"]
    out = []
    for row in rows:
        prompt, completion = str(row["prompt"]), str(row["completion"])
        comp = tokenizer(completion, add_special_tokens=False)["input_ids"]
        if prompt.startswith(prefix):
            head, rest = prefix_ids, tokenizer(prompt[len(prefix) :], add_special_tokens=False)["input_ids"]
        else:
            head, rest = [], tokenizer(prompt, add_special_tokens=True)["input_ids"]
        if not comp:
            raise LoraError(f"an empty completion (item {row.get('id', '?')}, slot {row.get('slot', '?')})")
        room = max_length - len(head) - len(comp)
        if room < 8:
            raise LoraError(
                f"max_length {max_length} leaves no room for the text: the instruction and the value "
                f"alone take {len(head) + len(comp)} tokens"
            )
        out.append((head + rest[-room:] + comp, len(comp)))
    return out


def _target_modules(model: Any, settings: LoraSettings) -> list[str] | str | None:
    from peft.utils.constants import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING as DEFAULTS

    if settings.target_modules:
        return list(settings.target_modules)
    return None if getattr(model.config, "model_type", "") in DEFAULTS else "all-linear"


def _checkpoints(out_dir: Path) -> list[Path]:
    folder = out_dir / CHECKPOINTS
    if not folder.is_dir():
        return []
    done = [p for p in folder.glob("step-*") if (p / STATE).is_file() and not p.name.endswith(".tmp")]
    return sorted(done, key=lambda p: int(p.name.split("-")[1]))


def last_checkpoint(out_dir: str | Path) -> Path | None:
    found = _checkpoints(Path(out_dir))
    return found[-1] if found else None


def adapter_files_digest(folder: str | Path) -> str:
    from nsmcore.parsers.transformers_lm import adapter_digest

    return adapter_digest(folder)


def train_lora(
    base_model: str,
    rows: Sequence[Mapping[str, Any]],
    settings: LoraSettings,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: bool = True,
    data: Mapping[str, Any] | None = None,
) -> TrainResult:
    """Train a LoRA adapter on prompt-format rows; see the module's docstring. ``progress`` is
    called after every optimizer step with (step, total steps, losses so far); ``should_stop``
    is asked after every step, and a True answer checkpoints and returns with ``stopped``.
    ``data`` (the training data's manifest) goes into the card."""
    try:
        import torch
        from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
        from safetensors.torch import load_file
    except ImportError as error:  # pragma: no cover - all are in requirements.txt
        raise LoraError(f"LoRA training needs torch, peft and safetensors: {error}") from None
    from nsmcore.parsers.transformers_lm import model_revision

    if not rows:
        raise LoraError("no training examples")
    out = Path(out_dir)
    started = time.perf_counter()
    fingerprint = hashlib.sha256(
        json.dumps([base_model, examples_hash(rows), settings.as_dict()], sort_keys=True).encode()
    ).hexdigest()
    card_file = out / CARD
    if resume and card_file.is_file():
        card = json.loads(card_file.read_text())
        if card.get("fingerprint") == fingerprint:  # trained already: nothing to do
            losses = [(int(s), float(x)) for s, x in card["losses"]]
            return TrainResult(out, card["steps"], card["steps"], losses, False, card)
    if not resume and out.exists() and any(out.iterdir()):
        raise LoraError(f"output folder {out} is not empty; choose another or resume")

    tokenizer, model, device, dtype = load_base(base_model, settings.device)
    revision = model_revision(model, base_model)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    examples = tokenize_rows(tokenizer, rows, settings.max_length)

    torch.manual_seed(settings.seed)
    targets = _target_modules(model, settings)
    config = LoraConfig(
        task_type="CAUSAL_LM", r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
        target_modules=targets,
    )  # fmt: skip
    try:
        with quiet_peft():
            model = get_peft_model(model, config)
    except ValueError as error:
        raise LoraError(f"LoRA setting target_modules: {_first_line(error)}") from None
    if settings.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    per_step = settings.batch_size * settings.grad_accum
    steps_per_epoch = math.ceil(len(examples) / per_step)
    total = steps_per_epoch * settings.epochs
    warmup = int(total * settings.warmup_ratio)
    optimizer = torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=0.0)

    def lr_factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    use_scaler = device.startswith("cuda") and dtype == torch.float16
    scaler = torch.amp.GradScaler("cuda") if use_scaler else None

    step, losses = 0, []
    checkpoint = last_checkpoint(out) if resume else None
    if checkpoint is not None:
        state = torch.load(checkpoint / STATE, map_location="cpu", weights_only=False)
        if state.get("fingerprint") != fingerprint:
            raise LoraError(
                f"the checkpoint {checkpoint} was trained on other data or settings; remove "
                f"{out / CHECKPOINTS} or choose another output folder"
            )
        set_peft_model_state_dict(
            model, load_file(str(checkpoint / "adapter_model.safetensors"), device=device)
        )
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        if scaler is not None and state.get("scaler"):
            scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["rng"])
        if device.startswith("cuda") and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"])
        step, losses = int(state["step"]), [(int(s), float(x)) for s, x in state["losses"]]

    def save_checkpoint() -> None:
        folder = out / CHECKPOINTS
        final = folder / f"step-{step:07d}"
        tmp = folder / f"step-{step:07d}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        model.save_pretrained(tmp)
        torch.save(
            {
                "fingerprint": fingerprint, "step": step, "losses": losses,
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "scaler": scaler.state_dict() if scaler is not None else None,
                "rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if device.startswith("cuda") else None,
            },
            tmp / STATE,
        )  # fmt: skip
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
        for older in _checkpoints(out):
            if older != final:
                shutil.rmtree(older, ignore_errors=True)

    def batch_loss(batch: list[tuple[list[int], int]]) -> tuple[Any, int]:
        """Summed negative log-likelihood of the completions, and their token count."""
        width = max(len(ids) for ids, _ in batch)
        keep = max(n for _, n in batch) + 1
        input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, (ids, _) in enumerate(batch):
            input_ids[r, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            mask[r, width - len(ids) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.autocast(device_type="cuda", dtype=dtype, enabled=device.startswith("cuda")):
            logits = model(
                input_ids=input_ids.to(device), attention_mask=mask.to(device),
                position_ids=positions.to(device), logits_to_keep=keep, use_cache=False,
            ).logits  # fmt: skip
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        total_nll = logprobs.new_zeros(())
        tokens = 0
        for r, (ids, n) in enumerate(batch):
            target = torch.tensor(ids[-n:], dtype=torch.long, device=logprobs.device).unsqueeze(1)
            total_nll = total_nll - logprobs[r, keep - 1 - n : keep - 1, :].gather(1, target).sum()
            tokens += n
        return total_nll, tokens

    def order_of(epoch: int) -> list[int]:
        generator = torch.Generator().manual_seed(settings.seed * 1000003 + epoch)
        return torch.randperm(len(examples), generator=generator).tolist()

    stopped = False
    while step < total:
        epoch, k = divmod(step, steps_per_epoch)
        chosen = [examples[i] for i in order_of(epoch)[k * per_step : (k + 1) * per_step]]
        micro = [chosen[i : i + settings.batch_size] for i in range(0, len(chosen), settings.batch_size)]
        n_tokens = sum(n for _, n in chosen)
        step_loss = 0.0
        for batch in micro:
            nll, _ = batch_loss(batch)
            loss = nll / n_tokens
            (scaler.scale(loss) if scaler is not None else loss).backward()
            step_loss += float(loss.detach())
        if scaler is not None:
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        step += 1
        losses.append((step, round(step_loss, 6)))
        if progress is not None:
            progress(step, total, losses)
        if step < total and step % settings.checkpoint_every == 0:
            save_checkpoint()
        if step < total and should_stop is not None and should_stop():
            save_checkpoint()
            stopped = True
            break
    if stopped:
        return TrainResult(out, step, total, losses, True)

    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    card = _card(
        base_model=base_model, revision=revision, settings=settings, targets=targets, model=model,
        rows=rows, data=data, step=step, losses=losses, device=device, dtype=dtype, fingerprint=fingerprint,
        seconds=time.perf_counter() - started, out=out,
    )  # fmt: skip
    tmp = out / f".{CARD}.tmp"
    tmp.write_text(json.dumps(card, indent=2) + "\n")
    tmp.replace(card_file)
    shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    return TrainResult(out, step, total, losses, False, card)


def _card(*, base_model, revision, settings, targets, model, rows, data, step, losses, device, dtype,
          fingerprint, seconds, out) -> dict[str, Any]:  # fmt: skip
    import peft
    import torch
    import transformers

    resolved = sorted(model.peft_config["default"].target_modules)
    return {
        "method": "lora",
        "base_model": base_model,
        "base_revision": revision,
        "adapter_digest": adapter_files_digest(out),
        "settings": settings.as_dict(),
        "target_modules": resolved if targets is None or isinstance(targets, str) else list(targets),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "data": {**dict(data or {}), "examples": len(rows), "examples_sha256": examples_hash(rows)},
        "steps": step,
        "first_loss": losses[0][1] if losses else None,
        "final_loss": losses[-1][1] if losses else None,
        "losses": [list(p) for p in losses],
        "device": device,
        "dtype": str(dtype).removeprefix("torch."),
        "seconds": round(seconds, 1),
        "fingerprint": fingerprint,
        "versions": {
            "prompt": PROMPT_VERSION,
            "renderer": RENDERER_VERSION,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "peft": peft.__version__,
        },
    }


def merge_adapter(base_model: str, adapter: str | Path, out_dir: str | Path) -> Path:
    """Base + adapter merged into one plain checkpoint (with the tokenizer), for servers or tools
    that take no adapters; the transformers backend takes it as a model."""
    from peft import PeftModel

    tokenizer, model, _, _ = load_base(base_model, "cpu")
    with quiet_peft():
        merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    out = Path(out_dir)
    merged.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Train from a prompt-format file: exit 2 with the reason on bad input."""
    parser = argparse.ArgumentParser(prog="python -m nsmcore.lora", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="prompt-format JSONL (manage.py export_training)")
    parser.add_argument("--base", required=True, help="base model: hub name or local folder")
    parser.add_argument("--out", required=True, help="folder for the adapter and its card")
    defaults = LoraSettings()
    for f in dataclasses.fields(LoraSettings):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "target_modules":
            parser.add_argument(flag, default="", help="comma-separated; empty: the architecture's default")
        elif f.type in ("bool", bool):
            parser.add_argument(flag, action="store_true")
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, type=kind, default=getattr(defaults, f.name))
    parser.add_argument("--no-resume", action="store_true", help="refuse a folder that holds a run")
    parser.add_argument(
        "--merge-to", default="", help="also write base + adapter merged into one checkpoint in this folder"
    )
    args = parser.parse_args(argv)
    try:
        values = {f.name: getattr(args, f.name) for f in dataclasses.fields(LoraSettings)}
        values["target_modules"] = tuple(m.strip() for m in args.target_modules.split(",") if m.strip())
        settings = LoraSettings(**values)
        rows = read_prompt_rows(args.data)
        manifest = manifest_path(args.data)
        data = json.loads(manifest.read_text()) if manifest.is_file() else {"file": str(args.data)}

        def show(step: int, total: int, losses: list[tuple[int, float]]) -> None:
            print(f"step {step}/{total} loss {losses[-1][1]:.4f}", file=sys.stderr)

        result = train_lora(
            args.base, rows, settings, args.out, progress=show, resume=not args.no_resume, data=data
        )
        if args.merge_to:
            merge_adapter(args.base, result.out_dir, args.merge_to)
    except (LoraError, TrainingDataError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"adapter in {result.out_dir}: {result.step} steps, final loss {result.losses[-1][1]:.4f}")
    if args.merge_to:
        print(f"merged checkpoint in {args.merge_to}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
