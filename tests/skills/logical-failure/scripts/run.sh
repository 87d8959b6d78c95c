echo "{\"version\":\"0\",\"type\":\"error\",\"errorCode\":\"no_luck\",\"errorMessage\":\"the well is dry\"}"
echo "{\"version\":\"0\",\"type\":\"done\",\"ok\":false}"
