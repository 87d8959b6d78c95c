#!/usr/bin/env bash
# Regenerates the campaign's music loops with sox (Debian: sox libsox-fmt-all).
# Ambient loops are slow chords of sine partials under filtered noise (wind and
# water); the tension loop adds a slow low pulse and a detuned drone.
# Deterministic, original and small (mono Vorbis, 22.05 kHz).
set -euo pipefail
cd "$(dirname "$0")"

pad() { # seconds tremolo-hz notes... (WAV on stdout)
    local secs=$1 trem=$2; shift 2
    local parts=()
    for n in "$@"; do parts+=(sine "$n"); done
    sox -q -n -r 22050 -c 1 -t wav - synth "$secs" "${parts[@]}" \
        remix - tremolo "$trem" 35 reverb 70 50 90 gain -n -16
}

wind() { # seconds lowpass-hz
    sox -q -R -n -r 22050 -c 1 -t wav - synth "$1" brownnoise lowpass "$2" \
        tremolo 0.13 60 gain -n -24
}

mixdown() { # out seconds inputs...
    local out=$1 secs=$2; shift 2
    sox -q -R -m "$@" "$out" fade q 2 "$secs" 2 gain -n -3
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Fog over the Reach at dusk: a wide, open minor chord and wind in the reeds.
pad 20 0.18 %-19 %-12 %-9 %-5 %2 > "$tmp/a.wav"
wind 20 500 > "$tmp/b.wav"
mixdown ambient/reach_at_dusk.ogg 20 "$tmp/a.wav" "$tmp/b.wav"

# Lowmarsh: eel smoke and old names; a lower, warmer drone that breathes.
pad 18 0.1 %-24 %-17 %-12 %-8 %-5 > "$tmp/c.wav"
wind 18 300 > "$tmp/d.wav"
mixdown ambient/lowmarsh_reeds.ogg 18 "$tmp/c.wav" "$tmp/d.wav"

# The lanterns turn green: a detuned cluster that beats against itself over a slow pulse.
pad 16 0.9 %-13 %-12.8 %-6 %-1 %0.2 > "$tmp/e.wav"
sox -q -n -r 22050 -c 1 -t wav - synth 16 sine 55 tremolo 0.75 95 gain -n -20 > "$tmp/f.wav"
mixdown tension/green_flame.ogg 16 "$tmp/e.wav" "$tmp/f.wav"
