import sys
sys.stdout.buffer.write(b"{\"version\":\"0\",\"type\":\"log\",\"level\":\"info\",\"message\":\"" + b"y" * (100 << 20))
sys.stdout.buffer.write(b"\"}\n")
