echo '{"version":"0","type":"done","ok":true}'
