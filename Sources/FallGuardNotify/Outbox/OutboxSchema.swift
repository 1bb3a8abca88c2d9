import GRDB

/// The outbox's SQLite file (a ``SQLiteStore``: WAL, `synchronous=FULL`) and its tables.
///
/// - `alert`: each alert as enqueued, with its rendered message (escalation resends it).
/// - `delivery`: one row per message for one channel and recipient; `state` is `pending`,
///   `sent` or `failed`; `idempotency_key` is unique and never changes.
/// - `incident`: the escalation state of each alarm: which contact is responsible, when the
///   next one is tried, who acknowledged, and the contact list it escalates along (as it was
///   when the alarm began: a reload that reorders the contacts changes the next incident).
/// - `reply`: each SMS reply read from the provider, with the incident it was taken for and what
///   it meant (`acknowledged`, `other`, `other-incident`, `too-early`, `unknown-sender`).
enum OutboxSchema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE alert (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uid TEXT NOT NULL UNIQUE,
                    incident TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    test INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    sent_at TEXT NOT NULL,
                    alert_json TEXT NOT NULL,
                    message_json TEXT NOT NULL
                );
                CREATE TABLE delivery (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    alert_id INTEGER NOT NULL REFERENCES alert(id),
                    incident TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL UNIQUE,
                    channel TEXT NOT NULL,
                    role TEXT NOT NULL,
                    contact_index INTEGER,
                    delivery_json TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    attempts INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL,
                    next_attempt_at REAL NOT NULL,
                    deadline REAL NOT NULL,
                    last_attempt_at REAL,
                    finished_at REAL,
                    last_error TEXT,
                    receipt TEXT
                );
                CREATE INDEX delivery_due ON delivery(state, next_attempt_at);
                CREATE INDEX delivery_incident ON delivery(incident);
                CREATE TABLE incident (
                    incident TEXT PRIMARY KEY,
                    alert_id INTEGER NOT NULL REFERENCES alert(id),
                    route TEXT NOT NULL,
                    responsible INTEGER NOT NULL,
                    escalation_due REAL,
                    acknowledged_by TEXT,
                    acknowledged_at REAL
                );
                """)
        }
        m.registerMigration("v2: incident contacts") { db in
            // Rows from before v2 have none and escalate along the configured list.
            try db.execute(sql: "ALTER TABLE incident ADD COLUMN contacts_json TEXT")
        }
        m.registerMigration("v3: provider ids, call outcomes, replies") { db in
            // The provider's id of a sent delivery (a call's SID, followed until it ends), what
            // became of it (`reached`, or `not-reached: no-answer`), and every SMS reply read.
            try db.execute(sql: """
                ALTER TABLE delivery ADD COLUMN provider_id TEXT;
                ALTER TABLE delivery ADD COLUMN outcome TEXT;
                ALTER TABLE delivery ADD COLUMN outcome_at REAL;
                CREATE TABLE reply (
                    sid TEXT PRIMARY KEY,
                    incident TEXT,
                    contact TEXT,
                    from_number TEXT NOT NULL,
                    body TEXT NOT NULL,
                    sent_at REAL NOT NULL,
                    meaning TEXT NOT NULL,
                    read_at REAL NOT NULL
                );
                """)
        }
        return m
    }
}
