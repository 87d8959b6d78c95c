#!/usr/bin/env bash
# The browser build: loreloom-web for wasm32-unknown-unknown with Debian's rustc-web
# and std built from source, then wasm-bindgen, into web/dist/ with the page, the
# campaigns (text in bundle.json, art and music as files), and the engine's sounds. No wasm-opt: measured, -Oz
# cut the raw module 12% but its brotli size 0.02% (what a page downloads), took
# 6.4 min (npm binaryen 132), and Debian's binaryen 108 broke the externref table.
# Needs (run.sh installs them): apt rustc-web cargo-web rust-web-src lld-22 clang-22
# llvm-22, and wasm-bindgen-cli at the lockfile's version in
# ~/.cache/loreloom/tools (installed without --locked: its own lockfile names a
# webpki-roots the registry mirror here lacks).
# The narrator inside the page (#45) needs web/node_modules (npm ci --prefix web: wllama)
# and the merged model file (run.sh's need_page_model):
#   LORELOOM_PAGE_MODEL=FILE.gguf    the page's model, copied to models/ with its hash in
#                                    models/manifest.json (without it the page plays stories only)
#   LORELOOM_PAGE_EMBEDDER=DIR       all-MiniLM-L6-v2's three files (run.sh's need_embedder), for
#                                    lore and memory by meaning (without it: by their words)
#   LORELOOM_WEB_PROFILE=release   a faster build, three times the size (default: web)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${LORELOOM_WEB_PROFILE:-web}"
# A different compiler from the native build's: its own target dir.
export CARGO_TARGET_DIR="${LORELOOM_WEB_TARGET:-$HOME/.cache/loreloom/target-web}"
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
# SQLite (through sqlite-wasm-rs) is C, compiled for wasm by clang.
export CC_wasm32_unknown_unknown=clang-22 AR_wasm32_unknown_unknown=llvm-ar-22
/usr/bin/cargo build --locked --profile "$profile" --bin loreloom-web --target wasm32-unknown-unknown \
    -Zbuild-std=std,panic_abort --no-default-features --features web \
    --config 'target.wasm32-unknown-unknown.linker="/usr/bin/wasm-ld-22"'
version=$(awk '/^name = "wasm-bindgen"$/{getline; print $3}' Cargo.lock | tr -d '"')
bindgen="$HOME/.cache/loreloom/tools/bin/wasm-bindgen"
"$bindgen" --version 2>/dev/null | grep -q " $version" || {
    echo "loreloom: wasm-bindgen $version is needed: cargo install wasm-bindgen-cli --version $version --root ~/.cache/loreloom/tools" >&2
    exit 1
}
dist=web/dist
rm -rf "$dist" && mkdir -p "$dist/assets"
"$bindgen" --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$dist" \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/$profile/loreloom-web.wasm"
wasm="$dist/loreloom-web_bg.wasm"
cp web/index.html web/audio-unlock.js web/storage.js web/model.js "$dist/"
# llama.cpp in WebAssembly (wllama's ES module and its one wasm, with threads and SIMD).
wllama=web/node_modules/@wllama/wllama/esm
[ -f "$wllama/index.js" ] || { echo "loreloom: web/node_modules lacks @wllama/wllama: npm ci --prefix web" >&2; exit 1; }
mkdir -p "$dist/wllama"
cp "$wllama/index.js" "$dist/wllama/wllama.js"
cp "$wllama/wasm/wllama.wasm" "$dist/wllama/wllama.wasm"
# The page's models, each listed in models/manifest.json with its size and SHA-256
# (web/model.js checks them before it keeps them).
listed() { # NAME FILE: a manifest entry for dist/models/NAME
    printf '"file": "models/%s", "bytes": %s, "sha256": "%s"' "$1" "$(stat -c %s "$2")" "$(sha256sum "$2" | cut -d' ' -f1)"
}
entries=()
model="${LORELOOM_PAGE_MODEL:-}"
if [ -n "$model" ] && [ -f "$model" ]; then
    mkdir -p "$dist/models"
    cp "$model" "$dist/models/loreloom-narrator.gguf"
    entries+=("\"narrator\": {$(listed loreloom-narrator.gguf "$model"), \"context\": 12288}")
else
    echo "loreloom: no LORELOOM_PAGE_MODEL: this page plays stories; its sessions need a model server (Narrator model…)" >&2
fi
embedder="${LORELOOM_PAGE_EMBEDDER:-}"
if [ -n "$embedder" ] && [ -f "$embedder/model.safetensors" ] && [ -f "$embedder/tokenizer.json" ] && [ -f "$embedder/config.json" ]; then
    mkdir -p "$dist/models/all-MiniLM-L6-v2"
    files=
    for part in config:config.json tokenizer:tokenizer.json weights:model.safetensors; do
        cp "$embedder/${part#*:}" "$dist/models/all-MiniLM-L6-v2/"
        files="$files${files:+, }\"${part%%:*}\": {$(listed "all-MiniLM-L6-v2/${part#*:}" "$embedder/${part#*:}")}"
    done
    entries+=("\"embedder\": {\"files\": {$files}}")
else
    echo "loreloom: no LORELOOM_PAGE_EMBEDDER: lore and memory in this page's sessions are recalled by their words" >&2
fi
if [ ${#entries[@]} -gt 0 ]; then
    mkdir -p "$dist/models"
    (IFS=,; echo "{${entries[*]}}") >"$dist/models/manifest.json"
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$dist/models/manifest.json"
fi
cp -r assets/sfx "$dist/assets/"
# The campaigns' text, the prompts and schemas as bundle.json (read before the game
# starts); their pictures and music beside it, fetched when shown or played.
node web/bundle.js "$dist"
find "$dist/assets" -name 'make_*' -delete
echo "web/dist: $(du -sh "$dist" | cut -f1); loreloom-web_bg.wasm $(stat -c %s "$wasm") bytes, gzip -9 $(gzip -9 -c "$wasm" | wc -c)" >&2
