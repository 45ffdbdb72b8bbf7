-- Labels (issue 34: `dsh-inspect push --label`, e.g. a CI job's id): the texts an upload was sent with, as a
-- JSON array of strings, '[]' for none. A column rather than a table of (digest, label) rows: labels are read
-- with every upload row the list reads (no join, no second query, one row per upload as before) and are
-- filtered on in memory with the rest of the list, never by a query; a row is written whole by its insert,
-- and the same bytes sent again with new labels rewrite that one value.
ALTER TABLE uploads ADD COLUMN labels TEXT NOT NULL DEFAULT '[]';
