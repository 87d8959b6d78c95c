# Leaves a daemon behind: fork, setsid, fork again, and the grandchild
# sleeps for a minute after writing its pid. The sandbox must kill it when
# the run ends.
import json, os, sys, time

sys.stdin.read()
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        with open("data/daemon.pid", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
    os._exit(0)
os.waitpid(first, 0)
for _ in range(100):
    if os.path.exists("data/daemon.pid"):
        break
    time.sleep(0.01)
print(json.dumps({"version": "0", "type": "done", "ok": True, "summary": "a daemon is left"}), flush=True)
