-- The team catalog: uploads, the sessions each holds, and a number every add or delete raises.
CREATE TABLE uploads (
  digest      TEXT PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
  name        TEXT NOT NULL,
  size        BIGINT NOT NULL,
  carrier     TEXT NOT NULL,
  media       INTEGER NOT NULL,
  uploaded_at BIGINT NOT NULL
);
CREATE INDEX uploads_newest ON uploads (uploaded_at DESC, digest DESC);
CREATE TABLE upload_sessions (
  digest     TEXT NOT NULL REFERENCES uploads(digest) ON DELETE CASCADE,
  ordinal    INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  member     TEXT,
  session_id TEXT,
  header     TEXT,
  verdict    TEXT NOT NULL,
  PRIMARY KEY (digest, ordinal)
);
CREATE INDEX upload_sessions_id ON upload_sessions (session_id);
CREATE TABLE catalog_state (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO catalog_state VALUES (1, 0);
