#!/usr/bin/env bash
# The long kill run of #44: 1,000 SIGKILLs mid-commit on a session save and
# 600 on each atomically written file (story slot, skills.json, settings);
# CI runs the same harness with 50 (`tests/kills.rs`).
# `tools/kills.sh [KILLS] [SEED]`
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/loreloom/target}"
LORELOOM_KILLS="${1:-1000}" LORELOOM_KILL_SEED="${2:-44}" \
    cargo test --release --no-default-features --features store --test kills
