sleep 1000 &
echo "{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"hanging\",\"fields\":{\"grandchild\":$!}}"
sleep 1000
