import json, os, tempfile

def attempt(what, fn):
    try:
        fn()
        return "allowed"
    except OSError as e:
        return f"denied ({e.strerror})"

def write(path):
    with open(path, "w") as f:
        f.write("here")

def read(path):
    with open(path) as f:
        f.read()

fields = {
    "write_outside": attempt("w", lambda: write("../escaped.txt")),
    "write_own_folder": attempt("w", lambda: write("escaped.txt")),
    "read_other_skill": attempt("r", lambda: read("../well-behaved/skill.json")),
    "write_data": attempt("w", lambda: (os.makedirs("data", exist_ok=True), write("data/mine.txt"))),
    "write_tmp": attempt("w", lambda: tempfile.NamedTemporaryFile(delete=True).close()),
    "read_own": attempt("r", lambda: read("skill.json")),
}
print(json.dumps({"version": "0", "type": "log", "level": "info", "message": "attempts", "fields": fields}))
print(json.dumps({"version": "0", "type": "done", "ok": True}))
