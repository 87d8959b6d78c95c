-- Loreloom save, schema version 1: seeds 001 and 003 merged (see src/store/mod.rs).
-- One seed-003 session per save file; play sessions (seed 001 SessionManager) inside it.

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  campaign_id TEXT NOT NULL,
  campaign_path TEXT NOT NULL,
  scenario_id TEXT,
  ruleset_id TEXT NOT NULL,
  character_ids TEXT NOT NULL,          -- JSON array, denormalized cache
  current_scene_id TEXT NOT NULL,
  scene_index INTEGER NOT NULL,         -- of current_scene_id; strictly increasing
  turn_index INTEGER NOT NULL,
  small_model_key TEXT NOT NULL,
  large_model_key TEXT NOT NULL,
  calibration_json TEXT NOT NULL DEFAULT '{}',
  prompt_versions_json TEXT NOT NULL DEFAULT '{}',
  seed INTEGER NOT NULL,
  play_minutes REAL NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE session_characters (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  character_id TEXT NOT NULL,
  role TEXT NOT NULL,                   -- user_persona | npc
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, character_id)
);

-- Every scene is a full snapshot; rewinds branch from an earlier scene (parent_scene_id).
CREATE TABLE scenes (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_index INTEGER NOT NULL,
  parent_scene_id TEXT REFERENCES scenes(id),
  turn_index INTEGER NOT NULL,
  kind TEXT NOT NULL,                   -- start | play | fallback | rewind
  state_json TEXT NOT NULL,             -- the scene state (ruleset scene_state_schema)
  world_json TEXT NOT NULL,             -- the whole WorldState after this scene's turn
  created_at TEXT NOT NULL,
  UNIQUE (session_id, scene_index)
);

-- One row per committed turn; the idempotency key is (session_id, user_action_id).
CREATE TABLE turns (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_index INTEGER NOT NULL,
  user_action_id TEXT NOT NULL,
  scene_before_id TEXT NOT NULL,
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  kind TEXT NOT NULL,
  action_text TEXT NOT NULL,
  result_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, turn_index),
  UNIQUE (session_id, user_action_id)
);

CREATE TABLE messages (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  turn_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  owner TEXT NOT NULL,
  kind TEXT NOT NULL,
  target TEXT,
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, turn_id, seq)
);

CREATE TABLE actions (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  character_id TEXT NOT NULL,
  action_text TEXT NOT NULL,
  resolved_outcome TEXT NOT NULL,       -- JSON
  created_at TEXT NOT NULL
);

CREATE TABLE observations (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  character_id TEXT NOT NULL,
  content TEXT NOT NULL,
  importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
  reinforcement_count INTEGER NOT NULL DEFAULT 0,
  created_minute REAL NOT NULL,         -- play clock
  created_at TEXT NOT NULL
);
CREATE INDEX idx_observations_character ON observations (session_id, character_id);

-- One normalized edge per unordered pair per scene (a < b).
CREATE TABLE scene_relations (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  character_a_id TEXT NOT NULL,
  character_b_id TEXT NOT NULL,
  trust INTEGER NOT NULL,
  tension INTEGER NOT NULL,
  closeness INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  CHECK (character_a_id < character_b_id),
  UNIQUE (scene_id, character_a_id, character_b_id)
);

-- The current branch's world, for queries (seed 001 tables); rebuilt on rewind.
CREATE TABLE facts (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  subject_id TEXT NOT NULL,
  predicate TEXT NOT NULL,
  object_json TEXT NOT NULL,
  visibility TEXT NOT NULL,
  scene_id TEXT NOT NULL,
  PRIMARY KEY (session_id, subject_id, predicate)
);
CREATE TABLE clocks (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  value INTEGER NOT NULL,
  max INTEGER NOT NULL,
  triggers_json TEXT NOT NULL,
  PRIMARY KEY (session_id, id)
);
CREATE TABLE inventory (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  owner_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  qty INTEGER NOT NULL,
  PRIMARY KEY (session_id, owner_id, item_id)
);
CREATE TABLE threads (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  id TEXT NOT NULL,
  title TEXT NOT NULL,
  status TEXT NOT NULL,
  stakes_json TEXT NOT NULL,
  PRIMARY KEY (session_id, id)
);

-- Everything a turn did: user action, model calls (#4 records), dice rolls, state ops, errors.
CREATE TABLE turn_events (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT,
  turn_index INTEGER NOT NULL,
  event_type TEXT NOT NULL,             -- user_action | model_output | tool_call | state_apply | error
  step_name TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  model_key TEXT,
  prompt_version TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_turn_events_turn ON turn_events (session_id, turn_index);

CREATE TABLE play_sessions (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  turn_range_start INTEGER NOT NULL,
  turn_range_end INTEGER,
  recap TEXT,
  summary TEXT
);

CREATE TABLE summaries (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scope TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  text TEXT NOT NULL,
  turn_range_start INTEGER NOT NULL,
  turn_range_end INTEGER NOT NULL
);
