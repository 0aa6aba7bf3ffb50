-- One run log. A run's kind (build, task, chat) is a column of its own: task runs were builds
-- with template 'task' and now have kind 'task' and no template. A run ends through the store
-- (its record and its `complete` in one transaction), so every run that has ended has a
-- `complete`: the ones that ended before this version without one (a kill between the two
-- writes) get it now, as their record says.

ALTER TABLE builds ADD COLUMN kind TEXT NOT NULL DEFAULT 'build';
UPDATE builds SET kind = 'task', template = '' WHERE template = 'task';

INSERT INTO events (build_id, seq, ts, type, data)
SELECT b.id,
       COALESCE((SELECT MAX(seq) FROM events e WHERE e.build_id = b.id), 0) + 1,
       COALESCE(b.finished_at, b.started_at),
       'complete',
       json_object(
           'seq', COALESCE((SELECT MAX(seq) FROM events e WHERE e.build_id = b.id), 0) + 1,
           'build', b.id,
           'ts', COALESCE(b.finished_at, b.started_at),
           'type', 'complete',
           'success', json(CASE WHEN b.status = 'published' THEN 'true' ELSE 'false' END),
           'files', json(b.files),
           'iterations', b.turns,
           'fix_attempts', b.fix_attempts,
           'duration_ms', COALESCE(b.duration_ms, 0),
           'input_tokens', b.input_tokens,
           'output_tokens', b.output_tokens,
           'cached_tokens', b.cached_tokens,
           'cost_usd', b.cost_usd,
           'browser_checked', json('false'),
           'browser_reason', NULL)
FROM builds b
WHERE b.status IN ('published', 'failed')
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.build_id = b.id AND e.type = 'complete');
