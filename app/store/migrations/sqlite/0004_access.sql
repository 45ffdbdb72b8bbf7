-- Access (docs/decisions/0020-access-control.md): API tokens, kept only as the SHA-256 of their secret; the
-- audit trail; and who published each upload, so a member may delete what it uploaded.
CREATE TABLE tokens (
  name         TEXT PRIMARY KEY,
  digest       TEXT NOT NULL UNIQUE,
  role         TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer', 'metrics')),
  projects     TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  created_by   TEXT NOT NULL,
  expires_at   INTEGER,
  revoked_at   INTEGER,
  last_used_at INTEGER
) STRICT;
CREATE TABLE audit (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  at      INTEGER NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  target  TEXT NOT NULL,
  client  TEXT NOT NULL,
  outcome TEXT NOT NULL,
  status  INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_at ON audit (at);
ALTER TABLE uploads ADD COLUMN uploaded_by TEXT;
