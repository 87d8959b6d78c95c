import sys
line = ("{\"version\":\"0\",\"type\":\"log\",\"level\":\"debug\",\"message\":\"" + "x" * 1000 + "\"}\n").encode()
out = sys.stdout.buffer
for _ in range(1_000_000):
    out.write(line)
