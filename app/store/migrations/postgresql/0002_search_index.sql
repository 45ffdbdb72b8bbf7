-- The cross-session search index of the team's uploads (app/web/pg_corpus_index.py), derived from their
-- bytes: each catalogued upload is indexed once (uploads are immutable) and its rows go with its catalog row.
-- pg_trgm is a trusted extension: the database's owner may create it; it answers ILIKE '%…%' in any script.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- an upload whose every session is indexed (a session that reads as no log has no rows)
CREATE TABLE search_uploads (
  digest TEXT PRIMARY KEY REFERENCES uploads(digest) ON DELETE CASCADE
);
CREATE TABLE search_sessions (
  digest TEXT NOT NULL REFERENCES search_uploads(digest) ON DELETE CASCADE,
  member TEXT NOT NULL,  -- '' for an upload that is one session
  title  TEXT,
  PRIMARY KEY (digest, member)
);
CREATE TABLE search_rows (
  digest TEXT NOT NULL,
  member TEXT NOT NULL,
  n      INTEGER NOT NULL,  -- the row's place in its transcript
  anchor TEXT NOT NULL,
  kind   TEXT NOT NULL,
  form   TEXT,
  tool   TEXT,
  error  BOOLEAN NOT NULL,
  seq    INTEGER NOT NULL,
  text   TEXT NOT NULL,  -- the words the row shows (search.shown_text)
  PRIMARY KEY (digest, member, n),
  FOREIGN KEY (digest, member) REFERENCES search_sessions(digest, member) ON DELETE CASCADE
);
-- fastupdate off: rows come an upload at a time, and a pending list (up to 4 MB of them, unsorted) would be
-- scanned by every search until a vacuum merged it; writing each upload's rows into the index costs less
CREATE INDEX search_rows_text ON search_rows USING gin (text gin_trgm_ops) WITH (fastupdate = off);
