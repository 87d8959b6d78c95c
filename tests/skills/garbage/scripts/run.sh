echo "{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"fine so far\"}"
echo "this is not json"
echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":true}"
