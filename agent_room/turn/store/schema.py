"""The schema, as an ordered list of forward migrations.

``PRAGMA user_version`` holds the number of migrations applied. A migration is never
edited once released: a change to the schema is a new entry at the end, here and in
``store.postgres_schema`` (the same change in PostgreSQL's terms).
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: sessions, messages, handovers and the append-only audit log.
    """
    CREATE TABLE sessions (
        rowid INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        session_id TEXT UNIQUE,
        agent TEXT NOT NULL DEFAULT 'claude',
        state TEXT NOT NULL DEFAULT 'idle',
        pane TEXT,
        pid INTEGER,
        pid_start INTEGER,
        cwd TEXT,
        transcript_path TEXT,
        parent TEXT,
        depth INTEGER NOT NULL DEFAULT 0,
        subagent INTEGER NOT NULL DEFAULT 0,
        started_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        ended_at REAL,
        left_at REAL,
        stop_blocks INTEGER NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX sessions_holder ON sessions(name) WHERE left_at IS NULL;
    CREATE INDEX sessions_pane ON sessions(pane) WHERE left_at IS NULL;

    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        sender TEXT NOT NULL,
        recipient TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at REAL NOT NULL,
        status TEXT NOT NULL,
        delivered_at REAL,
        read_at REAL,
        failure TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        link_id INTEGER
    );
    CREATE INDEX messages_unread ON messages(recipient, id) WHERE read_at IS NULL;

    CREATE TABLE handovers (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id),
        state TEXT NOT NULL,
        requested_at REAL NOT NULL,
        decided_at REAL,
        reason TEXT,
        decided_by TEXT,
        fields TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX handovers_pending ON handovers(state) WHERE state = 'pending';

    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT,
        message_id INTEGER,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    """,
    # 2: turns of each session (prompt kind, final output) and Claude's own subagents.
    """
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        prompt_id TEXT,
        kind TEXT NOT NULL,
        prompt TEXT NOT NULL DEFAULT '',
        started_at REAL NOT NULL,
        stopped_at REAL,
        output TEXT,
        failed INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX turns_session ON turns(session_id, id);

    CREATE TABLE subagents (
        agent_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        agent_type TEXT,
        transcript_path TEXT,
        stopped_at REAL NOT NULL,
        output TEXT
    );
    CREATE INDEX subagents_session ON subagents(session_id);
    """,
    # 3: delivery: the tmux server of each session, the deliverer's lease, typed nudges
    # awaiting their receipt, and why a recipient's messages are held.
    """
    ALTER TABLE sessions ADD COLUMN tmux_socket TEXT;

    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        pid INTEGER,
        pid_start INTEGER,
        expires_at REAL NOT NULL
    );

    CREATE TABLE nudges (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        recipient TEXT NOT NULL,
        session_id TEXT,
        message_ids TEXT NOT NULL,
        text TEXT NOT NULL,
        at REAL NOT NULL,
        last_try REAL NOT NULL,
        enters INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'open'
    );
    CREATE INDEX nudges_open ON nudges(recipient) WHERE state = 'open';

    CREATE TABLE delivery_notes (
        name TEXT PRIMARY KEY,
        note TEXT NOT NULL,
        at REAL NOT NULL
    );
    """,
    # 4: links between two sessions (keyed by session id: a resumed session keeps them),
    # the verdict on each turn of each link (its primary key makes a crossing happen
    # once, however many injectors race), timers with intent, and the room's settings.
    """
    CREATE TABLE links (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        initiator TEXT NOT NULL,
        initiator_session TEXT NOT NULL,
        responder TEXT NOT NULL,
        responder_session TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'open',
        budget INTEGER NOT NULL,
        crossings INTEGER NOT NULL DEFAULT 0,
        start_turn INTEGER NOT NULL DEFAULT 0,
        opened_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        frozen_at REAL,
        freeze_reason TEXT,
        closed_at REAL,
        close_reason TEXT,
        closed_by TEXT
    );
    CREATE UNIQUE INDEX links_live_pair ON links(
        min(initiator_session, responder_session), max(initiator_session, responder_session)
    ) WHERE state != 'closed';

    CREATE TABLE link_turns (
        link_id INTEGER NOT NULL REFERENCES links(id),
        turn_id INTEGER NOT NULL,
        last_turn INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        outcome TEXT NOT NULL,
        message_id INTEGER,
        at REAL NOT NULL,
        PRIMARY KEY (link_id, turn_id)
    );
    CREATE INDEX link_turns_cursor ON link_turns(link_id, session_id, last_turn);

    CREATE TABLE timers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        session_id TEXT,
        intent TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at REAL NOT NULL,
        due_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        fired_at REAL,
        message_id INTEGER
    );
    CREATE INDEX timers_due ON timers(due_at) WHERE state = 'pending';

    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 5: indexes for the questions asked on every pass, each of which scanned the whole
    # message history (once per session, or per link) without them: what is queued for a
    # recipient (the deliverer), what a link holds (the reader, thaw, close) and what was
    # delivered to a name during a turn (the injector).
    """
    CREATE INDEX messages_queued ON messages(recipient, id) WHERE status = 'queued';
    CREATE INDEX messages_link ON messages(link_id, id) WHERE link_id IS NOT NULL;
    CREATE INDEX messages_delivered ON messages(recipient, delivered_at)
        WHERE delivered_at IS NOT NULL;
    """,
    # 6: the room's memory: what the memory worker drew from each session's transcript
    # (read by byte offset: the cursor), searchable with FTS5 (bm25), and the context
    # prepared for each handover; the ledger finds a recipient's sessions by name.
    """
    CREATE TABLE memory_cursors (
        session_id TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        inode INTEGER,
        offset INTEGER NOT NULL DEFAULT 0,
        seq INTEGER NOT NULL DEFAULT 0,
        problem TEXT,
        updated_at REAL NOT NULL
    );

    CREATE TABLE memory_items (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        path TEXT,
        at TEXT
    );
    CREATE INDEX memory_items_session ON memory_items(session_id, seq);
    CREATE VIRTUAL TABLE memory_fts USING fts5(
        text, content='memory_items', content_rowid='id'
    );
    CREATE TRIGGER memory_items_indexed AFTER INSERT ON memory_items BEGIN
        INSERT INTO memory_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER memory_items_unindexed AFTER DELETE ON memory_items BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;

    CREATE TABLE handover_contexts (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id),
        session_id TEXT,
        text TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        items INTEGER NOT NULL,
        problem TEXT,
        built_at REAL NOT NULL,
        attached_at REAL
    );

    CREATE INDEX sessions_name ON sessions(name);
    """,
    # delivery retries and read state: when a message's nudge failed (it is nudged again
    # a while later); a body handed to the model through a hook is read, also in rooms
    # that delivered before this rule.
    """
    ALTER TABLE messages ADD COLUMN failed_at REAL;
    UPDATE messages SET read_at = delivered_at
        WHERE status = 'delivered' AND read_at IS NULL AND delivered_at IS NOT NULL;
    """,
    # resume checkpoints: how far a session's memory (its items, the room's messages)
    # went when one was taken; the context is built when a session resumes from it.
    """
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        note TEXT,
        cwd TEXT,
        upto_seq INTEGER NOT NULL,
        upto_message INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX checkpoints_session ON checkpoints(session_id, id);
    CREATE INDEX checkpoints_name ON checkpoints(name, id);
    """,
    # the intercom's headless conversations, per repository (seed 000): who asked
    # (the parent), the topic, use, cost and turns; ``claimed_until`` marks one an ask
    # is running in, so that a second ask never resumes it at the same time.
    """
    CREATE TABLE intercom_sessions (
        session_id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        label TEXT NOT NULL,
        topic TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_used_at REAL NOT NULL,
        parent TEXT NOT NULL,
        asker TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0,
        last_message TEXT NOT NULL DEFAULT '',
        cost_usd REAL NOT NULL DEFAULT 0,
        turns INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'active',
        claimed_until REAL
    );
    CREATE INDEX intercom_sessions_repo ON intercom_sessions(repo, last_used_at);
    """,
    # the shared entity registry: one entity per type and name across agents and
    # sessions, who mentioned it when, conflicts left to the operator (the manual merge
    # strategy); and which file each session changed when, to warn of two agents
    # changing one file.
    """
    CREATE TABLE entities (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        key TEXT NOT NULL,
        context TEXT NOT NULL DEFAULT '',
        confidence REAL NOT NULL DEFAULT 0.5,
        version INTEGER NOT NULL DEFAULT 1,
        merge_count INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        updated_by TEXT
    );
    CREATE UNIQUE INDEX entities_key ON entities(type, key);

    CREATE TABLE entity_mentions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        entity_id INTEGER NOT NULL,
        agent TEXT NOT NULL,
        session_id TEXT,
        source TEXT NOT NULL,
        context TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL
    );
    CREATE INDEX entity_mentions_entity ON entity_mentions(entity_id, at);

    CREATE TABLE entity_conflicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        entity_id INTEGER NOT NULL,
        agent TEXT NOT NULL,
        context TEXT NOT NULL,
        confidence REAL NOT NULL,
        at REAL NOT NULL,
        resolved_at REAL,
        resolution TEXT
    );
    CREATE INDEX entity_conflicts_open ON entity_conflicts(entity_id) WHERE resolved_at IS NULL;

    CREATE TABLE file_changes (
        path TEXT NOT NULL,
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        at REAL NOT NULL,
        warned_at REAL,
        PRIMARY KEY (path, session_id)
    );
    CREATE INDEX file_changes_at ON file_changes(path, at);
    """,
    # the fleet-wide loop breaker: a hold per loop found (its cycle as names), which
    # messages each holds, and the index its check reads on every send: a sender's
    # messages within the window.
    """
    CREATE TABLE loop_holds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL,
        detected_at REAL NOT NULL,
        released_at REAL,
        released_by TEXT,
        dropped INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE loop_held (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id),
        hold_id INTEGER NOT NULL REFERENCES loop_holds(id)
    );
    CREATE INDEX loop_held_hold ON loop_held(hold_id);
    CREATE INDEX messages_sent ON messages(sender, created_at);
    """,
    # Claude Code's messaging socket: how each message was delivered (tmux, native,
    # stop ...), and every frame sent through a socket with the status its client sent
    # back (held, delivered, denied, expired, refused, dropped).
    """
    ALTER TABLE messages ADD COLUMN via TEXT;
    CREATE TABLE native_sends (
        native_id TEXT PRIMARY KEY,
        nudge_id INTEGER NOT NULL,
        recipient TEXT NOT NULL,
        session_id TEXT,
        socket TEXT NOT NULL,
        sent_at REAL NOT NULL,
        status TEXT,
        reason TEXT,
        status_at REAL
    );
    CREATE INDEX native_sends_nudge ON native_sends(nudge_id);
    """,
    # hosts: the machine each session runs on and each lease's holder runs on (liveness
    # is judged only there), and when each host's watcher was last seen.
    """
    ALTER TABLE sessions ADD COLUMN host TEXT;
    ALTER TABLE leases ADD COLUMN host TEXT;
    CREATE TABLE hosts (
        host TEXT PRIMARY KEY,
        seen_at REAL NOT NULL,
        pid INTEGER
    );
    """,
    # the room's change count: every write transaction moves it, except a lease's or a
    # host's renewal, so a watcher woken by a renewal alone sees nothing changed
    """
    CREATE TABLE room_changes (
        id INTEGER PRIMARY KEY,
        n INTEGER NOT NULL
    );
    """,
    # usage: every model request of every agent as its client recorded it (tokens, model,
    # cost at the price of the moment, unknown for a model without one), the host that
    # read it, the turn it belongs to (a link's cost is its turns'); each record file's
    # read cursor; budgets per agent or for the room, and the levels each reached in a span.
    """
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        name TEXT,
        host TEXT,
        client TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'turn',
        ref TEXT,
        model TEXT,
        input INTEGER NOT NULL DEFAULT 0,
        output INTEGER NOT NULL DEFAULT 0,
        cache_read INTEGER NOT NULL DEFAULT 0,
        cache_write INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL,
        at REAL NOT NULL,
        turn_id INTEGER
    );
    CREATE UNIQUE INDEX usage_key ON usage(session_id, key);
    CREATE INDEX usage_at ON usage(at);
    CREATE INDEX usage_name ON usage(name, at);
    CREATE INDEX usage_turn ON usage(turn_id) WHERE turn_id IS NOT NULL;

    CREATE TABLE usage_cursors (
        path TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        inode INTEGER,
        offset INTEGER NOT NULL DEFAULT 0,
        model TEXT,
        problem TEXT,
        updated_at REAL NOT NULL
    );

    CREATE TABLE budgets (
        scope TEXT PRIMARY KEY,
        limit_usd REAL NOT NULL,
        span REAL NOT NULL,
        set_at REAL NOT NULL,
        set_by TEXT NOT NULL
    );
    CREATE TABLE budget_marks (
        scope TEXT NOT NULL,
        span_start REAL NOT NULL,
        level INTEGER NOT NULL,
        spent_usd REAL NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (scope, span_start, level)
    );
    """,
    # worktrees: the git worktree the room made for an agent started with --worktree,
    # on its own branch, with the base it started from (what its diff compares with)
    """
    CREATE TABLE worktrees (
        name TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        path TEXT NOT NULL,
        branch TEXT NOT NULL,
        base_branch TEXT,
        base_commit TEXT NOT NULL,
        created_at REAL NOT NULL,
        removed_at REAL
    );
    """,
    # the turn breaker: who caused each turn (the peer whose message started it, or the
    # room for its own prompts), and why a loop hold holds (NULL: messages in a cycle;
    # 'turns': turns the room caused, for one agent or a pair)
    """
    ALTER TABLE turns ADD COLUMN cause TEXT;
    ALTER TABLE loop_holds ADD COLUMN reason TEXT;
    CREATE INDEX turns_caused ON turns(session_id, started_at) WHERE cause IS NOT NULL;
    """,
)
"""Each entry moves the schema from version ``index`` to ``index + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
