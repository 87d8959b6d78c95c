printf '{"version":"0","type":"log","level":"info","message":"env","fields":{"leak":"%s","allowed":"%s","token":"%s","home":"%s","pwd":"%s"}}\n' "${CARGO_MANIFEST_DIR:-}" "${ALLOWED:-}" "${LORELOOM_SKILL_ENV_PEEK_TOKEN:-}" "$HOME" "$(pwd)"
echo '{"version":"0","type":"done","ok":true}'
