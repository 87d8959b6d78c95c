#!/usr/bin/env python3
"""Keeps cargo's shared target directory from filling the disk.

Every revision of Loreloom leaves its own test binaries (hundreds of MB each with
Bevy linked in) in the target directory, and repeat runs never delete them. This
removes Loreloom's own stale artifacts (the newest few of each name stay: one per
feature set and profile), and the incremental cache when it has grown past a cap.
Dependencies' artifacts are left alone, so the next build stays incremental.
"""
import collections
import os
import re
import shutil
import sys
from pathlib import Path

KEEP = 4  # default features, --no-default-features, and their clippy (check) builds
INCREMENTAL_CAP = 8 * 1024**3


def own_names(repo: Path) -> set[str]:
    names = {"loreloom", "libloreloom", "loreloom_web"}
    for folder in ("tests", "benches"):
        names.update(p.stem for p in (repo / folder).glob("*.rs"))
    return names


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def prune(target: Path, repo: Path) -> int:
    names = own_names(repo)
    freed = 0
    for profile in ("debug", "release"):
        deps = target / profile / "deps"
        if not deps.is_dir():
            continue
        groups = collections.defaultdict(list)
        for entry in deps.iterdir():
            found = re.match(r"^(.*)-([0-9a-f]{16})(\..*)?$", entry.name)
            if found and found.group(1) in names and entry.is_file():
                groups[(found.group(1), found.group(3) or "")].append(entry)
        for files in groups.values():
            files.sort(key=lambda f: f.stat().st_mtime, reverse=True)
            for stale in files[KEEP:]:
                freed += stale.stat().st_size
                stale.unlink()
        incremental = target / profile / "incremental"
        if incremental.is_dir() and size_of(incremental) > INCREMENTAL_CAP:
            freed += size_of(incremental)
            shutil.rmtree(incremental)
    return freed


if __name__ == "__main__":
    target = Path(sys.argv[1])
    repo = Path(sys.argv[2]) if len(sys.argv) > 2 else Path.cwd()
    freed = prune(target, repo)
    if freed:
        print(f"loreloom: pruned {freed / 1024**3:.1f} GiB of stale build output from {target}", file=sys.stderr)
