-- A number every add or delete raises, so another process sees at once that the catalog changed
-- (PRAGMA data_version speaks for one connection only); and the order the list's first page reads.
CREATE TABLE catalog_state (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;
INSERT INTO catalog_state VALUES (1, 0);
CREATE INDEX uploads_newest ON uploads (uploaded_at DESC, digest DESC);
