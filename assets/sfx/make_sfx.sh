#!/usr/bin/env bash
# Regenerates Loreloom's own sound effects with sox: a soft two-partial chime for choices.
set -euo pipefail
cd "$(dirname "$0")"
sox -q -n -r 22050 -c 1 choice.ogg synth 0.35 sine 880 sine 1320 remix - fade q 0.005 0.35 0.3 gain -n -18
