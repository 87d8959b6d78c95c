-- Migration 3 (#7): the scene lore cache is keyed by the narrative scene
-- (scene number and place on this branch), not by one turn's snapshot; it
-- records the snapshot it was materialised at. The version-2 table was never
-- written to.
DROP TABLE scene_lore;
CREATE TABLE scene_lore (
  cache_key TEXT PRIMARY KEY,
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  lore_json TEXT NOT NULL,
  retrieved_at TEXT NOT NULL
);
CREATE INDEX idx_scene_lore_scene ON scene_lore (scene_id);
