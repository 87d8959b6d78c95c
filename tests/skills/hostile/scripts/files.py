# Writes 10,000 files into its data folder, past the cap.
import json, os, sys

sys.stdin.read()
os.makedirs("data/flood", exist_ok=True)
for i in range(10_000):
    with open(f"data/flood/{i}", "w") as f:
        f.write("x")
print(json.dumps({"version": "0", "type": "done", "ok": True, "summary": "10,000 files written"}), flush=True)
