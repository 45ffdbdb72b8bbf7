-- Each search hit says where it is (issue 41, item 3): its row's step (`turn.step`) and time, and its session's
-- first prompt beside the title. The index is derived from the uploads' bytes: emptied here, every process's
-- worker makes it again with the new columns filled.
DELETE FROM search_uploads;
ALTER TABLE search_sessions ADD COLUMN first_prompt TEXT;
ALTER TABLE search_rows ADD COLUMN step TEXT, ADD COLUMN at BIGINT;
