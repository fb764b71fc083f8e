package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.config.RepeatedLogLines;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;
import org.slf4j.MarkerFactory;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * Receptions answered 503 whose row may be stored all the same: their write reached the database and its answer
 * was lost (a COMMIT waiting for a synchronous standby past the socket timeout, a connection cut while the COMMIT
 * was under way). The sender retries, as a 503 asks; if the first write committed after all, a retry without
 * {@code Idempotency-Key} is a second row (a second {@code SEND} of a subject reads as a resend request: the patient
 * is sent the survey twice). A reception with a key is left out: its retry is answered with the first row. Nothing is
 * lost either way, but an operator has to know which rows to look at, so each such reception is counted
 * ({@code adapter_reception_unsettled_total}) and named at WARN, every line written however many there are
 * ({@link RepeatedLogLines#ALWAYS}: the counter bounds them):
 * <ul>
 *   <li>a group's COMMIT that {@link InboxStore#settle} could not settle: its new rows' inbox ids; then, every
 *       {@link #FOLLOW_UP_EVERY} for up to {@link #FOLLOW_UP_FOR}, all such groups are followed up together (two
 *       statements a round, whatever their number): a backend still idle in its transaction is ended (nothing
 *       committed then), and each transaction's fate logged once known: "were stored after all" (counted in
 *       {@code adapter_reception_unsettled_stored_total}) or "were not stored";</li>
 *   <li>a lone row's autocommit insert that outlived the socket timeout ({@link DatabaseFailures#answerTimedOut}): its
 *       id was never read, so the WARN names its subject, type and trace ({@code trace_parent} of the row, if stored:
 *       the reception's own span, so no retry of it has the same), and it is followed up with the groups, looked for
 *       by them (one statement a round, on the subject's index): "was stored after all" with its inbox id (counted
 *       too), or after {@link #FOLLOW_UP_FOR} "no row of it" (it has no transaction to read: an insert still waiting
 *       then is not told apart from one that never committed).</li>
 *   <li>a lone row's insert whose connection failed under it ({@link #loneConnectionLost}): counted and named only
 *       once its row is found.</li>
 * </ul>
 */
final class UnsettledReceptions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(UnsettledReceptions.class);
    private static final Marker ALWAYS = MarkerFactory.getMarker(RepeatedLogLines.ALWAYS);

    static final Duration FOLLOW_UP_EVERY = Duration.ofSeconds(5);
    static final Duration FOLLOW_UP_FOR = Duration.ofHours(1);

    /**
     * Lone receptions followed up at once, at most: each is a reception pool's connection held for the socket timeout,
     * so an hour's worth is a few thousand; beyond this bound one is named and not followed (a hard bound on memory
     * and on the round's statement).
     */
    static final int MAX_LONES = 10_000;

    /** Each pending group's transaction's status: committed, aborted, in progress (or null: no longer known). */
    static final String STATUSES = """
            SELECT x, CAST(pg_xact_status(CAST(x AS xid8)) AS text) AS status
              FROM unnest(CAST(? AS text[])) AS x
            """;

    /**
     * The pending lone receptions' rows, if stored: by subject (its index), type and trace, the reception's own span's
     * (a retry of it is another request, another span).
     */
    static final String LONE_ROWS = """
            SELECT l.subject, l.msg_type, l.trace, m.id
              FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[])) AS l(subject, msg_type, trace)
              JOIN inbox_message m
                ON m.srvy_drawup_no = l.subject AND m.msg_type = l.msg_type AND m.trace_parent = l.trace
            """;

    /** A group whose fate is not known yet. */
    private record Pending(InboxStore.GroupBackend backend, List<Long> ids, long deadline) {
    }

    /**
     * A lone reception whose row has not been found yet. Quiet: one whose connection failed under it (not counted nor
     * named unless its row is found: most such failures are a connection found dead before the insert ran); looked
     * for until {@code deadline} once a round could read, and while none could (the database away after the
     * switchover that failed it), until {@code giveUp}.
     */
    private record PendingLone(String subject, String msgType, String traceParent, long deadline, long giveUp, boolean quiet) {
    }

    /**
     * How long a lone reception whose connection failed under it is looked for: a backend ended while its insert
     * waited for a synchronous standby has committed locally already, so its row is there at the first round.
     */
    static final Duration QUIET_FOR = Duration.ofMinutes(1);

    private final JdbcOperations other;
    private final Counter unsettled;
    private final Counter storedAfterAll;
    private final Duration every;
    private final Duration lasting;
    private final int maxLones;
    private final Duration quietFor;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<PendingLone> lones = new ConcurrentLinkedQueue<>();
    /** Started with the first pending reception (most pods never have one); null until then. */
    private ScheduledExecutorService followUps;
    private boolean closed;

    UnsettledReceptions(JdbcOperations other, MeterRegistry meters) {
        this(other, meters, FOLLOW_UP_EVERY, FOLLOW_UP_FOR, MAX_LONES);
    }

    UnsettledReceptions(JdbcOperations other, MeterRegistry meters, Duration every, Duration lasting, int maxLones) {
        this(other, meters, every, lasting, maxLones, QUIET_FOR);
    }

    UnsettledReceptions(JdbcOperations other, MeterRegistry meters, Duration every, Duration lasting, int maxLones,
                        Duration quietFor) {
        this.quietFor = quietFor;
        this.other = other;
        this.every = every;
        this.lasting = lasting;
        this.maxLones = maxLones;
        this.unsettled = Counter.builder("adapter.reception.unsettled")
                .description("receptions without Idempotency-Key answered 503 whose write reached the database and got no"
                        + " answer: their row may be stored (WARN \"may be stored although\" names them); a retry is a second row")
                .register(meters);
        this.storedAfterAll = Counter.builder("adapter.reception.unsettled.stored")
                .description("of adapter.reception.unsettled, the rows later found stored: a group's whose COMMIT"
                        + " committed, a lone row found by its subject and trace (WARN \"stored after all\" names them)")
                .register(meters);
    }

    /** Lone receptions still looked for. */
    int lonesPending() {
        return lones.size();
    }

    /** False once closed: the reception is then named as not followed up, as those pending at the close are. */
    private synchronized boolean startFollowUps() {
        if (closed) {
            return false;
        }
        if (followUps != null) {
            return true;
        }
        followUps = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "unsettled-receptions");
            t.setDaemon(true);
            // started by a request thread: not Tomcat's web-app loader, which its stop would report as leaked
            t.setContextClassLoader(UnsettledReceptions.class.getClassLoader());
            return t;
        });
        followUps.scheduleWithFixedDelay(this::followUp, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /**
     * A lone row's autocommit insert whose connection failed under it ({@link DatabaseFailures#answerLost}: 08006,
     * 57P01…): its sender is answered 503. Most such failures are a pooled connection found dead before the insert ran
     * (a switchover, a restart: nothing stored), so the reception is neither counted nor named now; but a backend
     * ended while the insert waited for a synchronous standby (a switchover, pg_terminate_backend) has committed
     * locally. It is looked for, quietly, for {@link #QUIET_FOR} of rounds that could read (up to the hour while the
     * database stays away after the switchover): found, it is counted (unsettled and stored after all)
     * and named, as a timed-out insert found later is. Counted at once, every switchover under load raised the
     * unsettled alert with a WARN per reception that had stored nothing.
     */
    void loneConnectionLost(ReceivedMessage message) {
        if (message.idempotencyKey() != null || message.traceParent() == null || lones.size() >= maxLones) {
            return; // its retry is answered by its key; or its row could not be told from its retry's; or the bound
        }
        long now = System.nanoTime();
        PendingLone lone = new PendingLone(message.srvyDrawupNo(), message.msgType(), message.traceParent(),
                now + Math.min(quietFor.toNanos(), lasting.toNanos()), now + lasting.toNanos(), true);
        lones.add(lone);
        if (!startFollowUps()) {
            lones.remove(lone);
        }
    }

    /**
     * A group's COMMIT got no answer and could not be settled: its senders are answered 503. {@code messages} and
     * {@code rows} in the same order (a row null: the member was left out of the group, nothing written for it).
     */
    void group(InboxStore.GroupBackend backend, List<ReceivedMessage> messages, List<Acceptance> rows) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            Acceptance row = rows.get(i);
            if (row != null && row.fresh() && messages.get(i).idempotencyKey() == null) {
                ids.add(row.inboxId());
            }
        }
        if (ids.isEmpty()) {
            return; // replays, and rows whose retry is answered by their key: no second row can come of them
        }
        unsettled.increment(ids.size());
        log.warn(ALWAYS, "A group's COMMIT got no answer and could not be settled: inbox rows {} may be stored although"
                        + " their senders are answered 503 (their retry, without Idempotency-Key, is a second row; a SEND's"
                        + " a resend request); followed up every {} s for up to {} min",
                ids, every.toSeconds(), lasting.toMinutes());
        if (backend.xid() == null || backend.serverStart() == null || backend.backendStart() == null) {
            log.warn(ALWAYS, "Inbox rows {}: their transaction was not read, so they cannot be followed up; look them up"
                    + " in the console", ids);
            return;
        }
        Pending group = new Pending(backend, List.copyOf(ids), System.nanoTime() + lasting.toNanos());
        pending.add(group);
        if (!startFollowUps()) {
            pending.remove(group);
            log.warn(ALWAYS, "Inbox rows {} not followed up: the service is stopping; whether they are stored is not"
                    + " known; look them up in the console", ids);
        }
    }

    /** A lone row's insert that outlived the socket timeout: its sender is answered 503. */
    void lone(ReceivedMessage message, Throwable failure) {
        if (message.idempotencyKey() != null) {
            return; // its retry is answered with the first row, if there is one
        }
        unsettled.increment();
        log.warn(ALWAYS, "A reception's insert got no answer ({}): a row of {} {} may be stored although its sender is"
                        + " answered 503 (its retry, without Idempotency-Key, is a second row; a SEND's a resend request);"
                        + " its trace: {}",
                LoggedFailure.describe(failure), message.srvyDrawupNo(), message.msgType(),
                message.traceParent() == null ? "none" : message.traceParent());
        if (message.traceParent() == null) {
            log.warn(ALWAYS, "The reception of {} {} has no trace, so its row cannot be told from its retry's and is not"
                    + " followed up; look the subject up in the console", message.srvyDrawupNo(), message.msgType());
            return;
        }
        if (lones.size() >= maxLones) {
            log.warn(ALWAYS, "The reception of {} {} is not followed up: {} are already; look the subject up in the console",
                    message.srvyDrawupNo(), message.msgType(), maxLones);
            return;
        }
        long giveUp = System.nanoTime() + lasting.toNanos();
        PendingLone lone = new PendingLone(message.srvyDrawupNo(), message.msgType(), message.traceParent(),
                giveUp, giveUp, false);
        lones.add(lone);
        if (!startFollowUps()) {
            lones.remove(lone);
            log.warn(ALWAYS, "The reception of {} {} (trace {}) not followed up: the service is stopping; whether it is"
                    + " stored is not known; look the subject up in the console", lone.subject(), lone.msgType(),
                    lone.traceParent());
        }
    }

    /**
     * One round over every pending reception: four statements at most, whatever their number. Nothing thrown leaves
     * it (a task of a scheduled executor that throws is never run again: no follow-up for anyone after).
     */
    private void followUp() {
        try {
            followUpLones();
        } catch (RuntimeException e) {
            log.warn("Lone receptions' follow-up round failed: {}", LoggedFailure.describe(e));
        }
        try {
            followUpGroups();
        } catch (RuntimeException e) {
            log.warn("Groups' follow-up round failed: {}", LoggedFailure.describe(e));
        }
    }

    private void followUpGroups() {
        if (pending.isEmpty()) {
            return;
        }
        List<Pending> round = new ArrayList<>(pending);
        Map<String, String> statuses = new HashMap<>();
        // per server start a group read (nearly always one): whether this is still that server
        Map<String, Boolean> sameServer = new HashMap<>();
        boolean read;
        try {
            for (Pending p : round) {
                sameServer.computeIfAbsent(p.backend().serverStart(), start -> Boolean.TRUE.equals(
                        other.queryForObject(InboxStore.SAME_SERVER, Boolean.class, start)));
            }
            List<Pending> here = round.stream().filter(p -> sameServer.get(p.backend().serverStart())).toList();
            if (!here.isEmpty()) {
                // the backends still in their transaction, idle or waiting on a lock: ended, as a lone settle does
                InboxStore.endBackends(other, here.stream().map(Pending::backend).toList());
                Object[] xids = here.stream().map(p -> p.backend().xid()).toArray();
                other.query(STATUSES, ps -> ps.setArray(1, ps.getConnection().createArrayOf("text", xids)),
                        rs -> {
                            statuses.put(rs.getString("x"), rs.getString("status"));
                        });
            }
            read = true;
        } catch (RuntimeException unreachable) {
            read = false; // not known this round: asked again at the next
        }
        for (Pending group : round) {
            String status = !read ? "in progress" : !sameServer.get(group.backend().serverStart()) ? "another server"
                    : statuses.getOrDefault(group.backend().xid(), "in progress");
            if ("committed".equals(status)) {
                storedAfterAll.increment(group.ids().size());
                log.warn(ALWAYS, "Inbox rows {} were stored after all: their COMMIT completed after their senders were"
                        + " answered 503; a retry of theirs is a second row of its subject", group.ids());
            } else if ("aborted".equals(status)) {
                log.info(ALWAYS, "Inbox rows {} were not stored: their transaction did not commit; their senders' retries"
                        + " are their only rows", group.ids());
            } else if ("another server".equals(status)) {
                log.warn(ALWAYS, "Inbox rows {}: the database restarted or failed over since their COMMIT; whether they"
                        + " are stored cannot be read from it; look them up in the console", group.ids());
            } else if (status == null) {
                log.warn(ALWAYS, "Inbox rows {}: the database no longer knows their transaction; look them up in the"
                        + " console", group.ids());
            } else if (System.nanoTime() - group.deadline() >= 0) {
                log.warn(ALWAYS, "Inbox rows {}: their COMMIT is still unsettled after {} min and no longer followed up;"
                        + " look them up in the console", group.ids(), lasting.toMinutes());
            } else {
                continue; // in progress: the next round
            }
            pending.remove(group);
        }
    }

    /** The lone receptions: each row found is stored after all; one not found within the hour is given up. */
    private void followUpLones() {
        List<PendingLone> round = new ArrayList<>(lones);
        if (round.isEmpty()) {
            return;
        }
        Map<List<String>, Long> found = new HashMap<>();
        boolean read;
        try {
            Object[] subjects = round.stream().map(PendingLone::subject).toArray();
            Object[] types = round.stream().map(PendingLone::msgType).toArray();
            Object[] traces = round.stream().map(PendingLone::traceParent).toArray();
            other.query(LONE_ROWS, ps -> {
                ps.setArray(1, ps.getConnection().createArrayOf("text", subjects));
                ps.setArray(2, ps.getConnection().createArrayOf("text", types));
                ps.setArray(3, ps.getConnection().createArrayOf("text", traces));
            }, rs -> {
                found.put(List.of(rs.getString("subject"), rs.getString("msg_type"), rs.getString("trace")), rs.getLong("id"));
            });
            read = true;
        } catch (RuntimeException unreachable) {
            // not known this round: asked again at the next, and given up at its hour all the same
            log.warn("Lone receptions answered 503 not looked up this round ({} pending): {}", round.size(),
                    LoggedFailure.describe(unreachable));
            read = false;
        }
        for (PendingLone lone : round) {
            Long id = found.get(List.of(lone.subject(), lone.msgType(), lone.traceParent()));
            if (id != null && lone.quiet()) {
                unsettled.increment();
                storedAfterAll.increment();
                log.warn(ALWAYS, "Inbox row {} ({} {}) was stored although its sender was answered 503: its connection"
                                + " failed after the insert committed (a backend ended while it waited for a synchronous"
                                + " standby); a retry of it is a second row of its subject (a SEND's a resend request)",
                        id, lone.subject(), lone.msgType());
            } else if (id != null) {
                storedAfterAll.increment();
                log.warn(ALWAYS, "Inbox row {} ({} {}) was stored after all: its insert completed after its sender was"
                        + " answered 503; a retry of it is a second row of its subject", id, lone.subject(), lone.msgType());
            } else if (lone.quiet()) {
                // given up once a round that could read comes past its minute (or, the database away, past the hour)
                long now = System.nanoTime();
                if (!((read && now - lone.deadline() >= 0) || now - lone.giveUp() >= 0)) {
                    continue;
                }
                log.debug("The reception of {} {} answered 503 on a failed connection: no row of it", lone.subject(),
                        lone.msgType());
            } else if (System.nanoTime() - lone.deadline() >= 0) {
                log.warn(ALWAYS, "The reception of {} {} answered 503 (trace {}): {} after {} min, no longer followed"
                                + " up; an insert still waiting would be stored later: look the subject up in the console",
                        lone.subject(), lone.msgType(), lone.traceParent(),
                        read ? "no row of it" : "its row could not be looked up", lasting.toMinutes());
            } else {
                continue; // not there yet: the next round
            }
            lones.remove(lone);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (followUps != null) {
                followUps.shutdownNow();
            }
        }
        List<Long> left = pending.stream().flatMap(p -> p.ids().stream()).toList();
        if (!left.isEmpty()) {
            log.warn(ALWAYS, "Inbox rows {} no longer followed up: the service is stopping; whether they are stored is"
                    + " not known; look them up in the console", left);
        }
        for (PendingLone lone : lones) {
            if (lone.quiet()) {
                continue; // most likely stored nothing (a connection found dead), and never named
            }
            log.warn(ALWAYS, "The reception of {} {} (trace {}) no longer followed up: the service is stopping; whether"
                    + " it is stored is not known; look the subject up in the console", lone.subject(), lone.msgType(),
                    lone.traceParent());
        }
    }
}
