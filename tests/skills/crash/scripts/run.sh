echo "{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"about to fall\"}"
echo "segfault, as it were" >&2
exit 3
