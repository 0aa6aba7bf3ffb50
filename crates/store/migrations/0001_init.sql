-- wright's embedded store. Lists are JSON arrays in TEXT columns; note_keys indexes the ones
-- retrieval searches so a lookup never scans every note.

CREATE TABLE builds (
    id            TEXT PRIMARY KEY,
    parent_id     TEXT,
    prompt        TEXT NOT NULL,
    template      TEXT NOT NULL,
    lang          TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    status        TEXT NOT NULL,
    end_reason    TEXT,
    fix_attempts  INTEGER NOT NULL DEFAULT 0,
    turns         INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    duration_ms   INTEGER,
    files         TEXT NOT NULL DEFAULT '[]',
    report        TEXT,
    started_at    TEXT NOT NULL,
    finished_at   TEXT
);
CREATE INDEX builds_started ON builds (started_at);

CREATE TABLE events (
    build_id TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    ts       TEXT NOT NULL,
    type     TEXT NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (build_id, seq)
) WITHOUT ROWID;

CREATE TABLE turns (
    build_id      TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    phase         TEXT NOT NULL,
    role          TEXT NOT NULL,
    message       TEXT NOT NULL,
    ts            TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (build_id, idx)
) WITHOUT ROWID;

CREATE TABLE attempts (
    id            TEXT PRIMARY KEY,
    build_id      TEXT NOT NULL,
    template      TEXT NOT NULL,
    success       INTEGER NOT NULL,
    iterations    INTEGER NOT NULL,
    duration_ms   INTEGER NOT NULL,
    notes_applied TEXT NOT NULL DEFAULT '[]',
    errors        TEXT NOT NULL DEFAULT '[]',
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);
CREATE INDEX attempts_build ON attempts (build_id);
CREATE INDEX attempts_created ON attempts (created_at);

CREATE TABLE notes (
    id             TEXT PRIMARY KEY,
    trigger        TEXT NOT NULL,
    trigger_type   TEXT NOT NULL,
    lesson         TEXT NOT NULL,
    libraries      TEXT NOT NULL DEFAULT '[]',
    error_patterns TEXT NOT NULL DEFAULT '[]',
    tags           TEXT NOT NULL DEFAULT '[]',
    help_count     INTEGER NOT NULL DEFAULT 0,
    fail_count     INTEGER NOT NULL DEFAULT 0,
    confidence     REAL NOT NULL DEFAULT 0.5,
    status         TEXT NOT NULL DEFAULT 'CANDIDATE',
    source_build   TEXT,
    source_error   TEXT,
    source_fix     TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX notes_status ON notes (status, confidence DESC);

-- Only live (non-deprecated) notes have keys. `rank` mirrors the note's confidence so a lookup
-- reads the best few notes of a common key from the index instead of every note that has it.
CREATE TABLE note_keys (
    key     TEXT NOT NULL,
    note_id TEXT NOT NULL,
    rank    REAL NOT NULL,
    PRIMARY KEY (key, note_id)
) WITHOUT ROWID;
CREATE INDEX note_keys_note ON note_keys (note_id);
CREATE INDEX note_keys_rank ON note_keys (key, rank DESC, note_id);

CREATE TABLE note_uses (
    build_id TEXT NOT NULL,
    note_id  TEXT NOT NULL,
    phase    TEXT NOT NULL,
    ts       TEXT NOT NULL,
    PRIMARY KEY (build_id, note_id)
) WITHOUT ROWID;
CREATE INDEX note_uses_note ON note_uses (note_id);

CREATE TABLE usage_log (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    build_id      TEXT NOT NULL,
    phase         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost_usd      REAL NOT NULL,
    ts            TEXT NOT NULL
);
CREATE INDEX usage_build ON usage_log (build_id);
