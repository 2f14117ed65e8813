-- What an OpenAI-compatible provider writes speech down with (`/v1/audio/transcriptions`)
-- and reads answers aloud with (`/v1/audio/speech`, in one of its voices), set by an
-- administrator; none for providers that do neither (§15).
ALTER TABLE providers ADD COLUMN transcription_model TEXT
    CHECK (transcription_model IS NULL OR length(transcription_model) BETWEEN 1 AND 200);
ALTER TABLE providers ADD COLUMN speech_model TEXT
    CHECK (speech_model IS NULL OR length(speech_model) BETWEEN 1 AND 200);
ALTER TABLE providers ADD COLUMN speech_voice TEXT
    CHECK (speech_voice IS NULL OR length(speech_voice) BETWEEN 1 AND 100);
