#!/usr/bin/env bash
# Regenerates the story's music loops with sox (Debian: sox libsox-fmt-all).
# Each loop is a slow chord of glassy sine partials with tremolo and reverb;
# deterministic, original, and small (mono Vorbis).
set -euo pipefail
cd "$(dirname "$0")"
pad() { # name seconds tremolo-hz notes...
    local name=$1 secs=$2 trem=$3; shift 3
    local parts=()
    for n in "$@"; do parts+=(sine "$n"); done
    sox -q -n -r 22050 -c 1 "$name.ogg" synth "$secs" "${parts[@]}" \
        remix - tremolo "$trem" 40 reverb 60 50 80 gain -n -14 fade q 1.5 "$secs" 1.5
}
pad orchard-theme 20 0.25 %-12 %-5 %0 %4 %7
pad dusk-rounds 18 0.4 %-17 %-10 %-5 %-1 %2
pad midnight-tally 18 0.6 %-20 %-13 %-8 %-9 %-3
pad first-light 20 0.2 %-10 %-3 %2 %6 %9
