# A fork bomb of 500 children that leave their group and linger: the
# process limit (rlimit as an ordinary user, the pids cgroup as root) stops
# it, and the supervisor kills every child when the run ends.
import json, os, sys, time
made, failed, pids = 0, 0, []
for _ in range(500):
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        continue
    if pid == 0:
        # Leave the process group, as a daemon would, and linger.
        os.setsid()
        time.sleep(60)
        os._exit(0)
    made += 1
    pids.append(pid)
os.makedirs("data", exist_ok=True)
with open("data/pids.txt", "w") as f:
    f.write("\n".join(map(str, pids)))
print(json.dumps({"version": "0", "type": "log", "level": "info", "message": "forked", "fields": {"made": made, "failed": failed}}))
print(json.dumps({"version": "0", "type": "done", "ok": True}))
sys.stdout.flush()
