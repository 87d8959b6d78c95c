n=$(cat data/count 2>/dev/null || echo 0); n=$((n+1)); mkdir -p data; echo $n > data/count
if [ "$n" -lt 3 ]; then echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":false,\"summary\":\"try $n\"}"; else echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":true,\"summary\":\"try $n\"}"; fi
