#!/usr/bin/env bash
# The browser build (issue #26, in progress): wasm32-unknown-unknown with Debian's
# rustc-web and std built from source, then wasm-bindgen, into web/dist/.
# Needs: apt rustc-web cargo-web rust-web-src lld-22 clang-22 llvm-22 and
# wasm-bindgen-cli at the lockfile's version in ~/.cache/loreloom/tools (not --locked: its
# own lockfile names a webpki-roots the registry mirror here lacks).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${LORELOOM_WEB_TARGET:-$HOME/.cache/loreloom/target-web}"
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
export CC_wasm32_unknown_unknown=clang-22 AR_wasm32_unknown_unknown=llvm-ar-22
/usr/bin/cargo build --release --locked --bin loreloom-web --target wasm32-unknown-unknown \
    -Zbuild-std=std,panic_abort --no-default-features --features web \
    --config 'target.wasm32-unknown-unknown.linker="/usr/bin/wasm-ld-22"'
version=$(awk '/^name = "wasm-bindgen"$/{getline; print $3}' Cargo.lock | tr -d '"')
bindgen="$HOME/.cache/loreloom/tools/bin/wasm-bindgen"
"$bindgen" --version | grep -q " $version" || {
    echo "wasm-bindgen $version is needed: cargo install wasm-bindgen-cli --version $version --root ~/.cache/loreloom/tools" >&2
    exit 1
}
rm -rf web/dist && mkdir -p web/dist/assets
"$bindgen" --target web --no-typescript --out-dir web/dist \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/loreloom-web.wasm"
cp web/index.html web/audio-unlock.js web/dist/
cp -r assets/. web/dist/assets/
echo "web/dist: $(du -sh web/dist | cut -f1)"
