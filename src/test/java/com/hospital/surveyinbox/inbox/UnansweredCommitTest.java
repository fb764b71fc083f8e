package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How a group's COMMIT that got no answer is settled ({@link InboxStore#committedAfterAll}), on a PostgreSQL of its
 * own that requires a synchronous standby which never answers (as a primary does while its standby stalls): every
 * commit with {@code synchronous_commit=on} waits for it.
 */
class UnansweredCommitTest {

    private static EmbeddedPostgres postgres;
    private static DataSource data;
    /** A database of the same server migrated as the service migrates it, for stores built by hand. */
    private static String inboxUrl;

    @BeforeAll
    static void startPrimaryWithoutItsStandby() throws Exception {
        // fsync on as in production (commit_delay, used below, applies only then)
        postgres = EmbeddedPostgres.builder().setServerConfig("synchronous_commit", "on").setServerConfig("fsync", "on").start();
        data = postgres.getPostgresDatabase();
        try (Connection setup = data.getConnection(); Statement st = setup.createStatement()) {
            st.execute("CREATE TABLE accepted (id int)");
            st.execute("CREATE DATABASE inbox");
        }
        inboxUrl = postgres.getJdbcUrl("postgres", "inbox");
        com.hospital.surveyinbox.config.FlywayConnection.migrate(com.hospital.surveyinbox.config.FlywayConnection.configure(
                org.flywaydb.core.Flyway.configure(), inboxUrl, "postgres", "", Duration.ofSeconds(5), new java.util.Properties())
                .locations("classpath:db/migration").load());
        standby("ghost"); // by ALTER SYSTEM, not a start option: a start option would outrank its release
    }

    /** Requires the named synchronous standby (none: '') from the next connection on. */
    private static void standby(String names) {
        JdbcTemplate admin = new JdbcTemplate(data);
        admin.execute("ALTER SYSTEM SET synchronous_standby_names = '" + names + "'");
        admin.queryForObject("SELECT pg_reload_conf()", Boolean.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> names.equals(admin.queryForObject("SHOW synchronous_standby_names", String.class)));
    }

    /** The backend and transaction of a row inserted on {@code connection} and not committed, as a group reads them. */
    private record Open(int pid, String xid, InboxStore.GroupBackend group) {
    }

    private static Open insertUncommitted(Connection connection, int id) throws SQLException {
        connection.setAutoCommit(false);
        try (Statement st = connection.createStatement()) {
            st.execute("INSERT INTO accepted VALUES (" + id + ")");
            try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), CAST(pg_current_xact_id() AS text),"
                    + " (SELECT CAST(backend_start AS text) FROM pg_stat_get_activity(pg_backend_pid())),"
                    + " CAST(pg_postmaster_start_time() AS text)")) {
                rs.next();
                return new Open(rs.getInt(1), rs.getString(2),
                        new InboxStore.GroupBackend(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getString(4)));
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    /**
     * A COMMIT waiting for the synchronous standby is not ended: ended, it commits on the primary alone (its record
     * is flushed) and the commit log says "committed": the group was answered "stored" for rows a failover to the
     * standby loses. It is waited for and, still waiting, counted as not committed (the sender gets 503 and retries).
     */
    @Test
    void aCommitWaitingForTheStandbyIsNeitherEndedNorAnsweredAsStored() throws Exception {
        JdbcTemplate other = new JdbcTemplate(data);
        Connection group;
        int pid;
        String xid;
        InboxStore.GroupBackend backend;
        CompletableFuture<Void> commit;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        do { // again if this COMMIT came before the server's processes had read the required standby (a reload is async)
            assertThat(System.nanoTime() - deadline).as("a COMMIT waiting for the standby within 60 s").isNegative();
            group = data.getConnection();
            Open open = insertUncommitted(group, 1);
            pid = open.pid();
            xid = open.xid();
            backend = open.group();
            Connection committing = group;
            commit = CompletableFuture.runAsync(() -> {
                try {
                    committing.commit();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            int waiting = pid;
            CompletableFuture<Void> sent = commit;
            await().atMost(Duration.ofSeconds(20)).until(() -> sent.isDone() || "SyncRep".equals(
                    other.queryForObject("SELECT wait_event FROM pg_stat_activity WHERE pid = ?", String.class, waiting)));
            if (commit.isDone()) {
                group.close(); // committed before the standby was required: this one is done with
            }
        } while (commit.isDone());

        assertThat(InboxStore.committedAfterAll(other, backend)).as("answered as stored").isFalse();
        assertThat(other.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Integer.class, pid))
                .as("the COMMIT's backend, still waiting for the standby").isEqualTo(1);
        assertThat(commit).isNotDone();

        // the standby requirement lifted: the COMMIT completes as it would once the standby answers
        standby("");
        try {
            commit.get(20, TimeUnit.SECONDS);
            assertThat(other.queryForObject("SELECT pg_xact_status(CAST(? AS xid8))", String.class, xid)).isEqualTo("committed");
        } finally {
            group.close();
            standby("ghost");
        }
    }

    /**
     * A COMMIT caught under way before its standby wait (on the CPU between two waits, flushing WAL — PostgreSQL 17
     * names that wait WalSync, not WALSync —, in a commit_delay): ending its backend then makes it commit on the
     * primary alone, as in the wait itself. Only a backend idle in its transaction, or waiting on a lock, a buffer pin
     * or a sleep, is ended (END_BACKENDS); this one is waited for and counted as not committed. Under the old deny-list
     * of three waits named the old way it was ended, committed without its standby, and the group was answered stored.
     */
    @Test
    void aCommitCaughtBeforeItsStandbyWaitIsNeitherEndedNorAnsweredAsStored() throws Exception {
        JdbcTemplate other = new JdbcTemplate(data);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        for (int row = 10; ; row++) {
            assertThat(System.nanoTime() - deadline).as("a COMMIT seen under way before its standby wait within 60 s").isNegative();
            Connection group = data.getConnection();
            try (Statement st = group.createStatement()) {
                st.execute("SET commit_delay = 100000"); // up to 0.1 s more before its commit record is flushed
                st.execute("SET commit_siblings = 0");
            }
            Open open = insertUncommitted(group, row);
            CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                try {
                    group.commit();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            String seen = null;
            while (!commit.isDone() && seen == null) {
                java.util.Map<String, Object> backend = other.queryForMap(
                        "SELECT state, COALESCE(wait_event, 'none') AS wait_event FROM pg_stat_activity WHERE pid = ?", open.pid());
                if ("active".equals(backend.get("state"))) {
                    seen = String.valueOf(backend.get("wait_event"));
                }
            }
            if (seen == null || seen.equals("SyncRep")) { // committed before the standby was required, or missed the window
                if (seen != null) {
                    standby("");
                    commit.get(20, TimeUnit.SECONDS);
                    standby("ghost");
                }
                group.close();
                continue;
            }

            assertThat(InboxStore.committedAfterAll(other, open.group())).as("answered as stored (caught in " + seen + ")")
                    .isFalse();
            assertThat(other.queryForObject("SELECT pg_xact_status(CAST(? AS xid8))", String.class, open.xid()))
                    .as("not committed on the primary alone (caught in " + seen + ")").isEqualTo("in progress");
            standby("");
            try {
                commit.get(20, TimeUnit.SECONDS);
                assertThat(other.queryForObject("SELECT pg_xact_status(CAST(? AS xid8))", String.class, open.xid())).isEqualTo("committed");
            } finally {
                group.close();
                standby("ghost");
            }
            return;
        }
    }

    /** A COMMIT that never reached its backend (idle in its transaction): the backend is ended, nothing committed. */
    @Test
    void aTransactionTheCommitNeverReachedIsEndedAndNotCommitted() throws Exception {
        try (Connection group = data.getConnection()) {
            Open open = insertUncommitted(group, 2);
            int pid = open.pid();
            JdbcTemplate other = new JdbcTemplate(data);
            assertThat(InboxStore.committedAfterAll(other, open.group())).isFalse();
            int ended = pid; // its transaction is gone at once, its process a moment later
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    other.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Integer.class, ended) == 0);
            assertThat(other.queryForObject("SELECT count(*) FROM accepted WHERE id = 2", Integer.class)).isZero();
        }
    }

    /**
     * The group's pid now another session's (a server restarted, a failover: pids are reused): that session, idle in a
     * transaction of its own, is not ended. Matched by pid alone, it was (a stranger's transaction lost: another pod's
     * group, a claim, an operator's psql). Played here by the same pid with another start.
     */
    @Test
    void aBackendThatOnlySharesTheGroupsPidIsNotEnded() throws Exception {
        try (Connection stranger = data.getConnection()) {
            Open open = insertUncommitted(stranger, 3);
            JdbcTemplate other = new JdbcTemplate(data);
            String earlier = other.queryForObject("SELECT CAST(CAST(? AS timestamptz) - INTERVAL '1 second' AS text)",
                    String.class, open.group().backendStart());
            InboxStore.GroupBackend gone = new InboxStore.GroupBackend(open.pid(), open.xid(), earlier, open.group().serverStart());

            assertThat(InboxStore.committedAfterAll(other, gone)).isFalse();
            assertThat(other.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND backend_xid IS NOT NULL",
                    Integer.class, open.pid())).as("the stranger's transaction, still open").isOne();
            stranger.rollback();
        }
    }

    /**
     * Settled on another server than the group's (a failover): its commit log says nothing of the group's xid (that
     * number may be another transaction's there, committed): counted as not committed, never answered stored.
     */
    @Test
    void aTransactionStatusReadOnAnotherServerIsNotTheGroups() throws Exception {
        JdbcTemplate other = new JdbcTemplate(data);
        String committedXid;
        try (Connection done = data.getConnection()) {
            Open open = insertUncommitted(done, 4);
            committedXid = open.xid();
            standby("");
            try {
                done.commit();
            } finally {
                standby("ghost");
            }
        }
        assertThat(other.queryForObject("SELECT pg_xact_status(CAST(? AS xid8))", String.class, committedXid)).isEqualTo("committed");
        String anotherServer = other.queryForObject("SELECT CAST(pg_postmaster_start_time() - INTERVAL '1 hour' AS text)", String.class);
        String someBackend = other.queryForObject("SELECT CAST(now() AS text)", String.class);

        assertThat(InboxStore.committedAfterAll(other, new InboxStore.GroupBackend(1, committedXid, someBackend, anotherServer)))
                .isFalse();
    }

    /**
     * A lone reception's autocommit insert whose backend is ended while it waits for the synchronous standby (a
     * switchover, an operator's pg_terminate_backend): it has committed on the primary, and its sender is answered 503
     * (no socket timeout: the connection failed). Its row is looked for and, found, counted (unsettled, stored) and
     * named. Only a timeout was followed up: this one was a 503 for a stored row that nothing counted or named.
     */
    @Test
    void aLoneInsertWhoseBackendIsEndedWhileItWaitsForTheStandbyIsCountedAndFollowedUp() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        com.hospital.surveyinbox.config.AdapterProperties properties = com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of());
        InboxStore store = new InboxStore(new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(
                new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl)), new PayloadCipher(properties), meters, properties);
        JdbcTemplate other = new JdbcTemplate(data);
        JdbcTemplate inbox = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl));
        Captured log = new Captured();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            String subject;
            CompletableFuture<Acceptance> insert;
            Integer pid;
            int tries = 0;
            do { // again if the insert went through before the server's processes had read the required standby
                assertThat(System.nanoTime() - deadline).as("a lone insert waiting for the standby within 60 s").isNegative();
                subject = "ENDED-LONE-" + ++tries;
                ReceivedMessage message = message(subject).inTrace(String.format("00-%032x-%016x-01", 700 + tries, 700 + tries));
                insert = CompletableFuture.supplyAsync(() -> store.acceptOne(message));
                CompletableFuture<Acceptance> sent = insert;
                await().atMost(Duration.ofSeconds(20)).until(() -> sent.isDone() || other.queryForObject(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = 'inbox'", Integer.class) > 0);
                pid = insert.isDone() ? null : other.queryForObject(
                        "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = 'inbox'", Integer.class);
            } while (pid == null);

            assertThat(other.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, pid)).isTrue();
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(insert::join);
            assertThat(failure).isNotNull();
            assertThat(DatabaseFailures.answerTimedOut(failure)).as("no socket timeout: " + failure).isFalse();
            assertThat(DatabaseFailures.unavailable(failure)).as("answered 503: " + failure).isTrue();
            assertThat(inbox.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Integer.class, subject))
                    .as("committed on the primary").isOne();
            long id = inbox.queryForObject("SELECT id FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject);
            await().atMost(Duration.ofSeconds(30)).until(() -> meters.get("adapter.reception.unsettled.stored").counter().count() == 1.0);
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(1.0);
            String named = subject;
            assertThat(log.lines()).anySatisfy(m -> assertThat(m)
                    .startsWith("Inbox row " + id + " (" + named + " SEND) was stored although its sender was answered 503"));
        } finally {
            log.close();
            store.destroy();
        }
    }

    /** UnsettledReceptions' lines while open (its follow-up thread appends them under the appender's lock). */
    private static final class Captured implements AutoCloseable {
        private final ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(UnsettledReceptions.class);
        private final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events =
                new ch.qos.logback.core.read.ListAppender<>();

        Captured() {
            events.start();
            logger.addAppender(events);
        }

        java.util.List<String> lines() {
            synchronized (events) {
                return events.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
            }
        }

        @Override
        public void close() {
            logger.detachAppender(events);
        }
    }

    private static ReceivedMessage message(String subject) {
        return message(subject, null);
    }

    private static ReceivedMessage message(String subject, String idempotencyKey) {
        return new ReceivedMessage(subject, "SEND", ("{\"srvyDrawupNo\":\"" + subject + "\"}").getBytes(
                java.nio.charset.StandardCharsets.UTF_8), idempotencyKey);
    }

    /**
     * A lone reception is followed up for a bounded time and in a bounded number: one whose row never appears is given
     * up after the follow-up's time ("no row of it"); one whose lookup keeps failing (its database away) is given up
     * all the same ("could not be looked up"), not kept and retried for good; one without a trace is not followed (its
     * row could not be told from its retry's); beyond the bound, one is named and not followed; and so is one that
     * comes once the follow-up has closed.
     */
    @Test
    void loneReceptionsAreFollowedUpForABoundedTimeAndInABoundedNumber() throws Exception {
        int nothingListens;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            nothingListens = socket.getLocalPort();
        }
        JdbcTemplate inbox = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl));
        JdbcTemplate away = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(
                "jdbc:postgresql://127.0.0.1:" + nothingListens + "/inbox?connectTimeout=1", "postgres", ""));
        Captured log = new Captured();
        RuntimeException timedOut = new RuntimeException("Read timed out");
        try (UnsettledReceptions here = new UnsettledReceptions(inbox, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                Duration.ofMillis(100), Duration.ofSeconds(1), 2);
             UnsettledReceptions cutOff = new UnsettledReceptions(away, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
                     Duration.ofMillis(100), Duration.ofSeconds(1), 2)) {
            here.lone(message("LONE-NEVER").inTrace(String.format("00-%032x-%016x-01", 901, 901)), timedOut);
            here.lone(message("LONE-UNTRACED"), timedOut);
            here.lone(message("LONE-SECOND").inTrace(String.format("00-%032x-%016x-01", 902, 902)), timedOut);
            here.lone(message("LONE-BEYOND").inTrace(String.format("00-%032x-%016x-01", 903, 903)), timedOut);
            cutOff.lone(message("LONE-AWAY").inTrace(String.format("00-%032x-%016x-01", 904, 904)), timedOut);

            // appended from the follow-up threads under the appender's lock (AppenderBase.doAppend)
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(log.lines())
                    .anySatisfy(m -> assertThat(m).startsWith("The reception of LONE-NEVER SEND answered 503")
                            .contains("no row of it after"))
                    .anySatisfy(m -> assertThat(m).startsWith("The reception of LONE-AWAY SEND answered 503")
                            .contains("its row could not be looked up")));
            // one whose insert timed out as the service stops (a request outliving the graceful shutdown) is named too
            cutOff.close();
            cutOff.lone(message("LONE-LATE").inTrace(String.format("00-%032x-%016x-01", 905, 905)), timedOut);
            assertThat(log.lines())
                    .anySatisfy(m -> assertThat(m).startsWith("The reception of LONE-LATE SEND (trace")
                            .contains("not followed up: the service is stopping"))
                    .anySatisfy(m -> assertThat(m).startsWith("The reception of LONE-UNTRACED SEND has no trace"))
                    .anySatisfy(m -> assertThat(m).startsWith("The reception of LONE-BEYOND SEND is not followed up: 2 are already"))
                    .noneSatisfy(m -> assertThat(m).startsWith("The reception of LONE-UNTRACED SEND answered 503"));
        } finally {
            log.close();
        }
    }

    /**
     * A lone reception whose connection failed under it is looked for quietly: one whose row is there (committed
     * before its backend ended) is counted and named; one that stored nothing (a connection found dead before its
     * insert ran, what a switchover does to a pool's idle connections) is neither counted nor named, and given up
     * after its short look. Counted at once, every switchover under load raised the unsettled alert.
     */
    @Test
    void aLoneReceptionWhoseConnectionFailedIsCountedOnlyOnceItsRowIsFound() throws Exception {
        JdbcTemplate inbox = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl));
        String storedTrace = String.format("00-%032x-%016x-01", 911, 911);
        standby("");
        try {
            inbox.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, trace_parent) VALUES ('LOST-STORED', 'SEND', 'RECEIVED', ?)",
                    storedTrace);
        } finally {
            standby("ghost");
        }
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Captured log = new Captured();
        try (UnsettledReceptions here = new UnsettledReceptions(inbox, meters, Duration.ofMillis(100), Duration.ofSeconds(1), 10)) {
            here.loneConnectionLost(message("LOST-NEVER").inTrace(String.format("00-%032x-%016x-01", 912, 912)));
            here.loneConnectionLost(message("LOST-STORED").inTrace(storedTrace));
            await().atMost(Duration.ofSeconds(20)).until(() -> meters.get("adapter.reception.unsettled.stored").counter().count() == 1.0);
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(1.0);
            // the other given up after its look (a second here), without a count or a line
            await().atMost(Duration.ofSeconds(20)).until(() -> here.lonesPending() == 0);
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(1.0);
            assertThat(log.lines()).anySatisfy(m -> assertThat(m).contains("(LOST-STORED SEND) was stored although its sender was answered 503"))
                    .noneSatisfy(m -> assertThat(m).contains("LOST-NEVER"));
        } finally {
            log.close();
        }
    }

    /**
     * The database away after the switchover that failed a lone reception's connection: its quiet look does not run
     * out while no round can read; once the database answers, its row is found and counted. Given up after its
     * minute of failed rounds, a row the switchover kept was never named.
     */
    @Test
    void aQuietLookOutlastsADatabaseAwayUntilItsRowCanBeRead() throws Exception {
        String trace = String.format("00-%032x-%016x-01", 913, 913);
        standby("");
        try {
            new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl)).update(
                    "INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, trace_parent) VALUES ('LOST-AWAY', 'SEND', 'RECEIVED', ?)", trace);
        } finally {
            standby("ghost");
        }
        java.util.concurrent.atomic.AtomicBoolean away = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        JdbcTemplate flaky = new JdbcTemplate(new org.springframework.jdbc.datasource.DelegatingDataSource(
                new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl)) {
            @Override
            public Connection getConnection() throws SQLException {
                if (away.get()) {
                    refused.incrementAndGet();
                    throw new SQLException("the database is away", "08001");
                }
                return super.getConnection();
            }
        });
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        try (UnsettledReceptions here = new UnsettledReceptions(flaky, meters, Duration.ofMillis(50), Duration.ofSeconds(30), 10,
                Duration.ofMillis(100))) {
            here.loneConnectionLost(message("LOST-AWAY").inTrace(trace));
            // rounds that could not read, well past its quiet look's 100 ms
            await().atMost(Duration.ofSeconds(20)).until(() -> refused.get() >= 6);
            assertThat(here.lonesPending()).as("still looked for").isOne();
            away.set(false);
            await().atMost(Duration.ofSeconds(20)).until(() -> meters.get("adapter.reception.unsettled.stored").counter().count() == 1.0);
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(1.0);
        }
    }

    /**
     * Receptions whose write got no answer while the standby does not answer: a lone row's autocommit insert and a
     * group's COMMIT each outlive the socket timeout and are answered 503 — their rows may be stored all the same.
     * Each is counted ({@code adapter.reception.unsettled}) and named at WARN (the lone row by subject, the group by
     * its inbox ids), and both are followed up until their fate is known: once the standby answers, "stored after
     * all", counted, the group's ids and the lone row's (found by its subject and trace). A member with an
     * Idempotency-Key is not counted (its retry gets the first row back). A COMMIT refused with an answer (a trigger) is settled: not counted.
     */
    @Test
    void receptionsWhoseWriteGotNoAnswerAreCountedNamedAndTheGroupFollowedUp() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        com.hospital.surveyinbox.config.AdapterProperties properties = com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of());
        org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate named = new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(
                new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl + "&socketTimeout=4"));
        JdbcTemplate inbox = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(inboxUrl));
        InboxStore store = new InboxStore(named, new PayloadCipher(properties), meters, properties);
        Captured log = new Captured();
        try {
            // again while a write went through before the server's processes had read the required standby
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            String lone;
            RuntimeException loneFailure = null;
            int tries = 0;
            do {
                assertThat(System.nanoTime() - deadline).as("an insert waiting for the standby within 60 s").isNegative();
                lone = "UNSETTLED-LONE-" + ++tries;
                try {
                    // in a trace of its own, as each reception is (InboxStore.accept): the follow-up finds its row by it
                    store.acceptOne(message(lone).inTrace(String.format("00-%032x-%016x-01", tries, tries)));
                } catch (RuntimeException e) {
                    loneFailure = e;
                }
            } while (loneFailure == null);
            assertThat(DatabaseFailures.answerLost(loneFailure)).as(String.valueOf(loneFailure)).isTrue();
            assertThat(DatabaseFailures.unavailable(loneFailure)).as("answered 503").isTrue();
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(1.0);
            String loneSubject = lone;
            assertThat(log.lines()).anySatisfy(m -> assertThat(m)
                    .contains("a row of " + loneSubject + " SEND may be stored although its sender is answered 503"));

            RuntimeException groupFailure = null;
            String a;
            String b;
            do {
                assertThat(System.nanoTime() - deadline).as("a COMMIT waiting for the standby within 60 s").isNegative();
                a = "UNSETTLED-A-" + ++tries;
                b = "UNSETTLED-B-" + tries;
                try {
                    store.acceptGroup(java.util.List.of(message(a), message(b), message("UNSETTLED-KEYED-" + tries,
                            "key-" + tries)), Duration.ofSeconds(3));
                } catch (RuntimeException e) {
                    groupFailure = e;
                }
            } while (groupFailure == null);
            assertThat(DatabaseFailures.unavailable(groupFailure)).as("answered 503: " + groupFailure).isTrue();
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(3.0);
            assertThat(meters.get("adapter.reception.unsettled.stored").counter().count()).isZero();
            String named503 = log.lines().stream()
                    .filter(m -> m.contains("may be stored although their senders are answered 503")).findFirst().orElseThrow();
            java.util.regex.Matcher ids = java.util.regex.Pattern.compile("inbox rows \\[(\\d+), (\\d+)\\] may").matcher(named503);
            assertThat(ids.find()).as(named503).isTrue();

            // the standby answers (here: is no longer required): the waiting COMMITs complete
            standby("");
            // the group's two rows and the lone row
            await().atMost(Duration.ofSeconds(30)).until(() -> meters.get("adapter.reception.unsettled.stored").counter().count() == 3.0);
            assertThat(log.lines()).anySatisfy(m -> assertThat(m)
                    .contains("Inbox rows [" + ids.group(1) + ", " + ids.group(2) + "] were stored after all"));
            long loneId = inbox.queryForObject("SELECT id FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, loneSubject);
            assertThat(log.lines()).anySatisfy(m -> assertThat(m)
                    .contains("Inbox row " + loneId + " (" + loneSubject + " SEND) was stored after all"));
            assertThat(inbox.queryForObject("SELECT srvy_drawup_no FROM inbox_message WHERE id = ?", String.class,
                    Long.parseLong(ids.group(1)))).isEqualTo(a);
            assertThat(inbox.queryForObject("SELECT srvy_drawup_no FROM inbox_message WHERE id = ?", String.class,
                    Long.parseLong(ids.group(2)))).isEqualTo(b);
            assertThat(inbox.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Integer.class, lone))
                    .as("the lone row, stored too").isOne();

            // a COMMIT refused with an answer is settled (not committed): a 503 that stores nothing, not counted
            try (com.hospital.surveyinbox.support.CommitRefusal ignored = com.hospital.surveyinbox.support.CommitRefusal
                    .forSubjectsLike(inbox, "UNSETTLED-REFUSED-%")) {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.acceptGroup(
                        java.util.List.of(message("UNSETTLED-REFUSED-1"), message("UNSETTLED-REFUSED-2")), Duration.ofSeconds(3)))
                        .hasStackTraceContaining(com.hospital.surveyinbox.support.CommitRefusal.MESSAGE);
            }
            assertThat(meters.get("adapter.reception.unsettled").counter().count()).isEqualTo(3.0);
        } finally {
            log.close();
            store.destroy();
            standby("ghost");
        }
    }
}
