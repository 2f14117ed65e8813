-- A task kept readable while its owner is away (§11, §3). Its words are `text`; here also
-- which agent and model run it, and `accepted`: the record of what its owner had accepted
-- (their file's, copied when they made the job and at each login), which the run compares
-- with the shared database when it is due and waits for them if anything widened. What
-- such a run said is sealed to its owner's public key (`job_runs.sealed_result`) until
-- their next login moves it into the task's conversation in their own file.
ALTER TABLE jobs ADD COLUMN task_agent TEXT CHECK (task_agent IS NULL OR (kind = 'task' AND readable_while_away = 1));
ALTER TABLE jobs ADD COLUMN task_model TEXT CHECK (task_model IS NULL OR task_agent IS NOT NULL);
ALTER TABLE jobs ADD COLUMN accepted TEXT CHECK (accepted IS NULL OR (kind = 'task' AND readable_while_away = 1));
ALTER TABLE job_runs ADD COLUMN sealed_result BLOB;
CREATE INDEX job_runs_sealed ON job_runs (job_id) WHERE sealed_result IS NOT NULL;
