-- Versions (docs/decisions/0018-session-versions.md): an upload may extend another (`base`), storing only the
-- bytes after it (`tail`, a blob digest; NULL for an upload stored whole under its own digest); a deleted
-- upload that another extends stays `hidden`, its bytes being the start of the other's. `events` is each
-- session's stored event count when uploaded (NULL for uploads catalogued before it was kept).
ALTER TABLE uploads ADD COLUMN base TEXT REFERENCES uploads(digest);
ALTER TABLE uploads ADD COLUMN tail TEXT;
ALTER TABLE uploads ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
ALTER TABLE upload_sessions ADD COLUMN events INTEGER;
CREATE INDEX uploads_base ON uploads (base);
CREATE INDEX uploads_tail ON uploads (tail);
CREATE INDEX upload_sessions_id ON upload_sessions (session_id);
