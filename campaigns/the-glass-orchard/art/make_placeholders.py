#!/usr/bin/env python3
"""Placeholder art for *The Glass Orchard*.

Draws every illustration, portrait and the cover that story.json references,
in the art direction's palette: graded skies, a moon or sun, tree silhouettes
hung with glowing glass fruit. Pure standard library (zlib + struct write the
PNGs); deterministic, so re-running it reproduces the same bytes.

    python3 make_placeholders.py        # writes the PNGs next to this script
"""
import math
import os
import random
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Palette (art_direction.palette)
NIGHT = "#141a33"
DUSK = "#2e3a6b"
HAZE = "#6b7bb0"
GLASS = "#9fd8cf"
LAMP = "#d9b36c"
BONE = "#efe6d2"
EMBER = "#8a3b34"
INK = "#0b0e1c"  # silhouette: the night colour pushed darker


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
        with open(path, "wb") as f:
            f.write(png)
        print(f"{name:28s} {w}x{h} {len(png):7d} bytes")


# -- motifs -----------------------------------------------------------------

def stars(cv, rng, n, ymax, col=BONE):
    for _ in range(n):
        x, y = rng.uniform(0, cv.w), rng.uniform(0, ymax)
        cv.disc(x, y, rng.uniform(0.4, 1.1), col, rng.uniform(0.35, 0.9))


def moon(cv, x, y, r, col=BONE, halo=HAZE):
    cv.glow(x, y, r * 4.5, halo, 0.55)
    cv.disc(x, y, r, col)
    cv.disc(x + r * 0.3, y - r * 0.15, r * 0.28, mix(col, HAZE, 0.25), 0.35)
    cv.disc(x - r * 0.35, y + r * 0.3, r * 0.18, mix(col, HAZE, 0.25), 0.3)


def tree(cv, rng, x, base, height, col=INK, fruit=(GLASS, LAMP), fruit_glow=1.0, n_fruit=None, lean=0.0):
    """A rounded orchard tree silhouette hung with glass fruit."""
    trunk_top = base - height * 0.45
    tw = max(2.0, height * 0.07)
    cv.line(x, base + 2, x + lean * height * 0.2, trunk_top, tw, tw * 0.6, col)
    crown = []
    cx, cy = x + lean * height * 0.2, base - height * 0.68
    rad = height * 0.34
    for k in range(4):  # a few boughs
        ang = -math.pi / 2 + (k - 1.5) * 0.55 + rng.uniform(-0.15, 0.15)
        ex, ey = cx + math.cos(ang) * rad * 0.9, cy + math.sin(ang) * rad * 0.7
        cv.line(cx, trunk_top, ex, ey, tw * 0.55, tw * 0.2, col)
    for _ in range(9):
        a = rng.uniform(0, math.tau)
        d = rng.uniform(0.1, 0.75) * rad
        px, py = cx + math.cos(a) * d * 1.25, cy + math.sin(a) * d * 0.8
        r = rng.uniform(0.42, 0.62) * rad
        crown.append((px, py, r))
        cv.disc(px, py, r, col)
    n = n_fruit if n_fruit is not None else int(height / 9) + 3
    for _ in range(n):
        px, py, r = rng.choice(crown)
        a = rng.uniform(0, math.tau)
        fx, fy = px + math.cos(a) * r * 0.75, py + abs(math.sin(a)) * r * 0.8
        fr = max(1.2, height * rng.uniform(0.018, 0.03))
        c = rgb(rng.choice(fruit))
        cv.glow(fx, fy, fr * 5, c, 0.35 * fruit_glow)
        cv.disc(fx, fy, fr, mix(c, BONE, 0.15))
        cv.disc(fx - fr * 0.3, fy - fr * 0.35, fr * 0.35, BONE, 0.8)


def hills(cv, base, amp, col, phase=0.0, freq=1.0):
    cv.ground(lambda x: base + amp * math.sin(x / cv.w * math.pi * freq + phase)
              + amp * 0.35 * math.sin(x / cv.w * math.pi * 3.1 * freq + phase * 2), col)


def lantern(cv, x, y, s=1.0):
    cv.glow(x, y, 60 * s, LAMP, 0.9)
    cv.line(x, y - 9 * s, x, y - 16 * s, 1.2 * s, 1.2 * s, INK)
    cv.rect(x - 4 * s, y - 9 * s, x + 4 * s, y + 7 * s, mix(LAMP, BONE, 0.5))
    cv.rect(x - 5 * s, y - 10 * s, x + 5 * s, y - 8 * s, INK)
    cv.rect(x - 5 * s, y + 6 * s, x + 5 * s, y + 8 * s, INK)


# -- pictures ---------------------------------------------------------------

def cover():
    cv, rng = Canvas(640, 360), random.Random(1)
    cv.vgrad([(0, NIGHT), (0.55, DUSK), (0.78, HAZE), (1, DUSK)])
    stars(cv, rng, 90, 200)
    moon(cv, 488, 82, 30)
    hills(cv, 268, 10, mix(DUSK, NIGHT, 0.6), 0.4)
    for i, x in enumerate([70, 190, 320, 450, 575]):
        h = 150 + (i % 2) * 35 + rng.uniform(-10, 10)
        tree(cv, rng, x, 300 + rng.uniform(-6, 6), h, fruit=(GLASS, LAMP, BONE), n_fruit=16)
    hills(cv, 306, 6, INK, 1.3, 1.4)
    lantern(cv, 322, 318, 1.1)
    cv.save("cover.png")


def gate_at_dusk():
    cv, rng = Canvas(640, 360), random.Random(2)
    cv.vgrad([(0, DUSK), (0.45, mix(HAZE, EMBER, 0.5)), (0.68, LAMP), (0.72, mix(LAMP, BONE, 0.4)), (1, EMBER)])
    cv.glow(250, 250, 230, LAMP, 0.8)
    cv.disc(250, 252, 26, mix(LAMP, BONE, 0.6))
    hills(cv, 250, 6, mix(EMBER, NIGHT, 0.55), 2.0)
    for x in range(20, 640, 62):
        tree(cv, rng, x + rng.uniform(-12, 12), 262, rng.uniform(70, 95), col=mix(EMBER, NIGHT, 0.7),
             fruit=(LAMP, BONE), fruit_glow=0.6, n_fruit=7)
    cv.ground(lambda x: 290 + 4 * math.sin(x / 90), INK)
    # the gate: two posts, rails, a brace, and the pasted notice
    cv.rect(188, 170, 206, 330, INK)
    cv.rect(432, 170, 450, 330, INK)
    for y in (196, 250, 300):
        cv.rect(206, y, 432, y + 7, INK)
    cv.line(206, 300, 432, 200, 7, 7, INK)
    cv.disc(197, 168, 11, INK)
    cv.disc(441, 168, 11, INK)
    cv.rect(413, 212, 438, 244, BONE, 0.9)
    for k in range(4):
        cv.rect(417, 218 + k * 6, 434 - (k % 2) * 6, 220 + k * 6, NIGHT, 0.6)
    cv.line(192, 290, 198, 284, 2, 2, BONE, 0.8)  # chalk cross
    cv.line(192, 284, 198, 290, 2, 2, BONE, 0.8)
    cv.save("gate-at-dusk.png")


def east_rows():
    cv, rng = Canvas(640, 360), random.Random(3)
    cv.vgrad([(0, NIGHT), (0.6, DUSK), (1, mix(DUSK, HAZE, 0.4))])
    stars(cv, rng, 70, 150)
    moon(cv, 110, 70, 18)
    hills(cv, 190, 5, mix(NIGHT, DUSK, 0.5), 0.8)
    for row, (base, h, n) in enumerate([(205, 45, 12), (228, 70, 8), (262, 105, 6), (318, 165, 4)]):
        shade = mix(INK, DUSK, 0.45 - row * 0.15)
        step = 640 / n
        for k in range(n):
            x = step * (k + 0.5) + rng.uniform(-step * 0.15, step * 0.15) + (row % 2) * step * 0.3
            tree(cv, rng, x, base, h, col=shade, fruit=(GLASS, LAMP, LAMP), fruit_glow=0.8 + row * 0.2)
        cv.ground(lambda x, b=base: b + 3 + 2 * math.sin(x / 40 + row), shade)
    # the cracked pear, brighter than the rest
    cv.glow(372, 210, 40, LAMP, 1.0)
    cv.disc(372, 214, 7, mix(GLASS, LAMP, 0.5))
    cv.disc(372, 206, 5, mix(GLASS, LAMP, 0.5))
    cv.line(372, 202, 374, 218, 1, 1, BONE)
    lantern(cv, 300, 300, 0.9)
    cv.save("east-rows.png")


def cracked_pear():
    cv = Canvas(640, 360)
    cv.vgrad([(0, NIGHT), (1, mix(NIGHT, DUSK, 0.5))])
    cv.glow(320, 190, 260, DUSK, 1.0)
    cv.glow(320, 200, 140, GLASS, 0.45)
    # leaves and stem
    cv.line(320, 62, 326, 100, 5, 4, INK)
    cv.poly([(324, 82), (350, 62), (392, 64), (364, 86)], mix(INK, DUSK, 0.4))
    # the pear: a small disc over a larger one, glass-green going gold
    body = mix(GLASS, LAMP, 0.35)
    for dx, dy, grow, col, a in ((6, 3, 8, mix(body, NIGHT, 0.25), 1.0), (0, 0, 0, body, 0.85)):
        cv.poly([(274 - grow + dx, 140 + dy), (366 + grow + dx, 140 + dy),
                 (398 + grow + dx, 222 + dy), (238 - grow + dx, 222 + dy)], col, a)
        cv.disc(318 + dx, 222 + dy, 80 + grow, col, a)
        cv.disc(320 + dx, 140 + dy, 46 + grow, col, a)
    cv.ellipse(290, 190, 16, 46, BONE, 0.45)  # highlight
    cv.disc(296, 122, 11, BONE, 0.6)
    # the crack: a hairline from stem to belly
    pts = [(326, 100), (331, 128), (322, 160), (334, 196), (324, 236), (336, 270), (330, 300)]
    for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
        cv.line(xa, ya, xb, yb, 2.2, 2.2, BONE)
    cv.glow(330, 200, 70, LAMP, 0.5)
    cv.save("cracked-pear.png")


def keepers_hut():
    cv, rng = Canvas(640, 360), random.Random(5)
    cv.vgrad([(0, NIGHT), (0.7, DUSK), (1, HAZE)])
    stars(cv, rng, 60, 170)
    moon(cv, 540, 60, 16)
    hills(cv, 270, 6, mix(NIGHT, DUSK, 0.4), 1.7)
    for x in (40, 120, 540, 610):
        tree(cv, rng, x, 300, rng.uniform(120, 160), fruit=(GLASS, LAMP), n_fruit=9)
    # hut: walls, roof, chimney, smoke, lit window and door
    cv.glow(285, 280, 170, LAMP, 0.7)
    cv.rect(230, 200, 420, 305, INK)
    cv.poly([(214, 204), (325, 128), (436, 204)], INK)
    cv.rect(380, 134, 398, 180, INK)
    for k, (sx, sy) in enumerate([(392, 118), (402, 96), (414, 72), (430, 50)]):
        cv.disc(sx, sy, 10 + k * 4, HAZE, 0.18)
    cv.rect(262, 228, 308, 268, LAMP)
    cv.glow(285, 248, 40, LAMP, 0.8)
    cv.rect(283, 228, 287, 268, INK)
    cv.rect(262, 246, 308, 250, INK)
    cv.rect(345, 232, 378, 305, mix(INK, EMBER, 0.3))
    cv.ground(lambda x: 304 + 3 * math.sin(x / 70), INK)
    lantern(cv, 395, 296, 0.8)
    cv.save("keepers-hut.png")


def ledger():
    cv = Canvas(640, 360)
    cv.vgrad([(0, mix(NIGHT, EMBER, 0.25)), (0.55, mix(NIGHT, EMBER, 0.45)), (0.56, mix(EMBER, INK, 0.55)), (1, INK)])
    cv.glow(470, 120, 230, LAMP, 0.8)
    # open ledger in perspective
    left = [(130, 300), (318, 318), (322, 178), (170, 168)]
    right = [(322, 318), (512, 296), (470, 166), (322, 178)]
    cv.poly([(x + 6, y + 8) for x, y in left + right[1:3]], INK, 0.6)
    cv.poly(left, mix(BONE, LAMP, 0.25))
    cv.poly(right, mix(BONE, LAMP, 0.15))
    cv.line(322, 178, 322, 318, 2, 2, mix(EMBER, INK, 0.4))
    for k in range(9):  # lines of a tight brown hand
        t = 0.12 + k * 0.09
        ly, ry = 174 + (306 - 174) * t, 172 + (300 - 172) * t
        cv.line(176 - 40 * t, ly, 306, ly + 14 * t, 1.3, 1.3, mix(EMBER, INK, 0.3), 0.55)
        cv.line(336, ry + 6, 462 + 40 * t, ry, 1.3, 1.3, mix(EMBER, INK, 0.3), 0.55)
    cv.disc(424, 276, 7, EMBER, 0.8)  # the thumbprint
    lantern(cv, 545, 160, 1.6)
    cv.glow(110, 255, 26, GLASS, 0.7)
    cv.disc(110, 258, 15, mix(GLASS, LAMP, 0.3))
    cv.disc(110, 242, 10, mix(GLASS, LAMP, 0.3))
    cv.disc(105, 250, 4, BONE, 0.7)
    cv.save("ledger.png")


def dry_well():
    cv, rng = Canvas(640, 360), random.Random(7)
    cv.vgrad([(0, NIGHT), (0.7, DUSK), (1, mix(DUSK, GLASS, 0.15))])
    stars(cv, rng, 80, 190)
    moon(cv, 320, 52, 20)
    cv.ground(lambda x: 238 + 5 * math.sin(x / 60), mix(NIGHT, DUSK, 0.3))
    for x in (30, 110, 190, 450, 530, 610):
        tree(cv, rng, x + rng.uniform(-10, 10), 270 + abs(x - 320) * 0.05, rng.uniform(110, 150), fruit=(GLASS, BONE))
    cv.ground(lambda x: 290 + 4 * math.sin(x / 80 + 1), INK)
    for k in range(18):  # faint column of light and rising glints
        cv.glow(320 + rng.uniform(-14, 14), 250 - k * 12, 30, GLASS, 0.22)
    for _ in range(40):
        gx, gy = 320 + rng.gauss(0, 22), rng.uniform(70, 270)
        cv.disc(gx, gy, rng.uniform(0.8, 1.8), BONE, 0.8)
    stone = mix(HAZE, NIGHT, 0.45)
    cv.ellipse(320, 292, 96, 30, stone)
    cv.rect(224, 292, 416, 336, stone)
    cv.ellipse(320, 336, 96, 22, stone)
    cv.ellipse(320, 292, 76, 20, INK)
    for k in range(6):  # courses of stone
        cv.line(224, 304 + k * 6, 416, 304 + k * 6, 1, 1, mix(stone, INK, 0.5), 0.5)
    cv.line(382, 312, 398, 312, 2, 2, BONE, 0.75)  # the chalk cross that will not come off
    cv.line(390, 304, 390, 320, 2, 2, BONE, 0.75)
    cv.save("dry-well.png")


def carriage_lamps():
    cv, rng = Canvas(640, 360), random.Random(8)
    cv.vgrad([(0, NIGHT), (0.75, DUSK), (1, mix(DUSK, EMBER, 0.3))])
    stars(cv, rng, 50, 160)
    moon(cv, 90, 50, 14)
    hills(cv, 240, 5, mix(NIGHT, DUSK, 0.4), 0.3)
    for x in (450, 520, 590, 650):
        tree(cv, rng, x, 280, rng.uniform(100, 140), fruit=(GLASS, LAMP), n_fruit=8)
    cv.ground(lambda x: 292 + 3 * math.sin(x / 50), INK)
    for lx in (86, 236):
        cv.glow(lx, 206, 100, LAMP, 0.9)
    # carriage
    cv.rect(90, 196, 230, 262, INK)
    cv.poly([(84, 198), (160, 180), (236, 198)], INK)
    for wx in (115, 205):
        cv.disc(wx, 272, 22, INK)
        cv.disc(wx, 272, 16, mix(INK, DUSK, 0.5))
        cv.disc(wx, 272, 4, INK)
    for lx in (86, 236):
        cv.glow(lx, 206, 26, LAMP, 0.8)
        cv.rect(lx - 5, 198, lx + 5, 214, mix(LAMP, BONE, 0.5))
    # crates with the furnace mark
    for k, (cx, cy) in enumerate([(262, 276), (300, 276), (281, 246)]):
        cv.rect(cx - 18, cy - 15, cx + 18, cy + 15, mix(EMBER, INK, 0.55))
        cv.disc(cx, cy, 7, mix(EMBER, LAMP, 0.3), 0.7)
        cv.disc(cx, cy, 4, mix(EMBER, INK, 0.55))
    # a tall gloved figure with a hat
    fx = 372
    cv.poly([(fx - 19, 300), (fx - 12, 210), (fx + 12, 210), (fx + 19, 300)], INK)
    cv.disc(fx, 196, 11, INK)
    cv.rect(fx - 11, 168, fx + 11, 190, INK)
    cv.rect(fx - 17, 188, fx + 17, 192, INK)
    cv.line(fx + 12, 220, fx + 30, 246, 5, 4, INK)
    cv.line(fx + 30, 246, fx + 38, 232, 1.4, 1.4, BONE)  # the tuning fork's glint
    cv.save("carriage-lamps.png")


def first_light():
    cv, rng = Canvas(640, 360), random.Random(9)
    cv.vgrad([(0, DUSK), (0.35, mix(HAZE, EMBER, 0.45)), (0.62, LAMP), (0.7, BONE), (1, EMBER)])
    cv.glow(420, 236, 260, LAMP, 0.9)
    cv.disc(420, 240, 34, mix(BONE, LAMP, 0.3))
    cv.ground(lambda x: 238 + 3 * math.sin(x / 45), mix(EMBER, INK, 0.55))
    for x in range(10, 660, 70):
        tree(cv, rng, x + rng.uniform(-14, 14), 262, rng.uniform(85, 125), col=mix(EMBER, INK, 0.8),
             fruit=(BONE, LAMP, LAMP), fruit_glow=1.2, n_fruit=12)
    cv.ground(lambda x: 330 + 3 * math.sin(x / 60), INK)
    # a table in the wet grass, two chairs, an uncapped inkwell
    cv.rect(250, 284, 390, 292, INK)
    cv.rect(258, 292, 264, 334, INK)
    cv.rect(376, 292, 382, 334, INK)
    for chx, back in ((222, -1), (418, 1)):
        cv.rect(chx - 14, 300, chx + 14, 305, INK)
        cv.rect(chx - 13, 305, chx - 10, 334, INK)
        cv.rect(chx + 10, 305, chx + 13, 334, INK)
        bx = chx - 14 if back < 0 else chx + 11
        cv.rect(bx, 266, bx + 3, 305, INK)
    cv.rect(300, 276, 310, 284, INK)
    cv.rect(322, 281, 360, 284, BONE, 0.9)  # the contract
    lantern(cv, 270, 326, 0.7)
    cv.save("first-light.png")


def every_word():
    cv, rng = Canvas(640, 360), random.Random(10)
    cv.vgrad([(0, HAZE), (0.45, mix(LAMP, BONE, 0.3)), (0.7, BONE), (1, LAMP)])
    for k in range(26):
        cv.glow(320 + rng.uniform(-10, 10), 290 - k * 11, 44, GLASS, 0.28)
    for _ in range(500):  # every word at once, rising and scattering
        t = rng.random()
        y = 300 - t * 300
        spread = 18 + t * t * 330
        x = 320 + rng.gauss(0, spread / 2.2)
        c = rng.choice((GLASS, BONE, LAMP, HAZE))
        cv.disc(x, y, rng.uniform(0.7, 2.2), mix(c, NIGHT, 0.15), rng.uniform(0.5, 1))
    cv.ground(lambda x: 290 + 5 * math.sin(x / 55), mix(LAMP, EMBER, 0.5))
    for _ in range(260):  # glittering sand
        cv.disc(rng.uniform(0, 640), rng.uniform(296, 360), rng.uniform(0.5, 1.4), BONE, rng.uniform(0.4, 1))
    cv.ellipse(320, 300, 64, 18, mix(EMBER, INK, 0.4))
    cv.ellipse(320, 298, 50, 12, mix(GLASS, BONE, 0.5))
    # two small witnesses
    for fx, hat in ((150, False), (520, True)):
        cv.poly([(fx - 9, 300), (fx - 6, 262), (fx + 6, 262), (fx + 9, 300)], mix(EMBER, INK, 0.6))
        cv.disc(fx, 254, 6, mix(EMBER, INK, 0.6))
        if hat:
            cv.rect(fx + 10, 262, fx + 22, 270, mix(EMBER, INK, 0.6))
    cv.save("every-word.png")


def portrait(name, seed, bg_top, bg_bottom, rim, coat, tall_hat):
    cv, rng = Canvas(256, 256), random.Random(seed)
    cv.vgrad([(0, bg_top), (1, bg_bottom)])
    cv.glow(90 if not tall_hat else 170, 150, 150, rim, 0.9)
    for _ in range(14):  # glass fruit in the dark behind
        x, y = rng.uniform(10, 246), rng.uniform(10, 120)
        c = rgb(rng.choice((GLASS, LAMP)))
        cv.glow(x, y, 10, c, 0.4)
        cv.disc(x, y, rng.uniform(2, 3.5), mix(c, BONE, 0.2), 0.8)
    off = -3 if not tall_hat else 3
    sh_w = 104 if not tall_hat else 86
    # rim light: the same silhouette, offset and lighter, under the dark one
    for dx, col in ((off, mix(rim, BONE, 0.3)), (0, coat)):
        cv.ellipse(128 + dx, 262, sh_w, 70, col)
        cv.poly([(100 + dx, 205), (128 + dx, 176), (156 + dx, 205)], col)
        if tall_hat:
            cv.ellipse(128 + dx, 138, 25, 34, col)
            cv.rect(100 + dx, 58, 156 + dx, 106, col)
            cv.rect(88 + dx, 100, 168 + dx, 110, col)
        else:
            cv.ellipse(128 + dx, 140, 31, 37, col)
            cv.disc(118 + dx, 100, 18, col)  # the bun
            cv.poly([(78 + dx, 210), (100 + dx, 168), (112 + dx, 206)], col)  # greatcoat collar
            cv.poly([(178 + dx, 210), (156 + dx, 168), (144 + dx, 206)], col)
    if tall_hat:
        cv.line(176, 236, 188, 196, 2, 2, BONE, 0.9)  # tuning fork
        cv.line(184, 196, 186, 184, 1.2, 1.2, BONE, 0.9)
        cv.line(190, 198, 192, 186, 1.2, 1.2, BONE, 0.9)
    else:
        lantern(cv, 64, 214, 1.1)
    cv.save(name)


if __name__ == "__main__":
    cover()
    gate_at_dusk()
    east_rows()
    cracked_pear()
    keepers_hut()
    ledger()
    dry_well()
    carriage_lamps()
    first_light()
    every_word()
    portrait("portrait-agathe.png", 11, mix(EMBER, NIGHT, 0.6), NIGHT, LAMP, INK, tall_hat=False)
    portrait("portrait-pell.png", 12, NIGHT, mix(EMBER, NIGHT, 0.3), EMBER, INK, tall_hat=True)
