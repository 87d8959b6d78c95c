-- Migration 5 (#22): save slots for sessions. A slot is a bookmark of one
-- scene in this same file (any branch); loading it branches from that scene
-- as /rewind does, so nothing already played is ever overwritten.
CREATE TABLE bookmarks (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  slot TEXT NOT NULL,
  scene_id TEXT NOT NULL REFERENCES scenes(id),
  summary TEXT NOT NULL,
  saved_at INTEGER NOT NULL,            -- seconds since the Unix epoch
  PRIMARY KEY (session_id, slot)
);
