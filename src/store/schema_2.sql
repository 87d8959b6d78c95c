-- Version 2: semantic memory and lore (seed 002 §6.1.1, seed 001 v1 additions).

-- Authored lore chunks of the campaign, with their vectors (little-endian f32 × 384).
CREATE TABLE lore_chunks (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  corpus TEXT NOT NULL DEFAULT 'authored',
  file_path TEXT NOT NULL,
  section_path TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  paragraph_id INTEGER NOT NULL,
  method TEXT NOT NULL,
  text TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  token_count INTEGER NOT NULL,
  embedding BLOB
);

-- Keyword search over the chunks (external content: the text lives once).
CREATE VIRTUAL TABLE lore_fts USING fts5(
  text,
  content='lore_chunks',
  content_rowid='rowid',
  tokenize='porter unicode61'
);

-- What the lore index was built from: the campaign's fingerprint and the embedding model.
CREATE TABLE lore_index (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- Memory events (seed 002 §4.1.3), one per committed turn, scoped to their scene
-- so a rewound branch never recalls what happened on another.
CREATE TABLE memories (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  turn_index INTEGER NOT NULL,
  play_session INTEGER,
  summary TEXT NOT NULL,
  characters_json TEXT NOT NULL,
  location TEXT NOT NULL,
  significance TEXT NOT NULL,
  episodic INTEGER NOT NULL DEFAULT 0,
  action_type TEXT NOT NULL,
  embedding BLOB,
  embedding_model TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_memories_scene ON memories (scene_id);

-- Seed 001's scene lore cache: what was retrieved for a scene, until the scene changes.
CREATE TABLE scene_lore (
  scene_id TEXT PRIMARY KEY REFERENCES scenes(id),
  lore_json TEXT NOT NULL,
  retrieved_at TEXT NOT NULL
);
