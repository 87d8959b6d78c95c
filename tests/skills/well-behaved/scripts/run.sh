cat >/dev/null
echo "{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"hello\"}"
echo "{\"version\":\"0\",\"type\":\"state_patch\",\"patch\":{\"seen\":{\"count\":1}}}"
echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":true,\"summary\":\"fine\"}"
