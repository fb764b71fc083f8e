package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.time.Duration;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * All SQL that changes an inbox row. Every transition is a single conditional UPDATE whose row count
 * (or RETURNING row) decides what happened, so racing workers, duplicate events and the redelivery job
 * can never apply the same transition twice. Ages are compared on the database clock.
 *
 * <p>Used by {@code routes/inbox-receive.camel.yaml} (step {@code inbox-receive-store}) and by the
 * processing, reply and redelivery beans.
 */
@Component("inboxStore")
public class InboxStore implements DisposableBean {

    static final String INSERT = """
            INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload, payload_key_id, idempotency_key)
            VALUES (:srvyDrawupNo, :msgType, :payload, :payloadKeyId, :idempotencyKey)
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """;

    /** Ids for a group, taken from the identity's own sequence before the rows are written. */
    static final String NEXT_IDS = """
            SELECT nextval(pg_get_serial_sequence('inbox_message', 'id'))
              FROM generate_series(1, ?)
            """;

    /**
     * A group's rows under the ids {@link #NEXT_IDS} took (hence {@code OVERRIDING SYSTEM VALUE} on the
     * identity column), one {@code (?, ?, ?, ?, ?, ?)} tuple per row appended, then {@link #INSERT_GROUP_TAIL}.
     */
    static final String INSERT_GROUP_HEAD = """
            INSERT INTO inbox_message (id, srvy_drawup_no, msg_type, payload, payload_key_id, idempotency_key)
            OVERRIDING SYSTEM VALUE VALUES\s""";

    static final String INSERT_GROUP_TAIL = """
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """;

    static final String FIND_BY_IDEMPOTENCY_KEY = """
            SELECT id, srvy_drawup_no, msg_type
              FROM inbox_message
             WHERE idempotency_key = :idempotencyKey
            """;

    /**
     * The only gateway into processing: RECEIVED|FAILED -> PROCESSING, attempts + 1, a fresh claim token,
     * the payload returned by the same statement, and the attempt opened in the history. The ordering
     * guard is part of the WHERE clause: an earlier unfinished row of the same subject blocks the claim.
     */
    static final String CLAIM = """
            WITH claimed AS (
                UPDATE inbox_message m
                   SET status = 'PROCESSING',
                       attempts = m.attempts + 1,
                       claim_token = :token,
                       held_reason = NULL,
                       last_attempt_at = now(),
                       updated_at = now()
                 WHERE m.id = :id
                   AND m.status IN ('RECEIVED', 'FAILED')
                   AND NOT EXISTS (
                       SELECT 1
                         FROM inbox_message e
                        WHERE e.srvy_drawup_no = m.srvy_drawup_no
                          AND e.id < m.id
                          AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
                RETURNING m.id, m.srvy_drawup_no, m.msg_type, m.payload, m.payload_key_id, m.attempts, m.last_attempt_at
            ), opened AS (
                INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at)
                SELECT id, attempts, last_attempt_at
                  FROM claimed
            )
            SELECT id, srvy_drawup_no, msg_type, payload, payload_key_id, attempts
              FROM claimed
            """;

    /** When a claim was refused by the ordering guard, say on the row which earlier row it waits behind. */
    static final String RECORD_HOLD = """
            UPDATE inbox_message m
               SET held_reason = 'waiting behind inbox ' || blocker.id
              FROM (SELECT e.id
                      FROM inbox_message e
                      JOIN inbox_message me ON me.srvy_drawup_no = e.srvy_drawup_no
                     WHERE me.id = :id
                       AND e.id < me.id
                       AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED')
                     ORDER BY e.id
                     LIMIT 1) blocker
             WHERE m.id = :id
               AND m.status IN ('RECEIVED', 'FAILED')
            RETURNING blocker.id
            """;

    /** Fenced: only the worker holding the current claim token can complete the row. */
    static final String MARK_COMPLETED = """
            UPDATE inbox_message
               SET status = 'COMPLETED',
                   claim_token = NULL,
                   last_error = NULL,
                   updated_at = now(),
                   reply_status = CASE WHEN CAST(:replyCode AS TEXT) IS NULL THEN reply_status ELSE 'PENDING' END,
                   reply_reason_code = COALESCE(CAST(:replyCode AS TEXT), reply_reason_code),
                   reply_reason = COALESCE(CAST(:replyReason AS TEXT), reply_reason),
                   reply_updated_at = CASE WHEN CAST(:replyCode AS TEXT) IS NULL THEN reply_updated_at ELSE now() END
             WHERE id = :id
               AND status = 'PROCESSING'
               AND claim_token = :token
            RETURNING attempts
            """;

    /**
     * Going DEAD owes the legacy system a DEAD reply, unless one was already delivered for this row
     * (a requeued row that dies again is not reported twice).
     */
    static final String OPENS_DEAD_REPLY =
            "attempts >= :maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')";

    /**
     * Fenced: FAILED, or DEAD when this attempt reached max-attempts. Going DEAD opens the reply
     * obligation in the same statement, so a DEAD row can never miss its reply.
     */
    static final String MARK_FAILED = """
            UPDATE inbox_message
               SET status = CASE WHEN attempts >= :maxAttempts THEN 'DEAD' ELSE 'FAILED' END,
                   claim_token = NULL,
                   last_error = :reason,
                   updated_at = now(),
                   reply_status = CASE WHEN %1$s THEN 'PENDING' ELSE reply_status END,
                   reply_reason_code = CASE WHEN %1$s THEN 'DEAD' ELSE reply_reason_code END,
                   reply_reason = CASE WHEN %1$s THEN :reason ELSE reply_reason END,
                   reply_updated_at = CASE WHEN %1$s THEN now() ELSE reply_updated_at END
             WHERE id = :id
               AND status = 'PROCESSING'
               AND claim_token = :token
            RETURNING status, attempts
            """.formatted(OPENS_DEAD_REPLY);

    static final String CLOSE_ATTEMPT = """
            UPDATE inbox_attempt
               SET finished_at = now(),
                   outcome = :outcome,
                   reason = :reason
             WHERE id = (SELECT max(id) FROM inbox_attempt WHERE inbox_id = :id AND attempt_no = :attemptNo)
               AND finished_at IS NULL
            """;

    static final String HAS_COMPLETED_SEND = """
            SELECT EXISTS (
                SELECT 1
                  FROM inbox_message
                 WHERE srvy_drawup_no = :srvyDrawupNo
                   AND msg_type = 'SEND'
                   AND status = 'COMPLETED'
                   AND id < :id)
            """;

    /** The next row of the subject that the ordering guard held back, to be republished at once. */
    static final String FIND_HELD_SUCCESSOR = """
            SELECT id, srvy_drawup_no, msg_type
              FROM inbox_message
             WHERE srvy_drawup_no = :srvyDrawupNo
               AND id > :id
               AND status IN ('RECEIVED', 'FAILED')
               AND held_reason IS NOT NULL
             ORDER BY id
             LIMIT 1
            """;

    /** Take the reply obligation: one sender at a time, never after it was delivered. */
    static final String CLAIM_REPLY = """
            UPDATE inbox_message
               SET reply_status = 'SENDING',
                   reply_attempts = reply_attempts + 1,
                   reply_updated_at = now()
             WHERE id = :id
               AND reply_status IN ('PENDING', 'FAILED')
            RETURNING srvy_drawup_no, reply_reason_code, reply_reason
            """;

    static final String MARK_REPLY_SENT = """
            UPDATE inbox_message
               SET reply_status = 'SENT',
                   reply_last_error = NULL,
                   reply_updated_at = now()
             WHERE id = :id
               AND reply_status = 'SENDING'
            """;

    static final String MARK_REPLY_FAILED = """
            UPDATE inbox_message
               SET reply_status = 'FAILED',
                   reply_last_error = :error,
                   reply_updated_at = now()
             WHERE id = :id
               AND reply_status = 'SENDING'
            """;


    /**
     * Fenced: a downstream is plainly down (its circuit is open), so this attempt is not charged — the
     * attempt count goes back down and the row waits as FAILED for the next retry.
     */
    static final String MARK_DEFERRED = """
            UPDATE inbox_message
               SET status = 'FAILED',
                   attempts = attempts - 1,
                   claim_token = NULL,
                   last_error = :reason,
                   updated_at = now()
             WHERE id = :id
               AND status = 'PROCESSING'
               AND claim_token = :token
            RETURNING attempts
            """;

    /**
     * Stalled rows of one status whose age column is older than the threshold and that were not
     * republished within that time either (so a backlog is not republished every tick); stamps
     * published_at in the same statement. %1$s = status, %2$s = age column.
     */
    static final String REPUBLISH_STALLED = """
            UPDATE inbox_message
               SET published_at = now()
             WHERE id IN (SELECT id
                            FROM inbox_message
                           WHERE status = '%1$s'
                             AND %2$s < now() - :ageMillis * INTERVAL '1 millisecond'
                             AND (published_at IS NULL OR published_at < now() - :ageMillis * INTERVAL '1 millisecond')
                           ORDER BY %2$s
                           LIMIT :batch
                             FOR UPDATE SKIP LOCKED)
            RETURNING id, srvy_drawup_no, msg_type
            """;

    /** Lost events: RECEIVED for longer than lost-event-after. */
    static final String REPUBLISH_LOST = REPUBLISH_STALLED.formatted("RECEIVED", "created_at");

    /** Retries: FAILED whose last attempt is older than retry-delay. */
    static final String REPUBLISH_FAILED = REPUBLISH_STALLED.formatted("FAILED", "last_attempt_at");

    /**
     * Stuck workers: PROCESSING untouched for stuck-processing-after goes back to RECEIVED (its claim token
     * dies with it, so the lost worker's late outcome is rejected) — or to DEAD when that abandoned attempt
     * was the last allowed one, so a message that kills its worker cannot loop forever.
     */
    static final String RESET_STUCK = """
            WITH stuck AS (
                UPDATE inbox_message
                   SET status = CASE WHEN attempts >= :maxAttempts THEN 'DEAD' ELSE 'RECEIVED' END,
                       claim_token = NULL,
                       last_error = 'worker lost while processing; reset by the redelivery job',
                       updated_at = now(),
                       published_at = now(),
                       reply_status = CASE WHEN %1$s THEN 'PENDING' ELSE reply_status END,
                       reply_reason_code = CASE WHEN %1$s THEN 'DEAD' ELSE reply_reason_code END,
                       reply_reason = CASE WHEN %1$s THEN 'worker lost while processing' ELSE reply_reason END,
                       reply_updated_at = CASE WHEN %1$s THEN now() - :replyGraceMillis * INTERVAL '1 millisecond' ELSE reply_updated_at END
                 WHERE id IN (SELECT id
                                FROM inbox_message
                               WHERE status = 'PROCESSING'
                                 AND updated_at < now() - :ageMillis * INTERVAL '1 millisecond'
                               ORDER BY updated_at
                               LIMIT :batch
                                 FOR UPDATE SKIP LOCKED)
                RETURNING id, srvy_drawup_no, msg_type, status
            ), abandoned AS (
                UPDATE inbox_attempt a
                   SET finished_at = now(),
                       outcome = 'ABANDONED',
                       reason = 'worker lost while processing'
                  FROM stuck
                 WHERE a.inbox_id = stuck.id
                   AND a.finished_at IS NULL
            )
            SELECT id, srvy_drawup_no, msg_type, status
              FROM stuck
            """.formatted(OPENS_DEAD_REPLY);

    /** A reply sender that vanished mid-send leaves SENDING behind; make it retryable. */
    static final String RESET_STUCK_REPLIES = """
            UPDATE inbox_message
               SET reply_status = 'FAILED',
                   reply_last_error = 'reply sender lost; retrying',
                   reply_updated_at = now() - :ageMillis * INTERVAL '1 millisecond'
             WHERE reply_status = 'SENDING'
               AND reply_updated_at < now() - :ageMillis * INTERVAL '1 millisecond'
            """;

    /** Replies owed and not delivered: pending or failed for longer than retry-delay, oldest first. */
    static final String FIND_OWED_REPLIES = """
            SELECT id
              FROM inbox_message
             WHERE reply_status IN ('PENDING', 'FAILED')
               AND reply_updated_at < now() - :ageMillis * INTERVAL '1 millisecond'
             ORDER BY reply_updated_at
             LIMIT :batch
            """;

    static final String LOCK_STATUS = """
            SELECT status
              FROM inbox_message
             WHERE id = :id
               FOR UPDATE
            """;

    /**
     * Operator requeue: DEAD|FAILED -> RECEIVED with attempts reset. A DEAD reply not yet delivered is
     * withdrawn (the row gets another chance); a delivered one stays delivered.
     */
    static final String REQUEUE = """
            UPDATE inbox_message
               SET status = 'RECEIVED',
                   attempts = 0,
                   last_error = NULL,
                   held_reason = NULL,
                   claim_token = NULL,
                   updated_at = now(),
                   published_at = now(),
                   reply_status = CASE WHEN reply_status IN ('PENDING', 'FAILED') AND reply_reason_code = 'DEAD'
                                       THEN 'NONE' ELSE reply_status END
             WHERE id = :id
               AND status IN ('DEAD', 'FAILED')
               AND redacted_at IS NULL
            RETURNING srvy_drawup_no, msg_type
            """;

    static final String AUDIT = """
            INSERT INTO operator_audit (actor, action, inbox_id, from_status, to_status)
            VALUES (:actor, :action, :id, :fromStatus, :toStatus)
            """;

    static final String HAS_UNFINISHED = """
            SELECT EXISTS (
                SELECT 1
                  FROM inbox_message
                 WHERE srvy_drawup_no = :srvyDrawupNo
                   AND status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
            """;

    private final NamedParameterJdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final PayloadCipher cipher;
    private final Timer insertTimer;
    private final GroupInsert groupInsert;

    public InboxStore(NamedParameterJdbcTemplate jdbc, TransactionTemplate tx, PayloadCipher cipher, MeterRegistry meters,
                      AdapterProperties properties) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.cipher = cipher;
        this.insertTimer = Timer.builder("adapter.inbox.insert")
                .description("reception's wait until its inbox row is committed (insert + commit, grouped or not)")
                .publishPercentiles(0.5, 0.99).register(meters);
        AdapterProperties.GroupInsert group = properties.getReception().getGroupInsert();
        this.groupInsert = group.isEnabled()
                ? new GroupInsert(group.getWriters(), group.getMaxRows(), this::acceptGroup, this::acceptOne, meters)
                : null;
    }

    /**
     * Stores a validated message; returns once the row is committed. With an idempotency key already
     * seen, returns the earlier row and stores nothing. With the group insert on, the row is committed
     * together with other receptions waiting at the same moment ({@link GroupInsert}).
     */
    public Acceptance accept(ReceivedMessage message) {
        long start = System.nanoTime();
        try {
            return groupInsert != null ? groupInsert.accept(message) : acceptOne(message);
        } finally {
            insertTimer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    /** One row, one statement, autocommit. */
    Acceptance acceptOne(ReceivedMessage message) {
        PayloadCipher.Sealed sealed = cipher.seal(message.srvyDrawupNo(), message.payload());
        MapSqlParameterSource params = new MapSqlParameterSource()
                .addValue("srvyDrawupNo", message.srvyDrawupNo())
                .addValue("msgType", message.msgType())
                .addValue("payload", sealed.bytes())
                .addValue("payloadKeyId", sealed.keyId())
                .addValue("idempotencyKey", message.idempotencyKey());
        List<Long> ids = jdbc.queryForList(INSERT, params, Long.class);
        if (!ids.isEmpty()) {
            return new Acceptance(ids.get(0), message.srvyDrawupNo(), message.msgType(), true);
        }
        return earlierRow(message.idempotencyKey());
    }

    /**
     * Several rows in one transaction: ids are taken from the identity sequence first (ascending, in
     * arrival order), so each row's id is known even when an idempotency-key conflict skips it; then one
     * multi-row INSERT and one commit.
     */
    List<Acceptance> acceptGroup(List<ReceivedMessage> messages) {
        // a plain JDBC transaction on one connection: no JPA session for a statement pair
        Set<Long> inserted = new HashSet<>();
        List<Long> ids = new ArrayList<>(messages.size());
        jdbc.getJdbcOperations().execute((ConnectionCallback<Void>) con -> {
            con.setAutoCommit(false);
            try {
                try (PreparedStatement next = con.prepareStatement(NEXT_IDS)) {
                    next.setInt(1, messages.size());
                    try (ResultSet rs = next.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                        }
                    }
                }
                Collections.sort(ids);
                StringBuilder sql = new StringBuilder(INSERT_GROUP_HEAD);
                for (int i = 0; i < messages.size(); i++) {
                    sql.append(i == 0 ? "(?, ?, ?, ?, ?, ?)" : ", (?, ?, ?, ?, ?, ?)");
                }
                sql.append('\n').append(INSERT_GROUP_TAIL);
                try (PreparedStatement insert = con.prepareStatement(sql.toString())) {
                    int p = 1;
                    for (int i = 0; i < messages.size(); i++) {
                        ReceivedMessage m = messages.get(i);
                        PayloadCipher.Sealed sealed = cipher.seal(m.srvyDrawupNo(), m.payload());
                        insert.setLong(p++, ids.get(i));
                        insert.setString(p++, m.srvyDrawupNo());
                        insert.setString(p++, m.msgType());
                        insert.setBytes(p++, sealed.bytes());
                        insert.setString(p++, sealed.keyId());
                        insert.setString(p++, m.idempotencyKey());
                    }
                    try (ResultSet rs = insert.executeQuery()) {
                        while (rs.next()) {
                            inserted.add(rs.getLong(1));
                        }
                    }
                }
                con.commit();
                return null;
            } catch (SQLException | RuntimeException e) {
                con.rollback();
                throw e;
            } finally {
                con.setAutoCommit(true);
            }
        });
        List<Acceptance> result = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            ReceivedMessage m = messages.get(i);
            result.add(inserted.contains(ids.get(i))
                    ? new Acceptance(ids.get(i), m.srvyDrawupNo(), m.msgType(), true)
                    : earlierRow(m.idempotencyKey()));
        }
        return result;
    }

    private Acceptance earlierRow(String idempotencyKey) {
        return jdbc.query(FIND_BY_IDEMPOTENCY_KEY, new MapSqlParameterSource("idempotencyKey", idempotencyKey),
                        (rs, n) -> new Acceptance(rs.getLong("id"), rs.getString("srvy_drawup_no"), rs.getString("msg_type"), false))
                .stream().findFirst()
                .orElseThrow(() -> new IllegalStateException("idempotency key conflict without a row"));
    }

    /** Ends the group insert's writers once the rows they hold are committed (after the web server stopped). */
    @Override
    public void destroy() {
        if (groupInsert != null) {
            groupInsert.close();
        }
    }

    /** Claims the row for this worker; empty when it is not claimable (taken, finished, or held by ordering). */
    public Optional<ClaimedRow> claim(long inboxId) {
        UUID token = UUID.randomUUID();
        MapSqlParameterSource params = new MapSqlParameterSource("id", inboxId).addValue("token", token);
        return jdbc.query(CLAIM, params, (rs, n) -> new ClaimedRow(
                rs.getLong("id"), rs.getString("srvy_drawup_no"), rs.getString("msg_type"),
                openPayload(rs.getLong("id"), rs.getString("srvy_drawup_no"), rs.getBytes("payload"),
                        rs.getString("payload_key_id")),
                rs.getInt("attempts"), token)).stream().findFirst();
    }

    /**
     * The claimed row's payload in clear; null when it cannot be opened (key missing, redacted) — the
     * claim stands and the flow records a system error, so the row still ends FAILED/DEAD, not stuck.
     */
    private byte[] openPayload(long id, String subject, byte[] stored, String keyId) {
        try {
            return cipher.open(subject, stored, keyId);
        } catch (IllegalStateException e) {
            org.slf4j.LoggerFactory.getLogger(InboxStore.class).error("Inbox {}: {}", id, e.getMessage());
            return null;
        }
    }

    /** Records on a refused row which earlier row it waits behind; empty when it was not held by ordering. */
    public Optional<Long> recordHold(long inboxId) {
        return jdbc.queryForList(RECORD_HOLD, new MapSqlParameterSource("id", inboxId), Long.class)
                .stream().findFirst();
    }

    /**
     * Completes the claimed row, optionally opening a reply obligation.
     *
     * @return false when the claim is no longer ours (a newer attempt owns the row): nothing changed
     */
    public boolean complete(ClaimedRow row, ReplyReason reply, String replyReason) {
        return Boolean.TRUE.equals(tx.execute(status -> {
            MapSqlParameterSource params = fenced(row)
                    .addValue("replyCode", reply == null ? null : reply.name())
                    .addValue("replyReason", replyReason);
            List<Integer> done = jdbc.queryForList(MARK_COMPLETED, params, Integer.class);
            if (done.isEmpty()) {
                return false;
            }
            closeAttempt(row, "COMPLETED", null);
            return true;
        }));
    }

    /** Records a failed attempt: FAILED, or DEAD when it was the last allowed one. Fenced like {@link #complete}. */
    public FailureResult fail(ClaimedRow row, String reason, int maxAttempts) {
        return tx.execute(status -> {
            MapSqlParameterSource params = fenced(row)
                    .addValue("reason", reason)
                    .addValue("maxAttempts", maxAttempts);
            List<InboxStatus> result = jdbc.query(MARK_FAILED, params,
                    (rs, n) -> InboxStatus.valueOf(rs.getString("status")));
            if (result.isEmpty()) {
                return new FailureResult(null);
            }
            closeAttempt(row, result.get(0).name(), reason);
            return new FailureResult(result.get(0));
        });
    }

    public boolean hasCompletedSendBefore(ClaimedRow row) {
        return Boolean.TRUE.equals(jdbc.queryForObject(HAS_COMPLETED_SEND,
                new MapSqlParameterSource("srvyDrawupNo", row.srvyDrawupNo()).addValue("id", row.inboxId()),
                Boolean.class));
    }

    public Optional<InboxEvent> findHeldSuccessor(long inboxId, String srvyDrawupNo) {
        return jdbc.query(FIND_HELD_SUCCESSOR,
                new MapSqlParameterSource("id", inboxId).addValue("srvyDrawupNo", srvyDrawupNo),
                (rs, n) -> new InboxEvent(Long.toString(rs.getLong("id")), rs.getString("srvy_drawup_no"),
                        rs.getString("msg_type"))).stream().findFirst();
    }

    /** Takes the reply obligation of a row; empty when no reply is owed or someone else is sending it. */
    public Optional<OwedReply> claimReply(long inboxId) {
        return jdbc.query(CLAIM_REPLY, new MapSqlParameterSource("id", inboxId), (rs, n) -> new OwedReply(
                inboxId, rs.getString("srvy_drawup_no"), ReplyReason.valueOf(rs.getString("reply_reason_code")),
                rs.getString("reply_reason"))).stream().findFirst();
    }

    public boolean markReplySent(long inboxId) {
        return jdbc.update(MARK_REPLY_SENT, new MapSqlParameterSource("id", inboxId)) == 1;
    }

    public boolean markReplyFailed(long inboxId, String error) {
        return jdbc.update(MARK_REPLY_FAILED, new MapSqlParameterSource("id", inboxId).addValue("error", error)) == 1;
    }

    /** Records an attempt that is not charged (its downstream's circuit is open). Fenced. */
    public boolean defer(ClaimedRow row, String reason) {
        return Boolean.TRUE.equals(tx.execute(status -> {
            List<Integer> done = jdbc.queryForList(MARK_DEFERRED, fenced(row).addValue("reason", reason), Integer.class);
            if (done.isEmpty()) {
                return false;
            }
            closeAttempt(row, "DEFERRED", reason);
            return true;
        }));
    }

    public List<InboxEvent> republishLost(Duration age, int batch) {
        return events(REPUBLISH_LOST, age, batch);
    }

    public List<InboxEvent> republishFailed(Duration age, int batch) {
        return events(REPUBLISH_FAILED, age, batch);
    }

    /** Resets stuck PROCESSING rows; returns them with their new status (RECEIVED, or DEAD at the limit). */
    public List<StuckRow> resetStuck(Duration age, int batch, int maxAttempts, Duration replyGrace) {
        MapSqlParameterSource params = new MapSqlParameterSource("ageMillis", age.toMillis())
                .addValue("batch", batch)
                .addValue("maxAttempts", maxAttempts)
                .addValue("replyGraceMillis", replyGrace.toMillis());
        return jdbc.query(RESET_STUCK, params, (rs, n) -> new StuckRow(
                new InboxEvent(Long.toString(rs.getLong("id")), rs.getString("srvy_drawup_no"), rs.getString("msg_type")),
                InboxStatus.valueOf(rs.getString("status"))));
    }

    public int resetStuckReplies(Duration age) {
        return jdbc.update(RESET_STUCK_REPLIES, new MapSqlParameterSource("ageMillis", age.toMillis()));
    }

    public List<Long> findOwedReplies(Duration age, int batch) {
        return jdbc.queryForList(FIND_OWED_REPLIES,
                new MapSqlParameterSource("ageMillis", age.toMillis()).addValue("batch", batch), Long.class);
    }

    /** Whether the subject still has rows to drain (the synchronous path must not overtake them). */
    public boolean hasUnfinished(String srvyDrawupNo) {
        return Boolean.TRUE.equals(jdbc.queryForObject(HAS_UNFINISHED,
                new MapSqlParameterSource("srvyDrawupNo", srvyDrawupNo), Boolean.class));
    }

    /**
     * Operator requeue, audited in the same transaction.
     *
     * @return the outcome; {@link RequeueResult#event()} is the event to publish when it was requeued
     */
    public RequeueResult requeue(long inboxId, String actor) {
        return tx.execute(status -> {
            MapSqlParameterSource params = new MapSqlParameterSource("id", inboxId);
            List<String> current = jdbc.queryForList(LOCK_STATUS, params, String.class);
            if (current.isEmpty()) {
                return RequeueResult.notFound();
            }
            String from = current.get(0);
            List<InboxEvent> requeued = jdbc.query(REQUEUE, params, (rs, n) ->
                    new InboxEvent(Long.toString(inboxId), rs.getString("srvy_drawup_no"), rs.getString("msg_type")));
            if (requeued.isEmpty()) {
                return RequeueResult.conflict(from);
            }
            jdbc.update(AUDIT, params.addValue("actor", actor).addValue("action", "REQUEUE")
                    .addValue("fromStatus", from).addValue("toStatus", InboxStatus.RECEIVED.name()));
            return RequeueResult.requeued(from, requeued.get(0));
        });
    }

    private List<InboxEvent> events(String sql, Duration age, int batch) {
        List<InboxEvent> events = new java.util.ArrayList<>(jdbc.query(sql,
                new MapSqlParameterSource("ageMillis", age.toMillis()).addValue("batch", batch),
                (rs, n) -> new InboxEvent(Long.toString(rs.getLong("id")), rs.getString("srvy_drawup_no"),
                        rs.getString("msg_type"))));
        // arrival order, so rows of one subject are republished in the order they were received
        events.sort(java.util.Comparator.comparingLong(e -> Long.parseLong(e.inboxId())));
        return events;
    }

    private void closeAttempt(ClaimedRow row, String outcome, String reason) {
        jdbc.update(CLOSE_ATTEMPT, new MapSqlParameterSource("id", row.inboxId())
                .addValue("attemptNo", row.attempt())
                .addValue("outcome", outcome)
                .addValue("reason", reason));
    }

    private static MapSqlParameterSource fenced(ClaimedRow row) {
        return new MapSqlParameterSource("id", row.inboxId()).addValue("token", row.claimToken());
    }
}
