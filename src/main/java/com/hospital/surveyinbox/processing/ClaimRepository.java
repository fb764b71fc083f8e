package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.PayloadCipher;
import com.hospital.surveyinbox.inbox.SqlFiles;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.UUID;
import org.apache.camel.Exchange;
import org.apache.camel.spi.IdempotentRepository;
import org.apache.camel.support.service.ServiceSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The idempotent repository of the {@code idempotentConsumer} step {@code inbox-process-claim}
 * ({@code routes/inbox-process.camel.yaml}), backed by the claim: {@link #add(Exchange, String)} runs
 * {@code sql/claim-row.sql} — one conditional {@code UPDATE … RETURNING} with the ordering guard, the
 * attempt history and a fresh claim token — puts the claimed row on the exchange (property
 * {@value #ROW}) and answers whether a row was claimed. What a refused claim means (held behind an earlier
 * row, or taken/finished) is the route's branch on {@code CamelDuplicateMessage}.
 *
 * <p><b>Not Set semantics.</b> "Added" means "claimed by this attempt", not "seen before": a FAILED row
 * is claimed again when its retry event arrives, and a COMPLETED row is never claimed however often its
 * event comes. So {@link #contains} is always false, {@link #remove} never un-claims (a failure must not
 * hand a row back: the claim-token fence and the redelivery job's stuck-row reset own recovery) and
 * {@link #clear} does nothing. The database row is the only ledger.
 */
@Component("claimRepository")
public class ClaimRepository extends ServiceSupport implements IdempotentRepository {

    /** Exchange property that carries the {@link ClaimedRow} through the route. */
    public static final String ROW = "row";
    /**
     * Exchange property with the token of this exchange's claim ({@code id/token}), set before the claim's
     * transaction: a try of the step after a failed one presents the same token, so a claim whose COMMIT went
     * through while its answer was lost is found again ({@code sql/find-own-claim.sql}) instead of refused.
     */
    public static final String TOKEN = "claimToken";
    /**
     * Exchange property, true from the moment this exchange's claim (or its own claim found again) returned a row
     * until the claim's transaction answered: only its COMMIT was left, so a failure then may have a row claimed and
     * an attempt charged that nobody works on. The route gives such a claim the outcome record's minute of tries
     * ({@code inbox-process-row-claim-unanswered}) instead of the four quick ones of any statement, so a database
     * away longer than those does not leave the row PROCESSING until stuck-processing-after (on its last attempt:
     * DEAD, a failure reply for a message nothing was tried for). A claim failing before that keeps the quick tries.
     */
    public static final String UNANSWERED = "claimUnanswered";
    private static final Logger log = LoggerFactory.getLogger(ClaimRepository.class);
    private static final String CLAIM = SqlFiles.read("claim-row");
    private static final String OWN_CLAIM = SqlFiles.read("find-own-claim");
    /**
     * Advisory-lock key space of the claims' per-subject lock (its own: receptions never wait for a claim). The
     * claim's guard reads the subject's other rows from its statement's snapshot; two claims of one subject
     * taken at once could each see the other's row as it was before (an operator's requeue between them) and
     * both go PROCESSING. Under this lock, held to the claim's commit, the second claim's statement starts after
     * the first committed, and sees its row PROCESSING.
     */
    public static final int CLAIM_LOCK_SPACE = 0x1B0D;
    private static final String LOCK_SUBJECT = "SELECT pg_advisory_xact_lock(" + CLAIM_LOCK_SPACE
            + ", hashtext(srvy_drawup_no)) FROM inbox_message WHERE id = :id";

    private final NamedParameterJdbcTemplate jdbc;
    private final org.springframework.transaction.support.TransactionTemplate transaction;
    private final PayloadCipher cipher;
    private final MeterRegistry meters;

    private final long retryDelayMillis;
    private final long keyWaitSeconds;
    private final io.micrometer.core.instrument.Counter keyNotConfigured;
    private final io.micrometer.core.instrument.Counter notDecryptable;

    @org.springframework.beans.factory.annotation.Autowired
    public ClaimRepository(NamedParameterJdbcTemplate jdbc, PayloadCipher cipher, MeterRegistry meters,
                           com.hospital.surveyinbox.config.AdapterProperties properties) {
        this(jdbc, cipher, meters, properties.getInbox().getRetryDelay(), properties.getCrypto().getKeyWait());
    }

    /** {@code retryDelay}: how long after its last attempt a FAILED row may be claimed again. */
    public ClaimRepository(NamedParameterJdbcTemplate jdbc, PayloadCipher cipher, MeterRegistry meters,
                           java.time.Duration retryDelay) {
        this(jdbc, cipher, meters, retryDelay, java.time.Duration.ofDays(1));
    }

    /** {@code keyWait}: how long a row whose payload key this instance lacks waits uncharged (adapter.crypto.key-wait). */
    public ClaimRepository(NamedParameterJdbcTemplate jdbc, PayloadCipher cipher, MeterRegistry meters,
                           java.time.Duration retryDelay, java.time.Duration keyWait) {
        this.keyWaitSeconds = keyWait.toSeconds();
        this.retryDelayMillis = retryDelay.toMillis();
        this.jdbc = jdbc;
        // a plain JDBC transaction on the same DataSource (not the JPA manager: no EntityManager per claim)
        this.transaction = new org.springframework.transaction.support.TransactionTemplate(
                new org.springframework.jdbc.datasource.DataSourceTransactionManager(jdbc.getJdbcTemplate().getDataSource()));
        this.cipher = cipher;
        this.meters = meters;
        // registered at start, so a rate over them sees a pod's first one (SurveyInboxPayloadUnreadable)
        this.keyNotConfigured = unreadable(meters, "key-not-configured");
        this.notDecryptable = unreadable(meters, "not-decryptable");
    }

    private static io.micrometer.core.instrument.Counter unreadable(MeterRegistry meters, String reason) {
        return io.micrometer.core.instrument.Counter.builder("adapter.inbox.payload.unreadable")
                .description("claimed rows whose payload this instance could not open").tag("reason", reason).register(meters);
    }

    /** Claims the row whose id is {@code key}; true (and the row on the exchange) when this attempt owns it now. */
    @Override
    public boolean add(Exchange exchange, String key) {
        long inboxId = Long.parseLong(key);
        MDC.put("inboxId", key);
        // the same token on every try of this exchange's claim (see TOKEN)
        String kept = exchange.getProperty(TOKEN, String.class);
        boolean retry = kept != null && kept.startsWith(key + "/");
        UUID token = retry ? UUID.fromString(kept.substring(key.length() + 1)) : UUID.randomUUID();
        exchange.setProperty(TOKEN, key + "/" + token);
        Optional<ClaimedRow> row = claim(inboxId, token, retry,
                () -> exchange.setProperty(UNANSWERED, Boolean.TRUE));
        // answered: what the claim did is known (a later failure is not the claim's)
        exchange.removeProperty(UNANSWERED);
        if (row.isEmpty()) {
            return false;
        }
        ClaimedRow claimed = row.get();
        MDC.put("srvyDrawupNo", claimed.srvyDrawupNo());
        meters.counter(ProcessingRecord.CLAIMS, "result", "claimed").increment();
        log.info("Inbox {} claimed, attempt {}", claimed.inboxId(), claimed.attempt());
        exchange.setProperty(ROW, claimed);
        return true;
    }

    /** Without an exchange the claim still happens, but nobody receives the row: only for callers that discard it. */
    @Override
    public boolean add(String key) {
        return claim(Long.parseLong(key)).isPresent();
    }

    /** Claims a row (empty when it is taken, finished, or held by the ordering guard). */
    public Optional<ClaimedRow> claim(long inboxId) {
        return claim(inboxId, UUID.randomUUID(), false, () -> { });
    }

    /**
     * The claim; on a {@code retry} (a try after a failed one, same token) first the row this token claimed, when the
     * failed try's commit went through after all. Both after the subject's claim lock: a first commit still under
     * way when the retry starts (its answer lost to the socket timeout, the commit itself slow) holds that lock
     * until it ends, so the retry then sees its own claim instead of a row "taken". {@code claimed} runs once a row is
     * claimed (or found again), before the COMMIT.
     */
    private Optional<ClaimedRow> claim(long inboxId, UUID token, boolean retry, Runnable claimed) {
        MapSqlParameterSource params = new MapSqlParameterSource("id", inboxId).addValue("token", token)
                .addValue("retryDelayMillis", retryDelayMillis);
        // statements of one transaction: the subject's claim lock first, so the claim's snapshot is taken
        // after any other claim of the subject committed (see CLAIM_LOCK_SPACE)
        return transaction.execute(tx -> {
            jdbc.query(LOCK_SUBJECT, params, (rs, n) -> null);
            if (retry) {
                Optional<ClaimedRow> own = jdbc.query(OWN_CLAIM, params, (rs, n) -> claimedRow(rs, token)).stream().findFirst();
                if (own.isPresent()) {
                    claimed.run();
                    log.warn("Inbox {}: the claim's commit went through though its answer was lost; going on with attempt {}",
                            own.get().inboxId(), own.get().attempt());
                    return own;
                }
            }
            Optional<ClaimedRow> row = jdbc.query(CLAIM, params, (rs, n) -> claimedRow(rs, token)).stream().findFirst();
            if (row.isPresent()) {
                claimed.run();
            }
            return row;
        });
    }

    private ClaimedRow claimedRow(java.sql.ResultSet rs, UUID token) throws java.sql.SQLException {
        long id = rs.getLong("id");
        String srvyDrawupNo = rs.getString("srvy_drawup_no");
        String keyId = rs.getString("payload_key_id");
        byte[] payload = null;
        String awaitedKey = null;
        try {
            payload = cipher.open(id, srvyDrawupNo, rs.getBytes("payload"), keyId);
        } catch (PayloadCipher.KeyNotConfigured notConfigured) {
            // the configuration's fault, not the row's: the registration defers it uncharged (inbox-register), for
            // key-wait from the row's arrival; then charged, so a key gone for good ends in DEAD, not a row held for ever
            keyNotConfigured.increment();
            boolean waits = rs.getDouble("age_seconds") < keyWaitSeconds;
            log.error("Inbox {}: payload sealed with key '{}', which this instance does not have (ADAPTER_CRYPTO_KEYS_{}): {}",
                    id, keyId, keyId == null ? "" : keyId.toUpperCase(java.util.Locale.ROOT),
                    waits ? "the row waits uncharged" : "waited adapter.crypto.key-wait, charged as a system error");
            awaitedKey = waits ? keyId : null;
        } catch (IllegalStateException e) {
            // not the key that sealed it, or not sealed for this row: the claim stands and the registration records a
            // system error, so the row still ends FAILED/DEAD. Our own words (which key, which row), never the cipher's
            notDecryptable.increment();
            log.error("Inbox {}: payload cannot be opened with key '{}' (not the key that sealed it, or not sealed for this row)",
                    id, keyId);
        }
        return new ClaimedRow(id, srvyDrawupNo, rs.getString("msg_type"), payload, rs.getInt("attempts"), token, awaitedKey);
    }

    /** Always false: whether a row can be claimed is decided by the claim's UPDATE alone, never by a lookup. */
    @Override
    public boolean contains(String key) {
        return false;
    }

    /** Never un-claims: see the class comment. */
    @Override
    public boolean remove(String key) {
        return false;
    }

    /** The outcome write of the route (fenced by the claim token) is the confirmation; nothing to do here. */
    @Override
    public boolean confirm(String key) {
        return true;
    }

    @Override
    public void clear() {
        // the inbox table is the ledger; there is nothing of ours to clear
    }
}
