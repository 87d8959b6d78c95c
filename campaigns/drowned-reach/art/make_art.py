#!/usr/bin/env python3
"""Art for *Lanterns on the Drowned Reach*.

Draws the cover, the location plates and the NPC portraits in the campaign's
palette: fog greys, marsh greens, lamp yellow and the cold bottle-green of the
lanterns. Pure standard library (zlib + struct write the PNGs); deterministic,
so re-running it reproduces the same bytes.

    python3 make_art.py        # writes the PNGs under this folder
"""
import math
import os
import random
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Palette
NIGHT = "#0d1417"
FOGDARK = "#26343a"
FOG = "#6f8288"
FOGLIGHT = "#b9c4c2"
MARSH = "#2f3d2a"
REED = "#162014"
WATER = "#14262b"
LAMP = "#e8b85a"
GREEN = "#5cf29a"
DEEPGREEN = "#1d6b4a"
BONE = "#ece3cf"
RUST = "#7a3b22"
INK = "#070b0c"


def rgb(c):
    if isinstance(c, tuple):
        return c
    c = c.lstrip("#")
    return tuple(int(c[i:i + 2], 16) for i in (0, 2, 4))


def mix(a, b, t):
    a, b = rgb(a), rgb(b)
    return tuple(a[i] + (b[i] - a[i]) * t for i in range(3))


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = [0.0] * (w * h * 3)

    # -- primitives ---------------------------------------------------------
    def blend(self, x, y, col, a):
        if a <= 0 or x < 0 or y < 0 or x >= self.w or y >= self.h:
            return
        if a > 1:
            a = 1.0
        i = (y * self.w + x) * 3
        px = self.px
        px[i] += (col[0] - px[i]) * a
        px[i + 1] += (col[1] - px[i + 1]) * a
        px[i + 2] += (col[2] - px[i + 2]) * a

    def add(self, x, y, col, a):
        """Additive light (clamped on output)."""
        if a <= 0 or x < 0 or y < 0 or x >= self.w or y >= self.h:
            return
        i = (y * self.w + x) * 3
        self.px[i] += col[0] * a
        self.px[i + 1] += col[1] * a
        self.px[i + 2] += col[2] * a

    def vgrad(self, stops):
        """Vertical gradient; stops = [(t 0..1, colour), ...]."""
        stops = [(t, rgb(c)) for t, c in stops]
        for y in range(self.h):
            t = y / (self.h - 1)
            for k in range(len(stops) - 1):
                if stops[k][0] <= t <= stops[k + 1][0]:
                    t0, c0 = stops[k]
                    t1, c1 = stops[k + 1]
                    u = (t - t0) / (t1 - t0) if t1 > t0 else 0
                    u = u * u * (3 - 2 * u)
                    col = tuple(c0[i] + (c1[i] - c0[i]) * u for i in range(3))
                    break
            else:
                col = stops[-1][1] if t > stops[-1][0] else stops[0][1]
            row = list(col) * self.w
            self.px[y * self.w * 3:(y + 1) * self.w * 3] = row

    def glow(self, cx, cy, r, col, strength=1.0, additive=True):
        col = rgb(col)
        x0, x1 = max(0, int(cx - r)), min(self.w - 1, int(cx + r) + 1)
        y0, y1 = max(0, int(cy - r)), min(self.h - 1, int(cy + r) + 1)
        for y in range(y0, y1 + 1):
            dy = (y - cy) / r
            for x in range(x0, x1 + 1):
                dx = (x - cx) / r
                d2 = dx * dx + dy * dy
                if d2 < 1:
                    f = (1 - d2) ** 2 * strength
                    if additive:
                        self.add(x, y, col, f * 0.55)
                    else:
                        self.blend(x, y, col, f)

    def disc(self, cx, cy, r, col, alpha=1.0):
        col = rgb(col)
        x0, x1 = int(cx - r - 1), int(cx + r + 1)
        y0, y1 = int(cy - r - 1), int(cy + r + 1)
        for y in range(max(0, y0), min(self.h, y1 + 1)):
            for x in range(max(0, x0), min(self.w, x1 + 1)):
                d = math.hypot(x - cx, y - cy)
                cov = r - d + 0.5
                if cov > 0:
                    self.blend(x, y, col, min(1.0, cov) * alpha)

    def ellipse(self, cx, cy, rx, ry, col, alpha=1.0):
        col = rgb(col)
        m = min(rx, ry)
        for y in range(max(0, int(cy - ry - 1)), min(self.h, int(cy + ry + 2))):
            for x in range(max(0, int(cx - rx - 1)), min(self.w, int(cx + rx + 2))):
                dn = math.hypot((x - cx) / rx, (y - cy) / ry)
                cov = (1 - dn) * m + 0.5
                if cov > 0:
                    self.blend(x, y, col, min(1.0, cov) * alpha)

    def rect(self, x0, y0, x1, y1, col, alpha=1.0):
        col = rgb(col)
        for y in range(max(0, int(y0)), min(self.h, int(y1))):
            for x in range(max(0, int(x0)), min(self.w, int(x1))):
                self.blend(x, y, col, alpha)

    def poly(self, pts, col, alpha=1.0):
        """Scanline polygon fill (even-odd), 2x vertical supersampling."""
        col = rgb(col)
        ys = [p[1] for p in pts]
        n = len(pts)
        for y in range(max(0, int(min(ys))), min(self.h, int(max(ys)) + 2)):
            cover = {}
            for sub in (0.25, 0.75):
                sy = y + sub
                xs = []
                for i in range(n):
                    (xa, ya), (xb, yb) = pts[i], pts[(i + 1) % n]
                    if (ya <= sy < yb) or (yb <= sy < ya):
                        xs.append(xa + (sy - ya) * (xb - xa) / (yb - ya))
                xs.sort()
                for k in range(0, len(xs) - 1, 2):
                    a, b = xs[k], xs[k + 1]
                    for x in range(max(0, int(a)), min(self.w, int(b) + 1)):
                        c = min(b, x + 1) - max(a, x)
                        if c > 0:
                            cover[x] = cover.get(x, 0) + c * 0.5
            for x, c in cover.items():
                self.blend(x, y, col, min(1.0, c) * alpha)

    def line(self, x0, y0, x1, y1, w0, w1, col, alpha=1.0):
        dx, dy = x1 - x0, y1 - y0
        L = math.hypot(dx, dy) or 1
        nx, ny = -dy / L, dx / L
        self.poly([(x0 + nx * w0 / 2, y0 + ny * w0 / 2), (x1 + nx * w1 / 2, y1 + ny * w1 / 2),
                   (x1 - nx * w1 / 2, y1 - ny * w1 / 2), (x0 - nx * w0 / 2, y0 - ny * w0 / 2)], col, alpha)

    def ground(self, f, col, alpha=1.0):
        """Fill below the curve y = f(x), anti-aliased on the edge."""
        col = rgb(col)
        for x in range(self.w):
            gy = f(x)
            start = max(0, int(gy))
            if start < self.h:
                self.blend(x, start, col, (1 - (gy - start)) * alpha)
            for y in range(start + 1, self.h):
                self.blend(x, y, col, alpha)

    # -- output -------------------------------------------------------------
    def save(self, name):
        w, h = self.w, self.h
        raw = bytearray()
        px = self.px
        for y in range(h):
            row = bytearray(w * 3)
            base = y * w * 3
            for i in range(w * 3):
                v = px[base + i]
                row[i] = 0 if v < 0 else 255 if v > 255 else int(v + 0.5)
            # PNG filter 1 (Sub): each byte minus the byte one pixel to the left
            filt = bytearray(w * 3)
            for i in range(w * 3):
                filt[i] = (row[i] - (row[i - 3] if i >= 3 else 0)) & 0xFF
            raw.append(1)
            raw += filt

        def chunk(tag, data):
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

        png = b"\x89PNG\r\n\x1a\n"
        png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        png += chunk(b"IEND", b"")
        path = os.path.join(HERE, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(png)
        print(f"{name:34s} {w}x{h} {len(png):7d} bytes")


# -- motifs -----------------------------------------------------------------

def fog_bands(cv, rng, n, y0, y1, col=FOGLIGHT, strength=0.12):
    """Soft horizontal fog banks."""
    col = rgb(col)
    for _ in range(n):
        cy = rng.uniform(y0, y1)
        thick = rng.uniform(6, 22)
        phase = rng.uniform(0, math.tau)
        for y in range(max(0, int(cy - thick * 2)), min(cv.h, int(cy + thick * 2))):
            d = (y - cy) / thick
            a = math.exp(-d * d) * strength
            for x in range(0, cv.w, 1):
                wob = 0.6 + 0.4 * math.sin(x / 57.0 + phase) * math.sin(x / 23.0 + phase * 1.7)
                cv.blend(x, y, col, a * wob)


def reeds(cv, rng, n, base, hmin, hmax, col=REED, x0=0, x1=None):
    x1 = cv.w if x1 is None else x1
    for _ in range(n):
        x = rng.uniform(x0, x1)
        h = rng.uniform(hmin, hmax)
        lean = rng.uniform(-0.25, 0.25)
        b = base + rng.uniform(-3, 3)
        cv.line(x, b, x + lean * h, b - h, 2.0, 0.6, col)
        if rng.random() < 0.35:  # a seed head
            cv.ellipse(x + lean * h, b - h - 4, 1.6, 5, col)


def water(cv, top, col_top=WATER, col_bottom=INK):
    top_c, bot_c = rgb(col_top), rgb(col_bottom)
    for y in range(int(top), cv.h):
        t = (y - top) / max(1, cv.h - top)
        c = mix(top_c, bot_c, t)
        for x in range(cv.w):
            cv.blend(x, y, c, 1.0)


def ripples(cv, rng, top, n, col=FOG):
    for _ in range(n):
        y = rng.uniform(top + 4, cv.h)
        x = rng.uniform(0, cv.w)
        w = rng.uniform(10, 50) * (0.5 + (y - top) / (cv.h - top))
        cv.line(x - w / 2, y, x + w / 2, y, 1, 1, col, rng.uniform(0.15, 0.35))


def reflection(cv, x, top, length, col, width=3):
    """A broken vertical streak of reflected light on water."""
    col = rgb(col)
    rng = random.Random(int(x * 13 + top))
    y = top + 2
    while y < min(cv.h, top + length):
        seg = rng.uniform(2, 6)
        a = 0.55 * (1 - (y - top) / length)
        w = width * rng.uniform(0.6, 1.8)
        cv.line(x - w, y, x + w, y, seg * 0.5, seg * 0.5, col, a)
        y += seg + rng.uniform(1, 4)


def lantern(cv, x, y, col, s=1.0, glow=1.0):
    col = rgb(col)
    cv.glow(x, y, 46 * s, col, 0.9 * glow)
    cv.line(x, y - 9 * s, x, y + 22 * s, 1.4 * s, 1.4 * s, INK)  # pole
    cv.rect(x - 3.5 * s, y - 6 * s, x + 3.5 * s, y + 5 * s, mix(col, BONE, 0.45))
    cv.rect(x - 4.5 * s, y - 7 * s, x + 4.5 * s, y - 5 * s, INK)


def ferry(cv, cx, deck_y, length, lamp_col, s=1.0, water_top=None):
    """The Patience: a flat hull, a winch-house, six lanterns."""
    half = length / 2
    cv.poly([(cx - half, deck_y), (cx + half, deck_y), (cx + half - 6 * s, deck_y + 9 * s),
             (cx - half + 6 * s, deck_y + 9 * s)], INK)
    cv.rect(cx - 14 * s, deck_y - 20 * s, cx + 14 * s, deck_y, INK)
    cv.poly([(cx - 17 * s, deck_y - 19 * s), (cx, deck_y - 28 * s), (cx + 17 * s, deck_y - 19 * s)], INK)
    cv.rect(cx - 4 * s, deck_y - 14 * s, cx + 4 * s, deck_y - 7 * s, mix(lamp_col, INK, 0.3))
    for k in range(3):
        for side in (-1, 1):
            lx = cx + side * (half - 6 * s - k * 13 * s)
            lantern(cv, lx, deck_y - 24 * s, lamp_col, 0.7 * s)
            if water_top is not None:
                reflection(cv, lx, deck_y + 10 * s, 70 * s, lamp_col, 2 * s)
    # the chain, dipping into the water fore and aft
    cv.line(cx - half - 60 * s, deck_y + 14 * s, cx - half, deck_y + 4 * s, 1.2, 1.2, INK, 0.8)
    cv.line(cx + half, deck_y + 4 * s, cx + half + 60 * s, deck_y + 14 * s, 1.2, 1.2, INK, 0.8)


def figure(cv, x, base, h, col=INK, hat=None):
    """A small standing silhouette."""
    cv.poly([(x - h * 0.16, base), (x - h * 0.11, base - h * 0.72), (x + h * 0.11, base - h * 0.72),
             (x + h * 0.16, base)], col)
    cv.disc(x, base - h * 0.82, h * 0.1, col)
    if hat == "souwester":
        cv.ellipse(x, base - h * 0.88, h * 0.17, h * 0.05, col)


# -- pictures ---------------------------------------------------------------

def cover():
    cv, rng = Canvas(640, 360), random.Random(1)
    cv.vgrad([(0, NIGHT), (0.45, FOGDARK), (0.62, FOG), (0.66, FOGDARK), (1, INK)])
    cv.glow(320, 210, 260, DEEPGREEN, 0.9)
    water(cv, 232, mix(WATER, DEEPGREEN, 0.35), INK)
    ripples(cv, rng, 232, 120, mix(FOG, GREEN, 0.3))
    reeds(cv, rng, 160, 236, 20, 60, mix(REED, FOGDARK, 0.5), 0, 180)
    reeds(cv, rng, 160, 236, 20, 60, mix(REED, FOGDARK, 0.5), 470, 640)
    ferry(cv, 320, 228, 200, GREEN, 1.2, water_top=232)
    figure(cv, 250, 228, 34, hat="souwester")
    figure(cv, 392, 228, 26)
    fog_bands(cv, rng, 7, 150, 260, FOGLIGHT, 0.16)
    reeds(cv, rng, 220, 362, 60, 150, INK, 0, 130)
    reeds(cv, rng, 220, 362, 60, 150, INK, 520, 640)
    cv.save("cover.png")


def reedmere_quay():
    cv, rng = Canvas(640, 360), random.Random(2)
    cv.vgrad([(0, NIGHT), (0.5, FOGDARK), (0.72, FOG), (1, INK)])
    # the town on its dyke: roofs, a spire, lit windows
    roofs = []
    x = 0
    while x < 640:
        w = rng.uniform(26, 54)
        h = rng.uniform(40, 90)
        roofs.append((x, w, h))
        x += w - 2
    for x, w, h in roofs:
        top = 220 - h
        cv.rect(x, top, x + w, 240, mix(INK, FOGDARK, 0.35))
        cv.poly([(x - 3, top + 1), (x + w / 2, top - w * 0.35), (x + w + 3, top + 1)], mix(INK, FOGDARK, 0.35))
        for _ in range(rng.randint(0, 3)):
            wx, wy = rng.uniform(x + 5, x + w - 10), rng.uniform(top + 8, 228)
            cv.rect(wx, wy, wx + 5, wy + 7, LAMP, 0.9)
            cv.glow(wx + 2, wy + 3, 12, LAMP, 0.35)
    cv.rect(140, 60, 156, 190, INK)                      # the chapel spire
    cv.poly([(136, 62), (148, 14), (160, 62)], INK)
    cv.glow(148, 170, 30, LAMP, 0.7)                     # the Mother Flame in the chapel door
    fog_bands(cv, rng, 5, 150, 240, FOGLIGHT, 0.14)
    water(cv, 262, WATER, INK)
    ripples(cv, rng, 262, 90)
    # the quay on piles
    cv.rect(0, 240, 420, 252, INK)
    for px in range(8, 420, 34):
        cv.rect(px, 250, px + 6, 300, INK)
    cv.rect(300, 200, 306, 242, INK)                     # lamp-post
    lantern(cv, 303, 196, LAMP, 0.9)
    for k in range(9):                                   # the crowd
        figure(cv, 40 + k * 26 + rng.uniform(-6, 6), 241, rng.uniform(26, 34))
    ferry(cv, 520, 252, 170, LAMP, 1.0, water_top=262)
    figure(cv, 470, 252, 30, hat="souwester")
    cv.save("locations/reedmere_quay.png")


def the_drowned_reach():
    cv, rng = Canvas(640, 360), random.Random(3)
    cv.vgrad([(0, FOGDARK), (0.5, FOG), (0.58, FOGLIGHT), (0.62, FOG), (1, WATER)])
    water(cv, 214, mix(FOG, WATER, 0.6), INK)
    ripples(cv, rng, 214, 160, FOGLIGHT)
    bank = mix(MARSH, FOGDARK, 0.55)
    cv.poly([(0, 206), (250, 213), (120, 360), (0, 360)], bank)            # the channel narrows into the fog
    cv.poly([(400, 213), (640, 204), (640, 360), (540, 360)], bank)
    reeds(cv, rng, 180, 212, 12, 40, mix(REED, FOG, 0.45), 0, 240)
    reeds(cv, rng, 180, 212, 12, 40, mix(REED, FOG, 0.45), 410, 640)
    ferry(cv, 330, 208, 90, GREEN, 0.55, water_top=214)
    cv.glow(330, 200, 120, GREEN, 0.35)
    fog_bands(cv, rng, 9, 120, 260, FOGLIGHT, 0.2)
    reeds(cv, rng, 260, 362, 50, 170, INK, 0, 160)
    reeds(cv, rng, 200, 362, 40, 140, INK, 540, 640)
    for k in range(5):                                    # chain-posts marching into the fog
        px = 170 + k * 38
        cv.rect(px, 206 - k * 1.5, px + 3, 230 - k * 2, INK, 0.8 - k * 0.12)
    cv.save("locations/the_drowned_reach.png")


def hollow_sluice():
    cv, rng = Canvas(640, 360), random.Random(4)
    cv.vgrad([(0, NIGHT), (0.55, FOGDARK), (0.7, FOG), (1, INK)])
    water(cv, 250, WATER, INK)
    ripples(cv, rng, 250, 120)
    # gatehouse on legs
    for lx in range(220, 430, 26):
        cv.rect(lx, 200, lx + 7, 300, INK)
    cv.rect(210, 120, 440, 205, INK)
    cv.poly([(198, 124), (325, 64), (452, 124)], INK)
    cv.rect(290, 150, 310, 172, LAMP, 0.85)
    cv.glow(300, 161, 40, LAMP, 0.6)
    # the great gates, straining, with a white spill of water
    for gx in (120, 470):
        cv.rect(gx, 170, gx + 70, 280, mix(INK, RUST, 0.2))
        for k in range(5):
            cv.rect(gx, 180 + k * 20, gx + 70, 183 + k * 20, INK)
    for _ in range(240):
        x = rng.uniform(120, 190) if rng.random() < 0.5 else rng.uniform(470, 540)
        y = rng.uniform(272, 320)
        cv.disc(x, y, rng.uniform(0.6, 1.8), FOGLIGHT, rng.uniform(0.3, 0.8))
    cv.glow(325, 292, 34, DEEPGREEN, 0.8)              # the bell, green in the pit
    cv.ellipse(325, 296, 14, 11, mix(DEEPGREEN, BONE, 0.2))
    fog_bands(cv, rng, 6, 90, 250, FOGLIGHT, 0.14)
    reeds(cv, rng, 180, 362, 40, 120, INK, 0, 110)
    reeds(cv, rng, 180, 362, 40, 120, INK, 560, 640)
    cv.save("locations/hollow_sluice.png")


def portrait(name, seed, top, bottom, rim, light, kind):
    """Head-and-shoulders silhouette, rim-lit, with one telling detail."""
    cv, rng = Canvas(256, 320), random.Random(seed)
    cv.vgrad([(0, top), (1, bottom)])
    cv.glow(70, 190, 190, rim, 0.8)
    fog_bands(cv, rng, 3, 60, 260, FOGLIGHT, 0.08)
    body = INK
    for dx, col in ((-4, mix(rim, BONE, 0.25)), (0, body)):
        if kind == "brinny":   # bent, hooded, small
            cv.ellipse(136 + dx, 340, 92, 95, col)
            cv.ellipse(150 + dx, 200, 46, 52, col)
            cv.poly([(104 + dx, 210), (150 + dx, 140), (196 + dx, 214)], col)
        else:
            wide = {"hesper": 118, "tamsin": 86, "crane": 100, "ned": 92}[kind]
            cv.ellipse(128 + dx, 330, wide, 80, col)
            cv.rect(114 + dx, 200, 142 + dx, 258, col)
            cv.ellipse(128 + dx, 176, 34, 42, col)
            if kind == "hesper":  # sou'wester
                cv.ellipse(128 + dx, 146, 56, 14, col)
                cv.ellipse(128 + dx, 136, 34, 24, col)
            elif kind == "tamsin":  # rag-tied hair
                cv.disc(150 + dx, 140, 22, col)
                cv.disc(112 + dx, 146, 18, col)
            elif kind == "crane":  # high collar and neat hair
                cv.poly([(92 + dx, 262), (114 + dx, 214), (124 + dx, 262)], col)
                cv.poly([(164 + dx, 262), (142 + dx, 214), (132 + dx, 262)], col)
                cv.ellipse(128 + dx, 142, 34, 14, col)
            elif kind == "ned":  # muffler
                cv.ellipse(128 + dx, 222, 40, 14, col)
    if kind == "hesper":
        lantern(cv, 214, 236, light, 1.3)
    elif kind == "tamsin":
        cv.rect(138, 124, 164, 132, RUST)                # the red rag
        lantern(cv, 40, 246, light, 1.2)
        cv.glow(180, 300, 20, GREEN, 0.5)                # green-stained fingers
    elif kind == "crane":
        cv.line(150, 290, 176, 300, 1.4, 1.4, LAMP, 0.9)  # watch chain
        cv.disc(178, 300, 4, LAMP)
        lantern(cv, 220, 200, light, 1.0, 0.7)
    elif kind == "brinny":
        cv.line(176, 214, 206, 206, 2.5, 2.0, BONE, 0.85)  # clay pipe
        cv.glow(208, 204, 10, LAMP, 0.9)
        for k in range(7):                               # the reed-book
            cv.line(60 + k * 3, 320, 78 + k * 4, 218, 1.6, 1.0, mix(MARSH, FOGLIGHT, 0.3))
        cv.disc(70, 262, 3, INK)
    elif kind == "ned":
        for gx in (116, 142):                            # spectacles catching the stove light
            cv.disc(gx, 176, 7, mix(LAMP, BONE, 0.4), 0.55)
        cv.glow(200, 280, 60, LAMP, 0.5)
    cv.save(f"characters/{name}.png")


if __name__ == "__main__":
    cover()
    reedmere_quay()
    the_drowned_reach()
    hollow_sluice()
    portrait("hesper_vane", 11, FOGDARK, INK, mix(LAMP, FOG, 0.4), LAMP, "hesper")
    portrait("tamsin_reed", 12, mix(FOGDARK, DEEPGREEN, 0.3), INK, GREEN, GREEN, "tamsin")
    portrait("aldous_crane", 13, mix(NIGHT, RUST, 0.25), INK, LAMP, LAMP, "crane")
    portrait("brinny_sedge", 14, mix(MARSH, FOGDARK, 0.5), INK, mix(FOG, GREEN, 0.2), LAMP, "brinny")
    portrait("ned_fallow", 15, mix(NIGHT, LAMP, 0.12), INK, mix(LAMP, RUST, 0.4), LAMP, "ned")
