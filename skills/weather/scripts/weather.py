#!/usr/bin/env python3
"""Weather and time of day skill: reads the tool input on stdin (its own part
of the skill state under "state"), moves the clock and the sky on, and answers
in Loreloom's NDJSON tool protocol (seed 002 section 2.1). Deterministic: the
same state, input and config give the same weather."""
import hashlib
import json
import sys

SKIES = ["clear", "fair", "overcast", "fog", "drizzle", "rain", "storm", "snow"]

# For each climate: how likely each sky is to follow each sky (weights).
CLIMATES = {
    "temperate": {
        "clear": {"clear": 5, "fair": 3, "overcast": 1},
        "fair": {"fair": 4, "clear": 2, "overcast": 2},
        "overcast": {"overcast": 4, "fair": 2, "drizzle": 2, "rain": 1},
        "fog": {"fog": 3, "overcast": 3, "fair": 1},
        "drizzle": {"drizzle": 3, "rain": 2, "overcast": 3},
        "rain": {"rain": 4, "drizzle": 2, "storm": 1, "overcast": 2},
        "storm": {"storm": 2, "rain": 4},
        "snow": {"snow": 3, "overcast": 3},
    },
    "coastal": {
        "clear": {"clear": 3, "fair": 3, "fog": 2},
        "fair": {"fair": 3, "fog": 2, "overcast": 2},
        "overcast": {"overcast": 3, "fog": 2, "drizzle": 3},
        "fog": {"fog": 5, "drizzle": 2, "overcast": 2},
        "drizzle": {"drizzle": 3, "fog": 2, "rain": 2},
        "rain": {"rain": 3, "storm": 2, "drizzle": 2},
        "storm": {"storm": 2, "rain": 3, "overcast": 1},
        "snow": {"snow": 2, "fog": 2, "overcast": 2},
    },
    "arid": {
        "clear": {"clear": 8, "fair": 2},
        "fair": {"fair": 3, "clear": 4, "overcast": 1},
        "overcast": {"overcast": 2, "fair": 3, "storm": 1},
        "fog": {"fog": 1, "clear": 3},
        "drizzle": {"fair": 2, "overcast": 2},
        "rain": {"overcast": 2, "fair": 2},
        "storm": {"storm": 1, "overcast": 2, "clear": 2},
        "snow": {"clear": 3},
    },
    "cold": {
        "clear": {"clear": 4, "overcast": 2, "snow": 1},
        "fair": {"fair": 2, "clear": 2, "overcast": 2},
        "overcast": {"overcast": 4, "snow": 3, "fog": 1},
        "fog": {"fog": 3, "overcast": 2},
        "drizzle": {"snow": 2, "overcast": 2},
        "rain": {"snow": 2, "overcast": 2},
        "storm": {"storm": 2, "snow": 3},
        "snow": {"snow": 4, "overcast": 2, "storm": 1, "clear": 1},
    },
}

# Climates cold enough for snow (elsewhere it falls as a grey sky).
SNOWY = {"cold"}

SCENE_HOURS = [("midnight", 0), ("dawn", 6), ("sunrise", 6), ("morning", 9), ("noon", 12),
               ("midday", 12), ("afternoon", 15), ("dusk", 19), ("sunset", 19),
               ("evening", 20), ("night", 22)]

WORDS = {
    "clear": "a clear sky", "fair": "fair weather, a few clouds", "overcast": "a low grey sky",
    "fog": "fog", "drizzle": "a thin drizzle", "rain": "steady rain", "storm": "a storm",
    "snow": "falling snow",
}


def emit(**event):
    event["version"] = "0"
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def light(minute_of_day):
    hour = minute_of_day // 60
    for upto, name in [(5, "night"), (7, "dawn"), (11, "morning"), (14, "midday"),
                       (18, "afternoon"), (21, "dusk")]:
        if hour < upto:
            return name
    return "night"


HOURS = ["twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "ten", "eleven"]


def spoken(minute_of_day):
    """The hour as a narrator says it, to the nearest five minutes ("twenty
    to eight"): the summary is for the story's words, the clock stays in the
    state for the screen (a small model copies "19:40" into its prose)."""
    total = (minute_of_day + 2) // 5 * 5 % (24 * 60)
    hour, minute = divmod(total, 60)
    if minute > 30:
        hour, minute = (hour + 1) % 24, minute - 60
    name = {0: "midnight", 12: "noon"}.get(hour, HOURS[hour % 12])
    if minute == 0:
        return name if hour in (0, 12) else f"{name} o'clock"
    if abs(minute) == 15:
        return f"quarter {'past' if minute > 0 else 'to'} {name}"
    if minute == 30:
        return f"half past {name}"
    words = {5: "five", 10: "ten", 20: "twenty", 25: "twenty-five"}[abs(minute)]
    return f"{words} {'past' if minute > 0 else 'to'} {name}"


def pick(weights, key):
    """A weighted choice, decided by a hash of `key` (no hidden randomness)."""
    total = sum(weights.values())
    roll = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % total
    for sky in sorted(weights):
        roll -= weights[sky]
        if roll < 0:
            return sky
    return sorted(weights)[0]


def start(config, scene):
    words = json.dumps(scene.get("time", "")).lower() if isinstance(scene, dict) else ""
    hour = next((h for w, h in SCENE_HOURS if w in words), config.get("startHour", 9))
    mood = json.dumps(scene).lower() if isinstance(scene, dict) else ""
    sky = next((s for s in SKIES if s in mood), "fair")
    return {"day": 1, "minute": hour * 60, "sky": sky}


def main():
    try:
        request = json.loads(sys.stdin.read() or "{}")
    except ValueError as e:
        emit(type="error", errorCode="invalid_input", errorMessage=f"the input is not JSON: {e}")
        emit(type="done", ok=False, summary="The weather could not read its input.")
        return 1
    config = request.get("config") or {}
    given = request.get("input") or {}
    climate_name = config.get("climate", "temperate")
    if climate_name not in CLIMATES:
        climate_name = "temperate"
    climate = CLIMATES[climate_name]
    state = request.get("state") or start(config, given.get("scene") or {})
    minutes = given.get("minutes", config.get("minutesPerTurn", 20))
    if not isinstance(minutes, int) or not 0 <= minutes <= 7 * 24 * 60:
        emit(type="error", errorCode="invalid_input",
             errorMessage=f"minutes must be a whole number from 0 to 10080, not {minutes!r}")
        emit(type="done", ok=False, summary="The weather was asked for an impossible span.")
        return 0
    before = dict(state)
    total = state.get("minute", 540) + minutes
    day = state.get("day", 1) + total // (24 * 60)
    minute = total % (24 * 60)
    sky = state.get("sky", "fair")
    forced = (given.get("set") or {}).get("sky")
    if forced is not None:
        if forced not in SKIES:
            emit(type="error", errorCode="invalid_input",
                 errorMessage=f"`{forced}` is not a sky; the skies are {', '.join(SKIES)}")
            emit(type="done", ok=False, summary="The weather was asked for a sky it does not know.")
            return 0
        sky = forced
    else:
        # One chance to turn per hour begun.
        for hour in range(state.get("minute", 540) // 60 + 1, total // 60 + 1):
            sky = pick(climate[sky], f"{config.get('climate')}:{day}:{hour}:{sky}")
    if sky == "snow" and climate_name not in SNOWY and forced is None:
        sky = "overcast"
    state = {
        "day": day,
        "minute": minute,
        "clock": f"{minute // 60:02d}:{minute % 60:02d}",
        "light": light(minute),
        "sky": sky,
    }
    emit(type="log", level="info",
         message=f"{before.get('clock', '--:--')} {before.get('sky', '')} -> {state['clock']} {sky} (+{minutes} min)")
    emit(type="state_patch", patch={"weather": state})
    emit(type="ui_event", event="weather", payload={"clock": state["clock"], "light": state["light"], "sky": sky})
    turned = "" if sky == before.get("sky") else ", the weather turning"
    emit(type="done", ok=True,
         summary=f"{state['light'].capitalize()}, {spoken(minute)}; {WORDS[sky]}{turned}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
