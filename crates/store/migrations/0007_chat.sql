-- The tutoring chat. A conversation belongs to one user; its messages keep their typed parts
-- as one JSON array (read whole, never queried inside), beside flags of what kinds of content
-- they hold so lists and search need not parse them. Each chat turn is also a run (kind
-- 'chat') whose events replay the reply; `run_id` points at it.

CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    -- Empty until the first user message names it.
    title      TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- A user's list, most recently active first.
CREATE INDEX conversations_user ON conversations (user_id, updated_at);

CREATE TABLE chat_messages (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- Order within the conversation, from 0; given out inside the writing transaction.
    pos             INTEGER NOT NULL,
    -- user | assistant
    role            TEXT NOT NULL,
    -- JSON array of Part.
    parts           TEXT NOT NULL,
    has_diagram     INTEGER NOT NULL DEFAULT 0,
    has_quiz        INTEGER NOT NULL DEFAULT 0,
    has_flashcards  INTEGER NOT NULL DEFAULT 0,
    has_videos      INTEGER NOT NULL DEFAULT 0,
    has_code        INTEGER NOT NULL DEFAULT 0,
    -- JSON array of the names of the tools that took part in the reply (feedback per tool).
    tools           TEXT NOT NULL DEFAULT '[]',
    run_id          TEXT,
    -- The user's 1 (up) or -1 (down) on an assistant's reply.
    feedback        INTEGER,
    created_at      TEXT NOT NULL,
    UNIQUE (conversation_id, pos)
);

-- Each user's deck, with the spaced-repetition scheduler's state per card.
CREATE TABLE flashcards (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL,
    front          TEXT NOT NULL,
    back           TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    due            TEXT NOT NULL,
    stability      REAL NOT NULL,
    difficulty     REAL NOT NULL,
    elapsed_days   INTEGER NOT NULL,
    scheduled_days INTEGER NOT NULL,
    reps           INTEGER NOT NULL,
    lapses         INTEGER NOT NULL,
    -- new | learning | review | relearning
    state          TEXT NOT NULL,
    last_review    TEXT,
    -- A card the tutor makes again (the same front) is not added to the deck twice.
    UNIQUE (user_id, front)
);
-- The cards due for review, soonest first.
CREATE INDEX flashcards_due ON flashcards (user_id, due);
