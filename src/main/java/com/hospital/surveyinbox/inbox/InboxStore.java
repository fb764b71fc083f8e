package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * All SQL that changes an inbox row. Every transition is a single conditional UPDATE whose row count
 * (or RETURNING row) decides what happened, so racing workers, duplicate events and the redelivery job
 * can never apply the same transition twice. Ages are compared on the database clock.
 *
 * <p>Used by {@code routes/inbox-receive.camel.yaml} (steps {@code inbox-receive-store} and
 * {@code inbox-receive-store-draining}) and by the
 * processing, reply and redelivery beans.
 */
@Component("inboxStore")
public class InboxStore implements DisposableBean {

    /**
     * One row (payload in clear), autocommit: the subject's lock (see {@link #SUBJECT_LOCKS}) is taken before the
     * identity's nextval, in the same statement.
     */
    static final String INSERT_ONE = """
            INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload, payload_key_id, idempotency_key, trace_parent)
            SELECT ?, ?, ?, NULL, ?, ?
              FROM (SELECT pg_advisory_xact_lock(%d, hashtext(?))) AS subject_lock
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """.formatted(InboxStore.SUBJECT_LOCK_SPACE);

    /** First key of the subject locks: keeps them apart from any other advisory lock in the database. */
    public static final int SUBJECT_LOCK_SPACE = 0x1B0C;

    /**
     * A lone row's subject locked until its transaction ends (a group of several tries its subjects' locks instead,
     * {@link #NEXT_IDS_TRIED}: nothing waits, so nothing can deadlock). Why: the ordering guard compares ids, and an id is taken before its row
     * commits. Without the lock, pod A takes id 100 for a subject, pod B id 101 for the same subject, B commits
     * first, and 101's claim cannot see the uncommitted 100: it registers first. With it, B's transaction waits
     * for A's commit before it takes its id, so a subject's ids are in commit order. Within one pod a subject's
     * rows already share a lane; this is for two pods. Bounded by the connection's
     * query timeout like the rest of the group.
     */
    static final String SUBJECT_LOCKS = """
            SELECT count(pg_advisory_xact_lock(%d, h)) AS locked
              FROM (SELECT DISTINCT hashtext(s) AS h
                      FROM unnest(CAST(? AS text[])) AS s
                     ORDER BY 1) AS subjects""".formatted(SUBJECT_LOCK_SPACE);

    /**
     * Ids for a group, taken from the identity's own sequence before the rows are written, once the group's
     * subjects are locked ({@link #SUBJECT_LOCKS}: the locks come first, so the ids follow them); the same round
     * trip bounds the rest of the group's statements ({@code statement_timeout} for this transaction only) so
     * a slow database cancels the group (nothing stored, 503) before its receptions' deadline instead of
     * committing it after they were answered.
     */
    static final String NEXT_IDS = """
            SELECT nextval(pg_get_serial_sequence('inbox_message', 'id')),
                   set_config('statement_timeout', ?, true),
                   pg_backend_pid() AS pid,
                   pg_current_xact_id()::text AS xid,
                   (SELECT CAST(backend_start AS text) FROM pg_stat_get_activity(pg_backend_pid())) AS backend_start,
                   CAST(pg_postmaster_start_time() AS text) AS server_start
              FROM (%s) AS subject_locks,
                   generate_series(1, ?)
            """.formatted(SUBJECT_LOCKS);

    /**
     * The same for a group of several rows, without waiting for any subject's lock: each lock is tried
     * ({@code pg_try_advisory_xact_lock}), and only the members whose subject was locked get an id (in order: null
     * for the others, which are written alone afterwards, waiting for their own subject: {@link GroupInsert}). A
     * subject held elsewhere — another pod's group mid-commit, or a pod gone mid-transaction whose session lingers
     * until the server's idle-in-transaction timeout — made the whole group wait for the lock timeout and fail:
     * up to a group of receptions answered 503 for one subject, and again at every retry of that subject, which
     * always shares their lane. Parameters: the members' subjects (in order, one per member), the statement bound.
     */
    static final String NEXT_IDS_TRIED = """
            WITH members AS (
                SELECT hashtext(s) AS h, n
                  FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS m(s, n)
            ), locks AS MATERIALIZED (
                SELECT h, pg_try_advisory_xact_lock(%d, h) AS held
                  FROM (SELECT DISTINCT h FROM members ORDER BY 1) AS subjects
            )
            SELECT CASE WHEN locks.held THEN nextval(pg_get_serial_sequence('inbox_message', 'id')) END AS id,
                   set_config('statement_timeout', ?, true),
                   pg_backend_pid() AS pid,
                   pg_current_xact_id()::text AS xid,
                   (SELECT CAST(backend_start AS text) FROM pg_stat_get_activity(pg_backend_pid())) AS backend_start,
                   CAST(pg_postmaster_start_time() AS text) AS server_start
              FROM members
              JOIN locks ON locks.h = members.h
             ORDER BY members.n
            """.formatted(SUBJECT_LOCK_SPACE);

    /**
     * The outcome of a group whose COMMIT got no answer, asked on another connection: its backend is ended
     * first if it is still there (so the transaction can no longer commit later: the COMMIT not arrived yet, or
     * its deferred work still running), then the transaction's status is read from the commit log:
     * {@code committed}, {@code aborted}, or null when it is too old. Ended: a backend idle in its transaction (the
     * COMMIT has not arrived), or one running the COMMIT in a wait that only comes before its commit record and takes
     * the end at once (a heavyweight lock or a buffer pin, a sleep: deferred work; ended there it aborts). Any other
     * state is waited for within a bound and counted as not committed while it waits: past the start of its commit
     * record a backend writes and flushes WAL, updates the commit log (XactGroupUpdate, XactSLRU, SlruRead…), may
     * sleep in a commit_delay and waits for the synchronous standby, or runs on the CPU, and an end that reaches it
     * there makes it commit on the primary alone: the group was answered "stored" for rows a failover to that standby
     * loses (UnansweredCommitTest). An allow-list, not a deny-list: a deny-list of three waits missed PostgreSQL 17's
     * spelling (WalSync) and the waits it did not name.
     */
    static final String END_BACKENDS = """
            SELECT pg_terminate_backend(a.pid)
              FROM pg_stat_activity a
              JOIN unnest(CAST(? AS int[]), CAST(? AS text[])) AS g(pid, started)
                ON a.pid = g.pid AND a.backend_start = CAST(g.started AS timestamptz)
             WHERE a.backend_xid IS NOT NULL
               AND (a.state IN ('idle in transaction', 'idle in transaction (aborted)')
                    OR a.wait_event_type IN ('Lock', 'BufferPin')
                    OR a.wait_event = 'PgSleep')
            """;

    /** {@link #END_BACKENDS} for these groups' backends, in one statement (the unsettled follow-up ends many at once). */
    static void endBackends(org.springframework.jdbc.core.JdbcOperations other, List<GroupBackend> groups) {
        Object[] pids = groups.stream().map(GroupBackend::pid).toArray();
        Object[] starts = groups.stream().map(GroupBackend::backendStart).toArray();
        other.query(END_BACKENDS, ps -> {
            ps.setArray(1, ps.getConnection().createArrayOf("int4", pids));
            ps.setArray(2, ps.getConnection().createArrayOf("text", starts));
        }, rs -> { });
    }

    static final String BACKEND_GONE = """
            SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity
                                WHERE pid = ? AND backend_start = CAST(? AS timestamptz) AND backend_xid IS NOT NULL)
            """;

    /**
     * Whether the settling connection reached the server the group ran on (its postmaster's start): after a failover
     * or a restart of another server, the group's pid can belong to another session there (ended by
     * {@link #END_BACKENDS}, a stranger's transaction lost), and its xid to another transaction (read as "committed":
     * rows answered stored that were never written). The group's backend is told apart from a later one with its pid
     * by its start ({@code backend_start}).
     */
    static final String SAME_SERVER = """
            SELECT pg_postmaster_start_time() = CAST(? AS timestamptz)
            """;

    static final String TRANSACTION_STATUS = """
            SELECT pg_xact_status(CAST(? AS xid8))
            """;

    /**
     * A group's rows under the ids {@link #NEXT_IDS} took (hence {@code OVERRIDING SYSTEM VALUE} on the
     * identity column), one {@code (?, ?, ?, ?, ?, ?, ?)} tuple per row appended, then {@link #INSERT_GROUP_TAIL}.
     */
    static final String INSERT_GROUP_HEAD = """
            INSERT INTO inbox_message (id, srvy_drawup_no, msg_type, payload, payload_key_id, idempotency_key, trace_parent)
            OVERRIDING SYSTEM VALUE VALUES\s""";

    /**
     * The group's COMMIT is not cut by the group's statement timeout (set to 0 in the same round trip): cancelled
     * while waiting for a synchronous standby, a COMMIT only warns and stays committed on the primary alone. It
     * is bounded by the socket timeout instead, and an unanswered COMMIT is settled ({@link #TRANSACTION_STATUS}).
     */
    static final String INSERT_GROUP_TAIL = """
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id, set_config('statement_timeout', '0', true)
            """;

    /** The row an Idempotency-Key already names (a replay): run inside the group's transaction, or alone. */
    static final String FIND_BY_IDEMPOTENCY_KEY = """
            SELECT id, srvy_drawup_no, msg_type, payload, payload_key_id
              FROM inbox_message
             WHERE idempotency_key = ?
            """;

    /** Reads a replay's body and its first row's to compare them as JSON values ({@link #otherMessage}). */
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
    private final io.micrometer.core.instrument.Counter keyReused;
    /** The receptions' own connections ({@link ReceptionConnections}): the inserts and what they read meanwhile. */
    private final NamedParameterJdbcTemplate receptionJdbc;
    /** Longest one statement on a reception connection may take (below the socket timeout). */
    private final java.time.Duration receptionStatementBound;
    private final PayloadCipher cipher;
    private final Timer insertTimer;
    private final GroupInsert groupInsert;
    /** Receptions answered 503 whose write got no answer: counted, named, a group's followed up. */
    private final UnsettledReceptions unsettled;
    private final java.time.Duration storeTimeout;
    private TraceContext traces = TraceContext.NONE;

    @org.springframework.beans.factory.annotation.Autowired
    public InboxStore(NamedParameterJdbcTemplate jdbc, ReceptionConnections receptionConnections,
                      PayloadCipher cipher, MeterRegistry meters, AdapterProperties properties) {
        this(jdbc, new NamedParameterJdbcTemplate(receptionConnections.dataSource()), receptionConnections.statementBound(),
                cipher, meters, properties);
    }

    @org.springframework.beans.factory.annotation.Autowired(required = false)
    void setTraceContext(TraceContext traces) {
        this.traces = traces;
    }

    /** Receptions on the same connections as everything else (tests that build a store by hand). */
    public InboxStore(NamedParameterJdbcTemplate jdbc, PayloadCipher cipher, MeterRegistry meters,
                      AdapterProperties properties) {
        this(jdbc, jdbc, java.time.Duration.ofSeconds(3), cipher, meters, properties);
    }

    private InboxStore(NamedParameterJdbcTemplate jdbc, NamedParameterJdbcTemplate receptionJdbc,
                       java.time.Duration receptionStatementBound,
                       PayloadCipher cipher, MeterRegistry meters, AdapterProperties properties) {
        this.receptionJdbc = receptionJdbc;
        this.unsettled = new UnsettledReceptions(jdbc.getJdbcOperations(), meters);
        this.receptionStatementBound = receptionStatementBound;
        this.cipher = cipher;
        this.storeTimeout = properties.getReception().getStoreTimeout();
        this.keyReused = io.micrometer.core.instrument.Counter.builder("adapter.reception.idempotency.key.reused")
                .description("receptions answered as a replay of an Idempotency-Key whose first row is another message"
                        + " (another srvyDrawupNo, msgType or body): nothing stored for them").register(meters);
        this.insertTimer = Timer.builder("adapter.inbox.insert")
                .description("reception's wait until its inbox row is committed (insert + commit, grouped or not)")
                .serviceLevelObjectives(com.hospital.surveyinbox.config.LatencyBuckets.RECEPTION).register(meters);
        AdapterProperties.GroupInsert group = properties.getReception().getGroupInsert();
        this.groupInsert = group.isEnabled()
                ? new GroupInsert(group.getWriters(), group.getMaxRows(), this::acceptGroup, this::acceptOne, meters,
                        properties.getReception().getStoreTimeout())
                : null;
    }

    /**
     * Stores a validated message; returns once the row is committed. With an idempotency key already
     * seen, returns the earlier row and stores nothing. With the group insert on, the row is committed
     * together with other receptions waiting at the same moment ({@link GroupInsert}).
     */
    public Acceptance accept(ReceivedMessage message) {
        long start = System.nanoTime();
        // the row keeps the trace it was received in: its events carry it, so the worker continues that trace
        ReceivedMessage traced = message.traceParent() == null ? message.inTrace(traces.current()) : message;
        Acceptance accepted;
        try {
            accepted = groupInsert != null ? groupInsert.accept(traced) : acceptOne(traced);
        } finally {
            insertTimer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
        String other = accepted.keyReusedBy(); // null for a fresh row and a true replay
        if (other != null) {
            // CONTRACT: a key seen is answered with its first row and stores nothing; a key reused for another
            // message (a sender's key generator colliding, a corrected message sent again under its first key) would
            // lose that message without a trace
            keyReused.increment();
            org.slf4j.LoggerFactory.getLogger(InboxStore.class).warn(
                    "Idempotency-Key reused by another message ({}): inbox {} ({} {}) answered for {} {}; nothing stored for it",
                    other, accepted.inboxId(), accepted.srvyDrawupNo(), accepted.msgType(), message.srvyDrawupNo(), message.msgType());
        }
        return accepted;
    }

    /**
     * One row: one autocommit statement that takes the subject's lock, then the row (one round trip; the
     * transactional form with a settled COMMIT cost the lone reception 40 % of its throughput in the benchmark).
     * With encryption on, a group of one: the ciphertext is bound to the row id, which must be taken first.
     * The admitted case lives here: an autocommit COMMIT that outlives the socket timeout (an fsync stall, a
     * synchronous standby) gets a 503 and may still commit (counted, named and followed up) — a COMMIT cut on the wire,
     * which the production-shape checker counts; one whose backend is ended while it waits for the standby (a
     * switchover: committed locally) is found by a quiet follow-up, then counted and named. A group's unanswered COMMIT is settled instead ({@link #committedAfterAll}).
     */
    Acceptance acceptOne(ReceivedMessage message) {
        // twice at most: a replay whose first row retention deleted between the insert and the read (the key is free
        // again) is stored as a new row, as it would have been a moment later; it was a 500
        if (cipher.enabled()) {
            try {
                return acceptGroup(List.of(message), storeTimeout).get(0);
            } catch (ReplayedRowGone gone) {
                return acceptGroup(List.of(message), storeTimeout).get(0);
            }
        }
        for (int tries = 1; ; tries++) {
            List<Long> ids;
            try {
                ids = receptionJdbc.getJdbcOperations().queryForList(INSERT_ONE, Long.class, message.srvyDrawupNo(),
                        message.msgType(), cipher.seal(0, message.srvyDrawupNo(), message.payload()).bytes(),
                        message.idempotencyKey(), message.traceParent(), message.srvyDrawupNo());
            } catch (RuntimeException e) {
                // the autocommit insert may still commit (an answer timed out): 503, counted, named and followed up; or
                // have committed (its backend ended while it waited for a synchronous standby: committed locally),
                // which a connection found dead before the insert ran looks the same as: looked for, named if found
                if (DatabaseFailures.answerTimedOut(e)) {
                    unsettled.lone(message, e);
                } else if (DatabaseFailures.answerLost(e)) {
                    unsettled.loneConnectionLost(message);
                }
                throw e;
            }
            if (!ids.isEmpty()) {
                return new Acceptance(ids.get(0), message.srvyDrawupNo(), message.msgType(), true, message.traceParent());
            }
            Acceptance first = receptionJdbc.getJdbcOperations().execute((ConnectionCallback<Acceptance>) con ->
                    earlierRowIfAny(con, message)); // a replay: its first row
            if (first != null) {
                return first;
            }
            if (tries == 2) {
                throw new ReplayedRowGone();
            }
        }
    }

    /**
     * Several rows in one transaction: ids are taken from the identity sequence first (ascending, in
     * arrival order), so each row's id is known even when an idempotency-key conflict skips it; then one
     * multi-row INSERT, the earlier rows of replayed idempotency keys looked up in the same transaction,
     * and one commit. Nothing touches the database after the commit: once it succeeded, the group's
     * answers are settled and no later failure may turn a committed row into a 503 or a second insert.
     */
    List<Acceptance> acceptGroup(List<ReceivedMessage> messages) {
        return acceptGroup(messages, storeTimeout);
    }

    /**
     * The same, every statement after the first bounded by {@code budget}. A COMMIT that got no answer (the
     * connection cut or timed out while it was in flight) is settled by asking on another connection whether
     * the rows exist: they are answered 200 if they do, so a slow commit becomes a 503 for a stored row only while
     * it still waits (for a synchronous standby: {@link #END_BACKENDS}), never once it is done. A group of two or
     * more never waits for a subject's lock ({@link #NEXT_IDS_TRIED}): a member whose subject another transaction
     * holds is answered null, nothing written for it, for its caller to write alone.
     */
    List<Acceptance> acceptGroup(List<ReceivedMessage> messages, java.time.Duration budget) {
        // a plain JDBC transaction on one connection: no JPA session for a statement pair
        List<Long> ids = new ArrayList<>(messages.size());
        // which members got their subject's lock (all of a group of one: it waits for it)
        boolean[] locked = new boolean[messages.size()];
        List<Acceptance> answer = new ArrayList<>(messages.size());
        GroupBackend[] backend = {null}; // as the first statement read it, for the settle of an unanswered COMMIT
        boolean[] commitSent = {false};
        // never beyond the connection's own statement bound (below the socket timeout): the server gives up first
        long bound = Math.min(budget.toMillis(), receptionStatementBound.toMillis());
        try {
            return receptionJdbc.getJdbcOperations().execute((ConnectionCallback<List<Acceptance>>) con -> {
                boolean committed = false;
                boolean rolledBack = false;
                con.setAutoCommit(false);
                try {
                    boolean alone = messages.size() == 1;
                    try (PreparedStatement next = con.prepareStatement(alone ? NEXT_IDS : NEXT_IDS_TRIED)) {
                        // a lone row's subject lock may wait for another pod's group: this statement is bounded by the
                        // connection's own statement_timeout/lock_timeout (ReceptionConnections), the next ones by the group's
                        if (alone) {
                            next.setString(1, Long.toString(Math.max(1, bound)));
                            next.setArray(2, con.createArrayOf("text", new Object[] {messages.get(0).srvyDrawupNo()}));
                            next.setInt(3, 1);
                        } else {
                            next.setArray(1, con.createArrayOf("text",
                                    messages.stream().map(ReceivedMessage::srvyDrawupNo).toArray()));
                            next.setString(2, Long.toString(Math.max(1, bound)));
                        }
                        try (ResultSet rs = next.executeQuery()) {
                            int member = 0;
                            while (rs.next()) {
                                long id = rs.getLong(1);
                                if (!rs.wasNull()) {
                                    ids.add(id);
                                    locked[member] = true;
                                }
                                member++;
                                if (backend[0] == null) { // the same on every row
                                    backend[0] = new GroupBackend(rs.getInt("pid"), rs.getString("xid"),
                                            rs.getString("backend_start"), rs.getString("server_start"));
                                }
                            }
                        }
                    }
                    Collections.sort(ids);
                    // the ids, ascending, to the locked members in arrival order; none for the others
                    Long[] idOf = new Long[messages.size()];
                    for (int i = 0, next = 0; i < messages.size(); i++) {
                        idOf[i] = locked[i] ? ids.get(next++) : null;
                    }
                    Set<Long> inserted = new HashSet<>();
                    StringBuilder sql = new StringBuilder(INSERT_GROUP_HEAD);
                    for (int i = 0; i < ids.size(); i++) {
                        sql.append(i == 0 ? "(?, ?, ?, ?, ?, ?, ?)" : ", (?, ?, ?, ?, ?, ?, ?)");
                    }
                    sql.append('\n').append(INSERT_GROUP_TAIL);
                    try (PreparedStatement insert = ids.isEmpty() ? null : con.prepareStatement(sql.toString())) {
                        int p = 1;
                        for (int i = 0; i < messages.size() && insert != null; i++) {
                            if (idOf[i] == null) {
                                continue;
                            }
                            ReceivedMessage m = messages.get(i);
                            PayloadCipher.Sealed sealed = cipher.seal(idOf[i], m.srvyDrawupNo(), m.payload());
                            insert.setLong(p++, idOf[i]);
                            insert.setString(p++, m.srvyDrawupNo());
                            insert.setString(p++, m.msgType());
                            insert.setBytes(p++, sealed.bytes());
                            insert.setString(p++, sealed.keyId());
                            insert.setString(p++, m.idempotencyKey());
                            insert.setString(p++, m.traceParent());
                        }
                        if (insert != null) {
                            try (ResultSet rs = insert.executeQuery()) {
                                while (rs.next()) {
                                    inserted.add(rs.getLong(1));
                                }
                            }
                        }
                    }
                    List<Acceptance> result = new ArrayList<>(messages.size());
                    for (int i = 0; i < messages.size(); i++) {
                        ReceivedMessage m = messages.get(i);
                        result.add(idOf[i] == null ? null // its subject held elsewhere: written alone (GroupInsert)
                                : inserted.contains(idOf[i])
                                ? new Acceptance(idOf[i], m.srvyDrawupNo(), m.msgType(), true, m.traceParent())
                                : earlierRow(con, m));
                    }
                    answer.addAll(result);
                    commitSent[0] = true;
                    con.commit();
                    committed = true;
                    return result;
                } catch (SQLException | RuntimeException | Error e) {
                    // an Error too (memory running out while a replay's body is read): the reset to autocommit below
                    // would otherwise commit the open transaction, rows stored for callers answered 500
                    try {
                        con.rollback();
                        rolledBack = true;
                    } catch (SQLException ignored) {
                        // the connection is gone: the pool discards it; what happened to the commit is settled below
                    }
                    throw e;
                } finally {
                    try {
                        // never while the transaction may still be open (its rollback itself failed: an Error again, a
                        // lost connection): the reset to autocommit would commit it. The pool rolls back a connection
                        // returned with autocommit off (HikariCP) and discards a broken one
                        if (committed || rolledBack) {
                            con.setAutoCommit(true);
                        }
                    } catch (SQLException e) {
                        // a broken connection: the pool discards it. Never thrown from here: it would replace the failure
                        // that broke it (a lost connection's SQLState says "unavailable, retry"; "connection is closed"
                        // says nothing), and a committed group is answered as committed.
                        if (committed) {
                            org.slf4j.LoggerFactory.getLogger(InboxStore.class)
                                    .warn("Connection not reset after a committed group: {}", e.getClass().getSimpleName());
                        }
                    }
                }
            });
        } catch (RuntimeException e) {
            Settled settled = commitSent[0] && answer.size() == messages.size() && backend[0] != null
                    ? settle(receptionJdbc.getJdbcOperations(), backend[0]) : Settled.NOT_COMMITTED;
            if (settled == Settled.COMMITTED) {
                org.slf4j.LoggerFactory.getLogger(InboxStore.class).warn(
                        "A group of {} rows committed although its COMMIT got no answer; answered as stored", answer.size());
                return answer;
            }
            // an error the server answered the COMMIT with aborted it; a lost answer leaves it unknown
            if (settled == Settled.UNKNOWN && DatabaseFailures.answerLost(e)) {
                unsettled.group(backend[0], messages, answer); // 503, yet the COMMIT may complete: counted, named, followed up
            }
            throw e;
        }
    }

    /** What the settle of a group's COMMIT found: committed, not committed (its transaction aborted), or not known. */
    enum Settled { COMMITTED, NOT_COMMITTED, UNKNOWN }

    /** A group's backend as its first statement read it: its pid and start, its transaction, its server's start. */
    record GroupBackend(int pid, String xid, String backendStart, String serverStart) {
    }

    /**
     * After a COMMIT without an answer: did it commit? Asked on another connection. The group's backend, if it
     * is still there and not yet writing its commit record, is ended first (a COMMIT still on its way could otherwise
     * land after the answer); a backend past that point is waited for ({@link #END_BACKENDS});
     * then the transaction's status is read. Anything
     * the database cannot say in time counts as not committed: the sender gets 503 and retries — the one admitted
     * case, a database that answers nothing at all ({@link UnsettledReceptions} names those rows and follows them up).
     * A COMMIT that completes later (the standby back) leaves a row the retry finds by its Idempotency-Key; without a
     * key the retry is a second row (a second SEND of a subject is a resend request): a duplicate, never a loss. The
     * waiting backend holds its connection slot and its subject locks until then.
     */
    static boolean committedAfterAll(org.springframework.jdbc.core.JdbcOperations other, GroupBackend group) {
        return settle(other, group) == Settled.COMMITTED;
    }

    /**
     * {@link #committedAfterAll}'s three answers: UNKNOWN when the database could not say in time (the backend still
     * there after 2 s, another server, no answer), NOT_COMMITTED only when the transaction is known aborted.
     */
    static Settled settle(org.springframework.jdbc.core.JdbcOperations other, GroupBackend group) {
        if (group.pid() == 0 || group.xid() == null || group.backendStart() == null || group.serverStart() == null) {
            return Settled.UNKNOWN;
        }
        try {
            if (!Boolean.TRUE.equals(other.queryForObject(SAME_SERVER, Boolean.class, group.serverStart()))) {
                return Settled.UNKNOWN; // another server (a failover, a restart): what it says of that pid and xid is not the group's
            }
            endBackends(other, List.of(group));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (!Boolean.TRUE.equals(other.queryForObject(BACKEND_GONE, Boolean.class, group.pid(), group.backendStart()))) {
                if (System.nanoTime() > deadline) {
                    return Settled.UNKNOWN;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
            String status = other.queryForObject(TRANSACTION_STATUS, String.class, group.xid());
            return "committed".equals(status) ? Settled.COMMITTED
                    : "aborted".equals(status) ? Settled.NOT_COMMITTED : Settled.UNKNOWN;
        } catch (RuntimeException unreachable) {
            return Settled.UNKNOWN;
        }
    }

    /**
     * The row an idempotency key already names, read in the group's own transaction; {@link ReplayedRowGone} when it
     * was deleted since the conflict (acceptOne writes again).
     */
    private Acceptance earlierRow(java.sql.Connection con, ReceivedMessage message) throws SQLException {
        Acceptance first = earlierRowIfAny(con, message);
        if (first == null) {
            throw new ReplayedRowGone();
        }
        return first;
    }

    /** A replay whose first row was deleted (retention) between the insert that met its key and the read of it. */
    static final class ReplayedRowGone extends IllegalStateException {
        ReplayedRowGone() {
            super("idempotency key conflict without a row (deleted meanwhile)");
        }
    }

    /**
     * The row the replayed message's idempotency key names, or null when there is none (deleted since the conflict),
     * with how the replay differs from it ({@link Acceptance#keyReusedBy}), read in the same statement on the
     * connection the insert holds (a second read took one of the reception pool's few connections per replay, and
     * replays come in storms, after an outage).
     */
    private Acceptance earlierRowIfAny(java.sql.Connection con, ReceivedMessage message) throws SQLException {
        try (PreparedStatement find = con.prepareStatement(FIND_BY_IDEMPOTENCY_KEY)) {
            find.setString(1, message.idempotencyKey());
            try (ResultSet rs = find.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long id = rs.getLong("id");
                String subject = rs.getString("srvy_drawup_no");
                String type = rs.getString("msg_type");
                return new Acceptance(id, subject, type, false, null,
                        otherMessage(id, subject, type, rs.getBytes("payload"), rs.getString("payload_key_id"), message));
            }
        }
    }

    /**
     * How a replayed key's message differs from its first row's, or null for the same message: another subject or
     * type, else another body (the JSON compared as values: a retry may write it with other spacing or field order).
     * A first row whose payload retention removed is taken as the same; one this instance cannot open is said.
     */
    private String otherMessage(long id, String subject, String type, byte[] stored, String keyId, ReceivedMessage message) {
        if (!subject.equals(message.srvyDrawupNo()) || !type.equals(message.msgType())) {
            return "another srvyDrawupNo or msgType";
        }
        if (stored == null) {
            return null;
        }
        try {
            return JSON.readTree(cipher.open(id, subject, stored, keyId)).equals(JSON.readTree(message.payload())) ? null : "another body";
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(InboxStore.class).warn("Inbox {}: a replay of its Idempotency-Key not compared with its "
                    + "first body ({})", id, com.hospital.surveyinbox.config.LoggedFailure.describe(e));
            return null;
        }
    }

    /** Ends the group insert's writers once the rows they hold are committed (after the web server stopped). */
    @Override
    public void destroy() {
        if (groupInsert != null) {
            groupInsert.close();
        }
        unsettled.close();
    }

}
