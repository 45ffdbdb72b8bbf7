-- The first catalog (user_version 1): uploads and the sessions each holds.
CREATE TABLE IF NOT EXISTS uploads (
  digest      TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  size        INTEGER NOT NULL,
  carrier     TEXT NOT NULL,
  media       INTEGER NOT NULL,
  uploaded_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS upload_sessions (
  digest     TEXT NOT NULL REFERENCES uploads(digest) ON DELETE CASCADE,
  ordinal    INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  member     TEXT,
  session_id TEXT,
  header     TEXT,
  verdict    TEXT NOT NULL,
  PRIMARY KEY (digest, ordinal)
) STRICT;
