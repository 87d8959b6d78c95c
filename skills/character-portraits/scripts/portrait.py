#!/usr/bin/env python3
"""Character portraits skill: draws a bust from a character's description in
the colours it names, as a PNG (standard library only), caches it per
character in data/, and answers in Loreloom's NDJSON tool protocol."""
import hashlib
import json
import math
import os
import random
import struct
import sys
import zlib

COLOURS = {
    "red": (178, 34, 34), "crimson": (150, 20, 40), "scarlet": (200, 40, 30), "green": (46, 110, 60),
    "blue": (40, 70, 150), "navy": (25, 35, 80), "black": (30, 28, 32), "white": (225, 222, 215),
    "grey": (120, 120, 125), "gray": (120, 120, 125), "silver": (180, 182, 190), "gold": (200, 160, 50),
    "golden": (205, 165, 60), "yellow": (210, 180, 60), "brown": (110, 70, 40), "auburn": (140, 60, 30),
    "copper": (184, 115, 51), "blond": (220, 190, 120), "blonde": (220, 190, 120), "purple": (100, 50, 120),
    "violet": (130, 80, 160), "teal": (30, 120, 120), "amber": (230, 160, 40), "ochre": (190, 120, 40),
    "oilskin": (200, 170, 60), "pale": (230, 215, 200), "dark": (60, 45, 40), "rust": (170, 70, 20),
}


def emit(**event):
    event["version"] = "0"
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


HAIR = {"hair", "braid", "braids", "beard", "curls", "locks", "mane"}


def colours_of(text):
    """The hair colour (a colour word right before "hair", "braid", ...) and
    the clothes' (the first other colour word), either None."""
    words = [w.strip(".,;:!?'\"()").lower() for w in text.split()]
    hair = None
    used = set()
    for i, w in enumerate(words):
        if w in HAIR and i > 0 and words[i - 1] in COLOURS:
            hair = COLOURS[words[i - 1]]
            used.add(i - 1)
            break
    cloth = next((COLOURS[w] for i, w in enumerate(words) if w in COLOURS and i not in used), None)
    return hair, cloth


def png(width, height, rows):
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def draw(description, size, style, seed):
    rng = random.Random(seed)
    hair, cloth = colours_of(description)
    cloth = cloth or tuple(rng.randrange(40, 200) for _ in range(3))
    hair = hair or tuple(max(0, c - 70) for c in cloth)
    skin = (224, 190, 160) if style == "painted" else (30, 30, 36)
    bg_top = tuple(min(255, c // 3 + 40) for c in cloth)
    bg_bottom = tuple(c // 5 + 10 for c in cloth)
    cx, head_y, head_r = size / 2, size * 0.42, size * 0.17
    rows = []
    for y in range(size):
        t = y / size
        row = []
        for x in range(size):
            col = tuple(int(a + (b - a) * t) for a, b in zip(bg_top, bg_bottom))
            # Shoulders: an ellipse below the head.
            dx, dy = (x - cx) / (size * 0.42), (y - size * 1.02) / (size * 0.42)
            if dx * dx + dy * dy < 1:
                shade = 0.75 + 0.25 * (1 - abs(dx))
                col = tuple(int(c * shade) for c in cloth)
            # Neck.
            if abs(x - cx) < head_r * 0.45 and head_y < y < head_y + head_r * 1.6:
                col = tuple(int(c * 0.85) for c in skin)
            # Head, lit from the upper left.
            hx, hy = (x - cx) / head_r, (y - head_y) / (head_r * 1.15)
            d = hx * hx + hy * hy
            if d < 1:
                light = 0.8 + 0.2 * max(0.0, -(hx + hy) / 1.4)
                col = tuple(min(255, int(c * light)) for c in skin)
                # Hair: the upper part of the head and a fringe.
                if hy < -0.35 + 0.15 * math.sin(hx * 5 + seed % 7):
                    col = hair
            row.extend(col)
        rows.append(row)
    # Brush texture: a few soft specks.
    for _ in range(size * 2):
        x, y = rng.randrange(size), rng.randrange(size)
        r = rows[y]
        for k in range(3):
            r[x * 3 + k] = max(0, min(255, r[x * 3 + k] + rng.randrange(-18, 18)))
    return png(size, size, rows)


def main():
    request = json.loads(sys.stdin.read() or "{}")
    data = request.get("input") or {}
    config = request.get("config") or {}
    character = str(data.get("character") or "").strip()
    description = str(data.get("description") or "").strip()
    if not character or not description:
        emit(type="error", errorCode="missing", errorMessage="give a character id and a description")
        emit(type="done", ok=False, summary="no character to draw")
        return
    size = int(config.get("resolution", 256))
    style = config.get("stylePreset", "painted")
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in character)[:64]
    os.makedirs("data/portraits", exist_ok=True)
    index_path = "data/index.json"
    try:
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError):
        index = {}
    key = hashlib.sha256(f"{description}|{size}|{style}".encode()).hexdigest()[:16]
    path = f"data/portraits/{safe}-{key}.png"
    cached = index.get(character) == path and os.path.isfile(path) and not data.get("regenerate")
    if not cached:
        seed = int(hashlib.sha256(character.encode()).hexdigest()[:8], 16)
        with open(path + ".part", "wb") as f:
            f.write(draw(description, size, style, seed))
        os.replace(path + ".part", path)
        index[character] = path
        with open(index_path + ".part", "w", encoding="utf-8") as f:
            json.dump(index, f)
        os.replace(index_path + ".part", index_path)
    emit(type="log", level="info", message=("cached portrait" if cached else "drew a portrait") + f" of {character}")
    emit(type="asset", assetId=f"portrait-{safe}", kind="image", mediaType="image/png", path=path,
         metadata={"character": character, "name": data.get("name"), "cached": cached})
    emit(type="state_patch", patch={"portraits": {character: path}})
    emit(type="done", ok=True, summary=f"portrait of {data.get('name') or character}")


if __name__ == "__main__":
    main()
