-- Access (docs/decisions/0020-access-control.md): API tokens, kept only as the SHA-256 of their secret; the
-- audit trail; and who published each upload, so a member may delete what it uploaded.
CREATE TABLE tokens (
  name         TEXT PRIMARY KEY,
  digest       TEXT NOT NULL UNIQUE CHECK (digest ~ '^[0-9a-f]{64}$'),
  role         TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer', 'metrics')),
  projects     TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  created_by   TEXT NOT NULL,
  expires_at   BIGINT,
  revoked_at   BIGINT,
  last_used_at BIGINT
);
CREATE TABLE audit (
  id      BIGSERIAL PRIMARY KEY,
  at      BIGINT NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  target  TEXT NOT NULL,
  client  TEXT NOT NULL,
  outcome TEXT NOT NULL,
  status  INTEGER NOT NULL
);
CREATE INDEX audit_at ON audit (at);
ALTER TABLE uploads ADD COLUMN uploaded_by TEXT;
