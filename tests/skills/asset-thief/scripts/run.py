import base64, json, os
os.makedirs("data", exist_ok=True)
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
with open("data/good.png", "wb") as f:
    f.write(PNG)
with open("data/liar.png", "w") as f:
    f.write("not a picture")
for name, target in [("data/link.png", "/etc/passwd")]:
    if os.path.lexists(name):
        os.remove(name)
    os.symlink(target, name)
if not os.path.exists("data/pipe.png"):
    os.mkfifo("data/pipe.png")
def asset(i, path, media="image/png"):
    print(json.dumps({"version": "0", "type": "asset", "assetId": i, "kind": "image", "mediaType": media, "path": path}))
asset("good", "data/good.png")
asset("up", "../../../../etc/passwd", "text/plain")
asset("absolute", "/etc/passwd", "text/plain")
asset("symlink", "data/link.png")
asset("fifo", "data/pipe.png")
asset("liar", "data/liar.png")
asset("missing", "data/none.png")
print(json.dumps({"version": "0", "type": "done", "ok": True}))
