# Allocates 4 GiB in one process; then 1.6 GiB spread over four processes
# of 400 MiB each (each under the per-process cap; the invocation's memory
# cgroup, where there is one, holds all four to 1 GiB together).
import json, os, sys

sys.stdin.read()


def touch(size):
    block = bytearray(size)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return block


try:
    touch(4 << 30)
    single = "allowed"
except MemoryError:
    single = "denied (MemoryError)"

children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            kept = touch(400 << 20)
            import time
            time.sleep(1)
            os._exit(0)
        except MemoryError:
            os._exit(3)
    children.append(pid)
ends = [os.waitpid(pid, 0)[1] for pid in children]
spread = "allowed" if all(e == 0 for e in ends) else f"denied (statuses {ends})"
fields = {"allocate_4gib": single, "spread_1600mib": spread}
print(json.dumps({"version": "0", "type": "log", "level": "info", "message": "memory", "fields": fields}), flush=True)
print(json.dumps({"version": "0", "type": "done", "ok": True}), flush=True)
