package com.hospital.surveyinbox.inbox;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
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
public class InboxStore {

    static final String INSERT = """
            INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload, idempotency_key)
            VALUES (:srvyDrawupNo, :msgType, :payload, :idempotencyKey)
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
                RETURNING m.id, m.srvy_drawup_no, m.msg_type, m.payload, m.attempts, m.last_attempt_at
            ), opened AS (
                INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at)
                SELECT id, attempts, last_attempt_at
                  FROM claimed
            )
            SELECT id, srvy_drawup_no, msg_type, payload, attempts
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
     * Fenced: FAILED, or DEAD when this attempt reached max-attempts. Going DEAD opens the reply
     * obligation in the same statement, so a DEAD row can never miss its reply.
     */
    static final String MARK_FAILED = """
            UPDATE inbox_message
               SET status = CASE WHEN attempts >= :maxAttempts THEN 'DEAD' ELSE 'FAILED' END,
                   claim_token = NULL,
                   last_error = :reason,
                   updated_at = now(),
                   reply_status = CASE WHEN attempts >= :maxAttempts THEN 'PENDING' ELSE reply_status END,
                   reply_reason_code = CASE WHEN attempts >= :maxAttempts THEN 'DEAD' ELSE reply_reason_code END,
                   reply_reason = CASE WHEN attempts >= :maxAttempts THEN :reason ELSE reply_reason END,
                   reply_updated_at = CASE WHEN attempts >= :maxAttempts THEN now() ELSE reply_updated_at END
             WHERE id = :id
               AND status = 'PROCESSING'
               AND claim_token = :token
            RETURNING status, attempts
            """;

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

    private final NamedParameterJdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public InboxStore(NamedParameterJdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /**
     * Stores a validated message; returns once the row is committed. With an idempotency key already
     * seen, returns the earlier row and stores nothing.
     */
    public Acceptance accept(ReceivedMessage message) {
        MapSqlParameterSource params = new MapSqlParameterSource()
                .addValue("srvyDrawupNo", message.srvyDrawupNo())
                .addValue("msgType", message.msgType())
                .addValue("payload", message.payload())
                .addValue("idempotencyKey", message.idempotencyKey());
        List<Long> ids = jdbc.queryForList(INSERT, params, Long.class);
        if (!ids.isEmpty()) {
            return new Acceptance(ids.get(0), message.srvyDrawupNo(), message.msgType(), true);
        }
        return jdbc.query(FIND_BY_IDEMPOTENCY_KEY, params, (rs, n) -> new Acceptance(
                        rs.getLong("id"), rs.getString("srvy_drawup_no"), rs.getString("msg_type"), false))
                .stream().findFirst()
                .orElseThrow(() -> new IllegalStateException("idempotency key conflict without a row"));
    }

    /** Claims the row for this worker; empty when it is not claimable (taken, finished, or held by ordering). */
    public Optional<ClaimedRow> claim(long inboxId) {
        UUID token = UUID.randomUUID();
        MapSqlParameterSource params = new MapSqlParameterSource("id", inboxId).addValue("token", token);
        return jdbc.query(CLAIM, params, (rs, n) -> new ClaimedRow(
                rs.getLong("id"), rs.getString("srvy_drawup_no"), rs.getString("msg_type"),
                rs.getBytes("payload"), rs.getInt("attempts"), token)).stream().findFirst();
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
