#!/usr/bin/env bash
# Loreloom's two entry points on a fresh Debian/Ubuntu machine:
#   ./run.sh play [PATH]                     play a story in the window (default: the bundled one)
#   ./run.sh test                            run every check and test CI runs
# Both install what they need (Debian packages via apt, Rust crates via cargo)
# or stop with a message saying exactly what is missing.
set -euo pipefail
cd "$(dirname "$0")"

# Build dependencies: a C toolchain; for every feature also Bevy's audio/input
# (ALSA, udev) and llama.cpp (cmake, clang for bindgen).
PLAY_PACKAGES=(build-essential pkg-config libasound2-dev libudev-dev)
# The window test renders real frames under Xvfb with Mesa's software Vulkan (lavapipe).
TEST_PACKAGES=(build-essential pkg-config libasound2-dev libudev-dev cmake libclang-dev xvfb xauth mesa-vulkan-drivers libvulkan1)
RUST_MIN=1.95

# Cargo's output lives outside the checkout so repeat runs (and CI) are incremental.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/loreloom/target}"

die() { printf 'loreloom: %s\n' "$*" >&2; exit 1; }

need_apt() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || die "missing system packages: ${missing[*]} (this script installs them with apt-get on Debian/Ubuntu; install them with your package manager)"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "missing system packages: ${missing[*]}; run as root or install sudo, or: apt-get install ${missing[*]}"
        sudo=(sudo)
    fi
    echo "loreloom: installing ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}

need_rust() {
    command -v cargo >/dev/null || die "Rust is missing: install it with rustup (https://rustup.rs), version $RUST_MIN or newer, then run this again"
    local have
    have=$(rustc --version | awk '{print $2}')
    [ "$(printf '%s\n%s\n' "$RUST_MIN" "$have" | sort -V | head -n1)" = "$RUST_MIN" ] \
        || die "Rust $have is too old: Loreloom needs $RUST_MIN or newer (rustup update)"
}

need_lint_tools() {
    for component in rustfmt clippy; do
        cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 && continue
        command -v rustup >/dev/null || die "cargo ${component/rustfmt/fmt} is missing and rustup is not installed to add it: install the $component component of Rust $RUST_MIN+"
        rustup component add "$component"
    done
}

case "${1:-}" in
play)
    shift
    need_apt "${PLAY_PACKAGES[@]}"
    need_rust
    # The window without the model backends (they are not needed to play authored stories yet).
    cargo build --release --locked --no-default-features --features gui --bin loreloom
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
        echo "loreloom: no display found; playing in the terminal instead" >&2
        exec "$CARGO_TARGET_DIR/release/loreloom" play --headless "$@"
    fi
    exec "$CARGO_TARGET_DIR/release/loreloom" play "$@"
    ;;
test)
    need_apt "${TEST_PACKAGES[@]}"
    need_rust
    need_lint_tools
    set -x
    cargo fmt --all -- --check
    # The engine core without GUI, llama.cpp or candle keeps the boundary honest.
    cargo clippy --locked --all-targets --no-default-features -- -D warnings
    cargo test --locked --no-default-features --all-targets
    # Everything, as players get it.
    cargo clippy --locked --all-targets -- -D warnings
    cargo test --locked --all-targets
    ;;
*)
    echo "usage: ./run.sh play [PATH] [loreloom play options] | ./run.sh test" >&2
    exit 2
    ;;
esac
