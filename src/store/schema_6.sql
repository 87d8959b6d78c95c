-- Migration 6 (#40): each scene keeps the play clock it was reached at, so a
-- replay of an older turn decays memory as that turn did. Scenes saved
-- before this have none (NULL): their replays use the session's clock.
ALTER TABLE scenes ADD COLUMN play_minutes REAL;
