-- Migration 4 (#7): the keyword index reads each lore chunk's context (its
-- section path and tags) beside its text. The lore index is rebuilt from the
-- campaign on the next open (its fingerprint is cleared), so nothing authored
-- lives only here.
ALTER TABLE lore_chunks ADD COLUMN context TEXT NOT NULL DEFAULT '';
DROP TABLE lore_fts;
CREATE VIRTUAL TABLE lore_fts USING fts5(
  context,
  text,
  content='lore_chunks',
  content_rowid='rowid',
  tokenize='porter unicode61'
);
DELETE FROM lore_index;
