-- The team's search index grows with a session (docs/decisions/0024-push.md): a session's rows belong to a
-- `chain`, which moves from an upload to the upload appending to it, so an append writes only the rows it
-- adds or changes (each row's `key`, `signature` and `settled`, as the SQLite index keeps them, say which).
-- The index is derived from the uploads' bytes: it is made again from them, by every process's worker.
DROP TABLE search_rows;
DROP TABLE search_sessions;
DELETE FROM search_uploads;
CREATE TABLE search_sessions (
  chain  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  digest TEXT NOT NULL REFERENCES search_uploads(digest) ON DELETE CASCADE,
  member TEXT NOT NULL,  -- '' for an upload that is one session
  title  TEXT,
  UNIQUE (digest, member)
);
CREATE TABLE search_rows (
  chain     BIGINT NOT NULL REFERENCES search_sessions(chain) ON DELETE CASCADE,
  key       TEXT NOT NULL,     -- the row's key in its transcript, unique there
  n         INTEGER NOT NULL,  -- the row's place in its transcript
  signature BYTEA NOT NULL,    -- what its text is made of (search_index._signature)
  settled   BOOLEAN NOT NULL,  -- drew on nothing past the events stored: an append leaves it as it is
  anchor    TEXT NOT NULL,
  kind      TEXT NOT NULL,
  form      TEXT,
  tool      TEXT,
  error     BOOLEAN NOT NULL,
  seq       INTEGER NOT NULL,
  text      TEXT NOT NULL,
  PRIMARY KEY (chain, key)
);
CREATE INDEX search_rows_text ON search_rows USING gin (text gin_trgm_ops) WITH (fastupdate = off);
