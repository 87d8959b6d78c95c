# Allocates 4 GiB and touches every page.
import json, sys

sys.stdin.read()
try:
    block = bytearray(4 << 30)
    for i in range(0, len(block), 4096):
        block[i] = 1
    said = "allowed"
except MemoryError:
    said = "denied (MemoryError)"
print(json.dumps({"version": "0", "type": "log", "level": "info", "message": "memory", "fields": {"allocate_4gib": said}}), flush=True)
print(json.dumps({"version": "0", "type": "done", "ok": True}), flush=True)
