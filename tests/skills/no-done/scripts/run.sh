echo "{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"forgot\"}"
