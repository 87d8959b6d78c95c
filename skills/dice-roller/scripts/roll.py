#!/usr/bin/env python3
"""Dice roller skill: reads the tool input on stdin, rolls each formula, and
answers in Loreloom's NDJSON tool protocol (seed 002 section 2.1)."""
import json
import random
import re
import secrets
import sys

FORMULA = re.compile(r"^\s*(\d{0,3})d(\d{1,4})\s*([+-]\s*\d{1,4})?\s*$", re.IGNORECASE)


def emit(**event):
    event["version"] = "0"
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def load_config():
    try:
        with open("config.json", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def roll(formula, rng):
    m = FORMULA.match(formula)
    if not m:
        raise ValueError(f"`{formula}` is not a dice formula like 2d6+1")
    count = int(m.group(1) or 1)
    sides = int(m.group(2))
    if not (1 <= count <= 100 and 2 <= sides <= 1000):
        raise ValueError(f"`{formula}`: 1 to 100 dice of 2 to 1000 sides")
    modifier = int((m.group(3) or "0").replace(" ", ""))
    rolls = [rng.randint(1, sides) for _ in range(count)]
    return {"formula": formula.strip(), "rolls": rolls, "modifier": modifier, "total": sum(rolls) + modifier}


def main():
    request = json.loads(sys.stdin.read() or "{}")
    data = request.get("input") or {}
    config = load_config()
    formulas = data.get("formulas") or ([data["formula"]] if "formula" in data else [])
    if not formulas:
        emit(type="error", errorCode="no_formula", errorMessage="give a formula such as 1d20+5")
        emit(type="done", ok=False, summary="nothing to roll")
        return
    seed = data.get("seed")
    if config.get("randomSource") == "pseudo" or seed is not None:
        rng = random.Random(seed)
    else:
        rng = secrets.SystemRandom()
    results = []
    for formula in formulas:
        try:
            results.append(roll(str(formula), rng))
        except ValueError as e:
            emit(type="error", errorCode="bad_formula", errorMessage=str(e))
            emit(type="done", ok=False, summary=str(e))
            return
    for r in results:
        emit(type="log", level="info", message=f"{r['formula']}: {r['rolls']} {r['modifier']:+d} = {r['total']}")
    payload = {"rolls": results, "why": data.get("why"), "showIndividualRolls": config.get("showIndividualRolls", True)}
    emit(type="ui_event", event="dice_roll", payload=payload)
    emit(type="state_patch", patch={"dice": {"last": results[-1], "count": len(results)}})
    totals = ", ".join(f"{r['formula']} = {r['total']}" for r in results)
    emit(type="done", ok=True, summary=f"rolled {totals}")


if __name__ == "__main__":
    main()
