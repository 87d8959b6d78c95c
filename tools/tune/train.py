#!/usr/bin/env python3
"""Fine-tunes the default model (a GGUF, dequantised by transformers) with a LoRA on Loreloom's corpus.

Reads training/data/{train,heldout}.jsonl (made by `loreloom tune render`), trains
a LoRA on every attention and MLP projection with the loss on the answer tokens
only, prints the held-out loss before training and after each epoch, and saves
the adapter (PEFT safetensors, f16) for convert_lora_to_gguf.py. Fixed seeds;
runs on a CPU (about 220 tokens/s on two cores) or a CUDA GPU.

    python3 tools/tune/train.py --model ~/.local/share/loreloom/models/SmolLM2-135M-Instruct.Q4_1.gguf --out /tmp/narrator
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def load(path, stages):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r for r in rows if not stages or r["stage"] in stages]


def end_of_turn(tokenizer):
    """The token the chat template closes an assistant turn with.

    Not `tokenizer.eos_token`: transformers reports SmolLM2's as `<|im_start|>`
    (the GGUF, and llama.cpp's end-of-generation set, say `<|im_end|>`), and an
    adapter trained on it learns to end answers by opening a new turn. The
    template itself is the authority: render an answer and read what follows it.
    """
    marker = "XYZZY-ANSWER"
    probe = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hello"}, {"role": "assistant", "content": marker}], tokenize=False
    )
    tail = probe.split(marker, 1)[1].strip().split("\n")[0].strip()
    ids = tokenizer(tail, add_special_tokens=False)["input_ids"]
    if not tail or len(ids) != 1:
        sys.exit(f"train.py: the chat template closes an answer with {tail!r}, not one token; cannot learn the end of a turn")
    return tail


def encode(tokenizer, messages, eot):
    """Token ids and labels: -100 on the prompt, the answer and its end-of-turn token learned."""
    prompt = tokenizer.apply_chat_template(messages[:-1], add_generation_prompt=True, tokenize=False)
    answer = messages[-1]["content"] + eot
    p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    a = tokenizer(answer, add_special_tokens=False)["input_ids"]
    return p + a, [-100] * len(p) + a


def clip(example, max_len):
    """The last `max_len` tokens of an example: a long one loses its prompt's start, never its answer's end."""
    ids, labels = example
    return ids[-max_len:], labels[-max_len:]


def autocast(device, fast):
    """bf16 autocast where asked for on a GPU; otherwise f32 as the recipe has always run."""
    return torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=fast)


def batches(items, size, shuffle, rng):
    order = list(range(len(items)))
    if shuffle:
        rng.shuffle(order)
    for i in range(0, len(order), size):
        yield [items[j] for j in order[i : i + size]]


def collate(group, pad, device):
    width = max(len(ids) for ids, _ in group)
    ids = torch.full((len(group), width), pad, dtype=torch.long)
    labels = torch.full((len(group), width), -100, dtype=torch.long)
    mask = torch.zeros((len(group), width), dtype=torch.long)
    for row, (i, l) in enumerate(group):
        ids[row, : len(i)] = torch.tensor(i)
        labels[row, : len(l)] = torch.tensor(l)
        mask[row, : len(i)] = 1
    return ids.to(device), labels.to(device), mask.to(device)


@torch.no_grad()
def heldout_loss(model, items, pad, device, size, fast, stages):
    """Mean loss per answer token over the held-out examples, and the same for each stage."""
    model.eval()
    total, tokens = {}, {}
    for start in range(0, len(items), size):
        group = items[start : start + size]
        ids, labels, mask = collate(group, pad, device)
        with autocast(device, fast):
            out = model(input_ids=ids, attention_mask=mask)
        logits = out.logits[:, :-1].float()
        target = labels[:, 1:]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=-100, reduction="none"
        ).view(target.shape)
        # One transfer per batch: each row's summed loss and answer-token count.
        sums, counts = loss.sum(1).tolist(), (target != -100).sum(1).tolist()
        for stage, row_sum, row_count in zip(stages[start : start + len(group)], sums, counts):
            total[stage] = total.get(stage, 0.0) + row_sum
            tokens[stage] = tokens.get(stage, 0) + row_count
    model.train()
    per_stage = {k: total[k] / max(tokens[k], 1) for k in sorted(total)}
    return sum(total.values()) / max(sum(tokens.values()), 1), per_stage


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the base GGUF file")
    ap.add_argument("--data", default="training/data")
    ap.add_argument("--out", required=True, help="folder for the adapter and the base config")
    ap.add_argument("--stages", default="", help="comma-separated stages to train on (default: all)")
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=int, default=32)
    ap.add_argument("--dropout", type=float, default=0.05)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: torch's)")
    ap.add_argument(
        "--bf16", action="store_true",
        help="on a CUDA GPU: compute in bf16 (autocast; the weights and the adapter stay f32) with TF32 matmuls",
    )
    ap.add_argument("--limit", type=int, default=0, help="train on the first N examples only (a smoke test of the recipe)")
    args = ap.parse_args()

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    fast = args.bf16 and device == "cuda"
    if fast:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    stages = [s for s in args.stages.split(",") if s]

    folder, name = os.path.split(os.path.abspath(os.path.expanduser(args.model)))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.to(device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    eot = end_of_turn(tokenizer)
    print(f"answers end with {eot!r} (id {tokenizer.convert_tokens_to_ids(eot)}); transformers' eos is {tokenizer.eos_token!r}")
    rows = load(os.path.join(args.data, "train.jsonl"), stages)
    held_rows = load(os.path.join(args.data, "heldout.jsonl"), stages)
    if args.limit:
        rows, held_rows = rows[: args.limit], held_rows[: args.limit]
    train = [encode(tokenizer, r["messages"], eot) for r in rows]
    cut = sum(1 for ids, _ in train if len(ids) > args.max_len)
    train = [clip(e, args.max_len) for e in train]
    held = [clip(encode(tokenizer, r["messages"], eot), args.max_len) for r in held_rows]
    if cut:
        print(f"warning: {cut} train examples are longer than --max-len {args.max_len} and lose their prompt's start", flush=True)
    # Similar lengths together: less padding, the same batches every run.
    train.sort(key=lambda x: len(x[0]))
    tokens = sum(len(i) for i, _ in train)
    print(f"device {device}{' (bf16 autocast)' if fast else ''}; {len(train)} train examples ({tokens} tokens), {len(held)} held out", flush=True)

    config = LoraConfig(
        r=args.rank, lora_alpha=args.alpha, lora_dropout=args.dropout, target_modules=TARGETS, task_type="CAUSAL_LM"
    )
    model = get_peft_model(model, config)
    model.print_trainable_parameters()
    held_stages = [r["stage"] for r in held_rows]
    before, before_stages = heldout_loss(model, held, pad, device, args.batch, fast, held_stages)
    print(f"held-out loss before: {before:.4f} {fmt(before_stages)}", flush=True)
    losses = []

    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.0)
    steps = math.ceil(len(train) / args.batch) * math.ceil(args.epochs)
    total_steps = int(math.ceil(len(train) / args.batch) * args.epochs)
    warmup = max(1, total_steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(s, total_steps) / total_steps)),
    )
    rng = random.Random(args.seed)
    step, start, seen = 0, time.time(), 0
    model.train()
    for epoch in range(math.ceil(args.epochs)):
        # Batches of neighbours in length, in a shuffled order.
        groups = list(batches(train, args.batch, False, None))
        rng.shuffle(groups)
        running = []
        for group in groups:
            if step >= total_steps:
                break
            ids, labels, mask = collate(group, pad, device)
            with autocast(device, fast):
                loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            running.append(loss.item())
            seen += int(mask.sum().item())
            step += 1
            if step % 20 == 0:
                rate = seen / (time.time() - start)
                print(f"step {step}/{total_steps} loss {sum(running[-20:]) / len(running[-20:]):.4f} ({rate:.0f} tokens/s)", flush=True)
        h, h_stages = heldout_loss(model, held, pad, device, args.batch, fast, held_stages)
        train_loss = sum(running) / max(len(running), 1)
        print(f"epoch {epoch + 1}: train loss {train_loss:.4f}, held-out loss {h:.4f} {fmt(h_stages)}", flush=True)
        losses.append({"epoch": epoch + 1, "train_loss": train_loss, "heldout_loss": h, "heldout_by_stage": h_stages})
        log = {"args": vars(args), "heldout_loss_before": before, "heldout_before_by_stage": before_stages,
               "epochs": losses, "train_examples": len(train),
               "train_tokens": tokens, "device": device, "seconds": time.time() - start}
        # Every epoch is kept: the one that measures best is shipped.
        save(model, tokenizer, os.path.join(args.out, f"epoch-{epoch + 1}"), log)
    del steps

    print(f"done in {time.time() - start:.0f} s", flush=True)


def fmt(per_stage):
    return "(" + ", ".join(f"{k} {v:.3f}" for k, v in per_stage.items()) + ")"


def save(model, tokenizer, out, log):
    """The adapter in f16 (as shipped), the base model's config for the converter, the log."""
    os.makedirs(out, exist_ok=True)
    adapter = {k: v.detach().to("cpu", torch.float16) for k, v in model.state_dict().items() if "lora_" in k}
    model.save_pretrained(out, safe_serialization=True, state_dict=adapter)
    # convert_lora_to_gguf.py reads the base model's config (never its weights) from --base.
    base = os.path.join(out, "base")
    inner = model.base_model.model
    inner.config.save_pretrained(base)
    tokenizer.save_pretrained(base)
    with open(os.path.join(base, "config.json")) as f:
        config = json.load(f)
    config["architectures"] = [type(inner).__name__]
    config.pop("quantization_config", None)
    with open(os.path.join(base, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(out, "train_log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
