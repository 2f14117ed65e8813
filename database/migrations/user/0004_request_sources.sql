-- What each model request was built from (§8.1), so it can be recomposed byte for byte
-- later, even after the agent's prompt or the tool set changed: the prompt and the tool
-- list as they were (stored once per version), the last history row the context held,
-- and the version of the code that composes requests.
CREATE TABLE request_prompts (
    version TEXT PRIMARY KEY,
    prompt  TEXT NOT NULL
) STRICT;

CREATE TABLE request_toolsets (
    version TEXT PRIMARY KEY,
    tools   TEXT NOT NULL CHECK (json_valid(tools))
) STRICT;

ALTER TABLE model_requests ADD COLUMN session_id TEXT;
ALTER TABLE model_requests ADD COLUMN kind TEXT;
ALTER TABLE model_requests ADD COLUMN render_version INTEGER;
ALTER TABLE model_requests ADD COLUMN prompt_version TEXT REFERENCES request_prompts (version);
ALTER TABLE model_requests ADD COLUMN toolset_version TEXT REFERENCES request_toolsets (version);
ALTER TABLE model_requests ADD COLUMN history_upto INTEGER;
