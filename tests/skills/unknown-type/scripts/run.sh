echo "{\"version\":\"0\",\"type\":\"shout\"}"
echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":true}"
