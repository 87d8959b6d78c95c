#!/usr/bin/env bash
# Runs the fuzz targets (#44) with libFuzzer: `tools/fuzz.sh [SECONDS] [TARGET...]`.
#
# Needs a nightly toolchain and cargo-fuzz (`rustup toolchain install nightly`,
# `cargo install cargo-fuzz`). The targets are built once, then each runs
# SECONDS (default 1800) from its seeds (fuzz/seeds/<target>/, real files,
# never rewritten) and its corpus, with every input held to 1 s and 512 MiB, and its
# corpus is merged down to the inputs that add coverage, so what is committed
# stays small. Crashes land in fuzz/artifacts/<target>/; a fixed one is copied
# to fuzz/regressions/<target>/, which `tests/fuzz_corpus.rs` replays in CI.
# A line per target (executions, edges, crashes) goes to fuzz/last-run.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-1800}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/loreloom/fuzz-target}"
# No sanitizer: the game's own code has no `unsafe` (the lint denies it), and
# without ASan the same minutes run about twice the executions.
(cd fuzz && cargo +nightly fuzz build -s none -O --debug-assertions)
bin="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release"
prune() {
    find "$1" -type f -size +4k -delete
    find "$1" -type f -printf '%s %p\n' | sort -rn | tail -n +401 | cut -d' ' -f2- | xargs -r rm -f
}
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    log="fuzz/artifacts/$t/run.log"
    set +e
    "$bin/$t" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=512 -max_len=262144 \
        -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="fuzz/artifacts/$t/" \
        "fuzz/corpus/$t" "fuzz/seeds/$t" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    crashes=$(find "fuzz/artifacts/$t" -type f ! -name run.log | wc -l)
    echo "$t: ${seconds} s, ${runs:-?} executions, ${edges:-?} edges, exit $rc, ${crashes} crash files" | tee -a fuzz/last-run.txt
    if [ "$rc" -ne 0 ]; then tail -40 "$log"; fi
    # Keep only the inputs that add coverage, and of those what the
    # repository can carry: the 400 largest of at most 4 KiB (the big
    # variants of the seeds are made again in seconds by the next run).
    merged="$(mktemp -d)"
    if "$bin/$t" -merge=1 -timeout=1 -rss_limit_mb=512 "$merged" "fuzz/corpus/$t" >/dev/null 2>&1; then
        rm -rf "fuzz/corpus/$t" && mv "$merged" "fuzz/corpus/$t"
    else
        rm -rf "$merged"
    fi
    prune "fuzz/corpus/$t"
done
