package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.inbox.Acceptance;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/** adapter.inbox.enabled=false: new arrivals are registered synchronously while stored rows drain. */
@TestPropertySource(properties = {
        "adapter.inbox.enabled=false",
        "adapter.kafka.topic=toggle-tests",
        "adapter.kafka.group-id=toggle-tests",
        "spring.quartz.scheduler-name=toggle-tests",
        // room for the 2.5 s patient lookups below (the tests' default is 1 s)
        "adapter.http.response-timeout=PT4S"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
@org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
class RollbackToggleTest extends IntegrationTest {

    @Autowired
    InboxStore store;

    @Autowired
    com.hospital.surveyinbox.processing.DownstreamCircuits circuits;

    @Autowired
    com.hospital.surveyinbox.reception.SynchronousRegistration slots;

    @Autowired
    org.apache.camel.ProducerTemplate producer;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    static String send(String subject, String extra) {
        return "{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P-" + subject + "\",\"formCd\":\"F100\""
                + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    /**
     * Synchronous registrations run at most adapter.inbox.synchronous-concurrency (24) at once: with every slot taken
     * (24 registrations under way), another is answered 503 at once with nothing registered, and counted. Unbounded, a
     * burst held every request thread and, beyond the pooled connections per host (CamelHttpTuning#connectionsPerHost), waited for a connection
     * until the timeouts opened the circuit: a local shortage taken for an outage. The slots come back however a
     * registration ends (a registration, a refusal, a failure).
     */
    @Test
    void beyondTheSynchronousSlotsARegistrationIsAnswered503AtOnceWithNothingRegistered() {
        assertThat(slots.available()).isEqualTo(24);
        int taken = 0;
        while (slots.enter()) {
            taken++;
        }
        assertThat(taken).isEqualTo(24);
        String subject = uniqueSubject("SYNCBUSY");
        double countedBefore = busyCounted();
        try {
            Reply reply = client.receive(send(subject, ""));
            assertThat(reply.status()).as(reply.body()).isEqualTo(503);
            assertThat(reply.header("X-Result-Code")).isEqualTo("N");
            assertThat(reply.json().get("resultMessage").asText()).contains("too many registrations at once");
            assertThat(simulator().events(subject)).as("nothing registered").isEmpty();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
            // counted apart from a database's 503s (the reception alert's runbook reads it)
            assertThat(busyCounted()).isEqualTo(countedBefore + 1);
        } finally {
            for (int i = 0; i < taken; i++) {
                slots.leave();
            }
        }
        // a registration, one refused by a downstream and one failing on a system error each give their slot back
        assertThat(client.receive(send(subject, "")).status()).isEqualTo(200);
        assertThat(client.receive(send(uniqueSubject("SYNCBUSY"), "").replace("F100", "UNREG-1")).status()).isEqualTo(200);
        String patno = "P-" + uniqueSubject("SYNCDOWN");
        DownstreamSimulator.Fault down = simulator().failWhen("GET /legacy/patients/" + patno, 503, "{\"error\":\"down\"}");
        try {
            assertThat(client.receive("{\"srvyDrawupNo\":\"" + uniqueSubject("SYNCDOWN") + "\",\"patno\":\"" + patno
                    + "\",\"formCd\":\"F100\"}").status()).isEqualTo(503);
        } finally {
            simulator().remove(down);
            circuits.reset("legacy");
        }
        assertThat(slots.available()).isEqualTo(24);
    }

    private double busyCounted() {
        String scrape = client.management("/actuator/prometheus").body();
        java.util.regex.Matcher counted = java.util.regex.Pattern.compile(
                "(?m)^adapter_reception_synchronous_busy_total\\{[^}]*\\} ([0-9.E]+)$").matcher(scrape);
        return counted.find() ? Double.parseDouble(counted.group(1)) : 0;
    }

    /**
     * The record of a synchronous registration that the database refuses once as "not now" (a serialization failure,
     * as after a failover) is tried again and kept: a later SEND is still a resend. It was logged and dropped, and that
     * subject's next SEND went out as a first SEND, nothing resent.
     */
    @Test
    void aRecordTheDatabaseRefusesOnceIsTriedAgainAndKept() {
        String subject = uniqueSubject("SYNCREC");
        String sequence = "sync_record_fail_" + Math.abs(System.nanoTime());
        jdbc.execute("CREATE SEQUENCE " + sequence);
        jdbc.execute("CREATE FUNCTION " + sequence + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "IF NEW.srvy_drawup_no = '" + subject + "' AND NEW.status = 'COMPLETED' AND nextval('" + sequence + "') = 1 THEN "
                + "RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END IF; RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER " + sequence + " BEFORE INSERT ON inbox_message FOR EACH ROW EXECUTE FUNCTION " + sequence + "()");
        try {
            Reply reply = client.receive(send(subject, ""));

            assertThat(reply.status()).isEqualTo(200);
            assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
            assertThat(jdbc.queryForObject("SELECT last_value FROM " + sequence, Long.class)).as("refused once, then taken").isEqualTo(2);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ? AND status = 'COMPLETED'",
                    Long.class, subject)).isOne();
        } finally {
            jdbc.execute("DROP TRIGGER " + sequence + " ON inbox_message");
            jdbc.execute("DROP FUNCTION " + sequence + "()");
            jdbc.execute("DROP SEQUENCE " + sequence);
        }
        // so a second SEND is a resend
        assertThat(client.receive(send(subject, "")).status()).isEqualTo(200);
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
    }

    /**
     * A record the database refuses for good (all four tries) never changes the answer: the registration happened,
     * 200 Y. Before its error clauses continued, they handled the exception, which ends the calling route too, and the
     * registration went unanswered (a 500 without X-Result-Code, the sender retrying a registered message).
     */
    @Test
    void aRecordTheDatabaseRefusesForGoodStillAnswersTheRegistration() {
        String subject = uniqueSubject("SYNCNOREC");
        String function = "sync_record_refused_" + Math.abs(System.nanoTime());
        jdbc.execute("CREATE FUNCTION " + function + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "IF NEW.srvy_drawup_no = '" + subject + "' AND NEW.status = 'COMPLETED' THEN "
                + "RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END IF; RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER " + function + " BEFORE INSERT ON inbox_message FOR EACH ROW EXECUTE FUNCTION " + function + "()");
        // exported at zero before any (the alert reads an increase): one more once this record is given up
        String scrape = client.management("/actuator/prometheus").body();
        double before = unrecorded(scrape);
        try {
            Reply reply = client.receive(send(subject, ""));

            assertThat(reply.status()).as(reply.body()).isEqualTo(200);
            assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
            assertThat(unrecorded(client.management("/actuator/prometheus").body())).isEqualTo(before + 1);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM synchronous_lease WHERE srvy_drawup_no = ?", Long.class, subject))
                    .as("lease given back").isZero();
        } finally {
            jdbc.execute("DROP TRIGGER " + function + " ON inbox_message");
            jdbc.execute("DROP FUNCTION " + function + "()");
        }
    }

    /**
     * A SEND of {@code subject} sent on {@code senders}, once its synchronous registration is under way (its patient
     * lookup, slowed by the test, seen by the simulator).
     */
    private java.util.concurrent.Future<Reply> registering(java.util.concurrent.ExecutorService senders, String subject,
                                                           java.util.Map<String, String> headers) {
        return registering(senders, subject, "", headers);
    }

    private java.util.concurrent.Future<Reply> registering(java.util.concurrent.ExecutorService senders, String subject,
                                                           String extra, java.util.Map<String, String> headers) {
        java.util.concurrent.Future<Reply> sent = senders.submit(() -> client.receive(send(subject, extra), headers));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> simulator().requests().stream()
                .anyMatch(r -> r.line().startsWith("GET /legacy/patients/P-" + subject)));
        return sent;
    }

    /** adapter_reception_synchronous_unrecorded_total in a scrape (one series: the pod's); fails when it is not exported. */
    private static double unrecorded(String scrape) {
        return scrape.lines().filter(l -> l.startsWith("adapter_reception_synchronous_unrecorded_total"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).reduce(Double::sum)
                .orElseThrow(() -> new AssertionError("adapter_reception_synchronous_unrecorded_total not exported"));
    }

    /**
     * A sender's W3C baggage does not ride along on the downstream calls of a synchronous registration (docs/security.md:
     * nothing of the request goes downstream but the W3C trace context): the registration runs on the request's thread, inside the trace the
     * sender's traceparent opened, and only the W3C trace context goes out (traceparent, and the sender's tracestate).
     */
    @Test
    void aSendersBaggageIsNotSentDownstream() {
        String subject = uniqueSubject("SYNCBAG");
        int before = simulator().requests().size();

        Reply reply = client.receive(send(subject, ""), java.util.Map.of("baggage", "ward=oncology,caller=P-" + subject,
                "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate", "vendor=opaque"));

        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        java.util.List<DownstreamSimulator.Request> sent = simulator().requests().subList(before, simulator().requests().size());
        assertThat(sent).as("the registration's calls").hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy(request -> {
                    assertThat(request.header("baggage")).as(request.line()).isNull();
                    assertThat(request.header("traceparent")).as(request.line()).startsWith("00-0af7651916cd43dd8448eb211c80319c-");
                    // the W3C trace context carries a sender's tracestate on, as that standard asks (docs/security.md)
                    assertThat(request.header("tracestate")).as(request.line()).isEqualTo("vendor=opaque");
                });
    }

    /** What was registered stays on record as a COMPLETED row without payload, no reply owed, no event to send. */
    @Test
    void answersWithTheRegistrationOutcomeAndKeepsARecordWithoutThePayload() {
        String subject = uniqueSubject("SYNC");

        Reply reply = client.receive(send(subject, ""));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
        assertThat(reply.json().get("resultCode").asText()).isEqualTo("Y");
        // a success carries its inboxId (CONTRACT §1): the record's
        assertThat(reply.json().get("inboxId").asText()).isEqualTo(String.valueOf(jdbc.queryForObject(
                "SELECT id FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)));
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1); // registered before the answer
        assertThat(jdbc.queryForList("SELECT msg_type, status, attempts, payload IS NULL AS no_payload, reply_status, "
                + "published_at IS NOT NULL AS published FROM inbox_message WHERE srvy_drawup_no = ?", subject))
                .singleElement().isEqualTo(java.util.Map.of("msg_type", "SEND", "status", "COMPLETED", "attempts", 1,
                        "no_payload", true, "reply_status", "NONE", "published", true));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt a JOIN inbox_message m ON m.id = a.inbox_id "
                + "WHERE m.srvy_drawup_no = ? AND a.outcome = 'COMPLETED' AND a.finished_at IS NOT NULL", Long.class, subject)).isEqualTo(1);

        // registered without a notification: a success too (200 Y with its reason), with its inboxId
        String quiet = uniqueSubject("SYNCQUIET");
        Reply skipped = client.receive(send(quiet, "\"alimtalkYn\":\"N\""));
        assertThat(skipped.header("X-Result-Code")).isEqualTo("Y");
        assertThat(skipped.json().get("inboxId").asText()).isEqualTo(String.valueOf(jdbc.queryForObject(
                "SELECT id FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, quiet)));
    }

    /**
     * A SEND whose earlier SEND was registered synchronously is a resend request (CONTRACT §1), as it would be had
     * the first gone through the inbox: without the record the second was sent as a first SEND, the survey side
     * answered "key already exists" and nothing was resent.
     */
    @Test
    void aSecondSendOfASubjectRegisteredSynchronouslyIsAResend() {
        String subject = uniqueSubject("SYNCRE");

        assertThat(client.receive(send(subject, "")).header("X-Result-Code")).isEqualTo("Y");
        Reply again = client.receive(send(subject, ""));

        assertThat(again.status()).isEqualTo(200);
        assertThat(again.header("X-Result-Code")).isEqualTo("Y");
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ? AND status = 'COMPLETED'",
                Long.class, subject)).isEqualTo(2);
    }

    /**
     * A sender's retry of a synchronous POST (same Idempotency-Key) is a replay, not a second SEND: answered with the
     * recorded row and nothing more. Registered again it would have become a resend (the first is on record) and
     * notified the patient twice.
     */
    @org.junit.jupiter.params.ParameterizedTest
    // a plain key, a quoted one (the IETF draft's form) and the text null: Camel's bean binding strips quotes and
    // turns "null" into null when it binds a String parameter, so the check takes the whole message
    @org.junit.jupiter.params.provider.ValueSource(strings = {"key-%s", "\"key-%s\"", "null"})
    void aReplayedIdempotencyKeyIsAnsweredWithItsRowAndNeitherRegisteredNorResent(String keyFormat) {
        String subject = uniqueSubject("SYNCKEY");
        String keyValue = keyFormat.equals("null") ? "null" : keyFormat.formatted(subject);
        jdbc.update("DELETE FROM inbox_attempt WHERE inbox_id IN (SELECT id FROM inbox_message WHERE idempotency_key = 'null')");
        jdbc.update("DELETE FROM inbox_message WHERE idempotency_key = 'null'");
        java.util.Map<String, String> key = java.util.Map.of("Idempotency-Key", keyValue);

        assertThat(client.receive(send(subject, ""), key).header("X-Result-Code")).isEqualTo("Y");
        Reply replay = client.receive(send(subject, ""), key);

        assertThat(replay.status()).isEqualTo(200);
        assertThat(replay.header("X-Result-Code")).isEqualTo("Y");
        assertThat(replay.json().get("inboxId").asText()).isEqualTo(String.valueOf(jdbc.queryForObject(
                "SELECT id FROM inbox_message WHERE idempotency_key = ?", Long.class, keyValue)));
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isEqualTo(1);
    }

    /**
     * A sender's retry (same Idempotency-Key) while its first POST is still registering is answered 503 "please
     * retry", not registered beside it (the subject's lease); registered beside it, a resend retried so was resent
     * twice. Its next retry, once the first is on record, is a replay: answered with the recorded row.
     */
    @Test
    void aRetryWhileTheFirstIsRegisteringIsAnswered503AndItsNextRetryIsAReplay() throws Exception {
        String subject = uniqueSubject("SYNCRACE");
        java.util.Map<String, String> key = java.util.Map.of("Idempotency-Key", "race-" + subject);
        // the patient lookup slow enough (under this class's 4 s response timeout) that the next request, sent once the lookup
        // is seen, meets the registration still under way on a loaded machine (at 600 ms it once came too late)
        simulator().setLatency(new DownstreamSimulator.Latency(0, 2, 2500, 2600, 0, 2));
        java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(1);
        try {
            // the retry once the first is registering (its patient lookup under way), before it is on record
            java.util.concurrent.Future<Reply> first = registering(senders, subject, key);
            Reply retry = client.receive(send(subject, ""), key);
            assertThat(retry.status()).isEqualTo(503);
            assertThat(retry.body()).contains("a message of this subject is being registered");
            Reply a = first.get(30, java.util.concurrent.TimeUnit.SECONDS);
            String recorded = String.valueOf(jdbc.queryForObject("SELECT id FROM inbox_message WHERE idempotency_key = ?",
                    Long.class, "race-" + subject));
            assertThat(a.header("X-Result-Code")).isEqualTo("Y");
            assertThat(a.json().path("inboxId").asText()).isEqualTo(recorded);

            Reply replay = client.receive(send(subject, ""), key);
            assertThat(replay.header("X-Result-Code")).isEqualTo("Y");
            assertThat(replay.json().path("inboxId").asText()).isEqualTo(recorded);
            assertThat(simulator().requests().stream().filter(r -> r.line().startsWith("GET /legacy/patients/P-" + subject)))
                    .as("patient lookups: registered once").hasSize(1);
        } finally {
            senders.shutdownNow();
            simulator().setLatency(DownstreamSimulator.Latency.FAST);
        }
    }

    /**
     * A retry whose claim began before the first registration was recorded and that takes the subject's lease just
     * after the first gave it back: the claim's key check read its start's snapshot (key not on record), so it
     * registered again, as a resend of the SEND now on record (the patient notified twice). The key is read again once
     * the lease is held: a replay, answered with the first's row. The instant is held open here: a transaction
     * deletes the first's lease row without committing, the retry's claim waits on it, the first is recorded, then
     * the deletion commits.
     */
    @Test
    void aRetryThatTakesTheLeaseJustAfterTheFirstWasRecordedIsAReplayNotAResend() throws Exception {
        String subject = uniqueSubject("SYNCINSTANT");
        String idempotencyKey = "instant-" + subject;
        java.util.Map<String, String> key = java.util.Map.of("Idempotency-Key", idempotencyKey);
        simulator().setLatency(new DownstreamSimulator.Latency(0, 2, 600, 700, 0, 2)); // the patient lookup: slow
        java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (java.sql.Connection lease = jdbc.getDataSource().getConnection()) {
            // the first is registering (its patient lookup under way, its lease held)
            java.util.concurrent.Future<Reply> first = registering(senders, subject, key);
            lease.setAutoCommit(false);
            try (java.sql.PreparedStatement delete = lease.prepareStatement("DELETE FROM synchronous_lease WHERE srvy_drawup_no = ?")) {
                delete.setString(1, subject);
                assertThat(delete.executeUpdate()).isOne();
            }
            java.util.concurrent.Future<Reply> retry = senders.submit(() -> client.receive(send(subject, ""), key));
            // the retry's claim waits for the lease row; the first is then recorded (its release waits on the row too)
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(3)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH checks AS%'",
                    Long.class) > 0);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(3)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM inbox_message WHERE idempotency_key = ?", Long.class, idempotencyKey) == 1);
            lease.commit();

            Reply a = first.get(30, java.util.concurrent.TimeUnit.SECONDS);
            Reply b = retry.get(30, java.util.concurrent.TimeUnit.SECONDS);
            String recorded = String.valueOf(jdbc.queryForObject("SELECT id FROM inbox_message WHERE idempotency_key = ?",
                    Long.class, idempotencyKey));
            assertThat(a.header("X-Result-Code")).isEqualTo("Y");
            assertThat(a.json().path("inboxId").asText()).isEqualTo(recorded);
            assertThat(b.status()).as(b.body()).isEqualTo(200);
            assertThat(b.header("X-Result-Code")).isEqualTo("Y");
            assertThat(b.json().path("inboxId").asText()).isEqualTo(recorded);
            assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).as("registered once, never resent")
                    .containsExactly("BUNDLE");
        } finally {
            senders.shutdownNow();
            simulator().setLatency(DownstreamSimulator.Latency.FAST);
        }
    }

    /**
     * The toggle rolling out: a pod still in inbox mode stores the subject's second SEND while a synchronous pod
     * registers its first. The record's id was taken at record time, after the stored row's: the row, registered once
     * the lease was given back, saw no completed SEND before it, went out as a first SEND (the bundle existing,
     * nothing sent) and the resend was lost. The record's id is reserved with the lease now: the row comes after it.
     */
    @Test
    void aSendAnInboxModePodStoresWhileTheFirstRegistersSynchronouslyIsAResend() throws Exception {
        String subject = uniqueSubject("SYNCMIX");
        StoredMeanwhile mix = storedWhileRegistering(subject, "", null);
        Acceptance second = mix.stored();
        assertThat(mix.first().header("X-Result-Code")).isEqualTo("Y");
        assertThat(Long.parseLong(mix.first().json().path("inboxId").asText())).as("the record before the stored row")
                .isLessThan(second.inboxId());

        // stored without its event (the store alone): the lease's release republishes the row it held back, at
        // once (this context runs no redelivery job: before, the row waited for its lost-event-after)
        new Rows(jdbc).awaitStatus(Long.toString(second.inboxId()), "COMPLETED");
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
    }

    /** The first's answer, and the row an inbox-mode pod stored while the first registered synchronously. */
    private record StoredMeanwhile(Reply first, Acceptance stored) {
    }

    /**
     * A SEND of {@code subject} registered synchronously (its patient lookup slow) and, once that lookup runs, the same
     * message stored as an inbox-mode pod stores it (the store alone: no event), with {@code idempotencyKey} on both
     * when not null.
     */
    private StoredMeanwhile storedWhileRegistering(String subject, String extra, String idempotencyKey) throws Exception {
        simulator().setLatency(new DownstreamSimulator.Latency(0, 2, 600, 700, 0, 2)); // the patient lookup: slow
        java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(1);
        try {
            java.util.concurrent.Future<Reply> first = registering(senders, subject, extra,
                    idempotencyKey == null ? java.util.Map.of() : java.util.Map.of("Idempotency-Key", idempotencyKey));
            Acceptance stored = store.accept(new ReceivedMessage(subject, "SEND",
                    send(subject, extra).getBytes(StandardCharsets.UTF_8), idempotencyKey));
            return new StoredMeanwhile(first.get(30, java.util.concurrent.TimeUnit.SECONDS), stored);
        } finally {
            senders.shutdownNow();
            simulator().setLatency(DownstreamSimulator.Latency.FAST);
        }
    }

    /**
     * A replay (below) of a registration whose outcome owes a reply (alimtalkYn N: NOTIFY_SKIPPED): the synchronous
     * answer carrying it went to a sender that had given up, and the retry's sender was answered "received": the reply
     * is opened on the replay, for the redelivery job.
     */
    @Test
    void aReplayOfARegistrationThatOwesAReplyOpensItForTheRedeliveryJob() throws Exception {
        String subject = uniqueSubject("SYNCMIXREPLY");
        StoredMeanwhile mix = storedWhileRegistering(subject, "\"alimtalkYn\":\"N\"", "mixreply-" + subject);
        assertThat(mix.first().header("X-Result-Code")).isEqualTo("Y");
        assertThat(jdbc.queryForMap("SELECT status, reply_status, reply_reason_code FROM inbox_message WHERE id = ?",
                mix.stored().inboxId())).containsEntry("status", "COMPLETED").containsEntry("reply_status", "PENDING")
                .containsEntry("reply_reason_code", "NOTIFY_SKIPPED");
    }

    /**
     * While the toggle rolls out: the sender's retry of a message registering synchronously on one pod (the same
     * Idempotency-Key; its first try timed out at the sender) reaches a pod still in inbox mode and is stored, the key
     * not on record yet. That row is the registration's replay: completed as such when the registration finds its key
     * taken, answered with its id, and its event refused by the claim. Left RECEIVED, it was claimed once the lease
     * was given back and registered again, as a resend of the SEND now on record: the patient notified twice.
     */
    @Test
    void aRetryAnInboxModePodStoredWhileTheFirstRegistersIsItsReplayNotAResend() throws Exception {
        String subject = uniqueSubject("SYNCMIXKEY");
        StoredMeanwhile mix = storedWhileRegistering(subject, "", "mix-" + subject);
        Acceptance retry = mix.stored();
        assertThat(retry.fresh()).as("stored: the key not on record yet").isTrue();
        assertThat(mix.first().header("X-Result-Code")).isEqualTo("Y");
        assertThat(mix.first().json().path("inboxId").asText()).isEqualTo(Long.toString(retry.inboxId()));
        assertThat(jdbc.queryForMap("SELECT status, attempts FROM inbox_message WHERE id = ?", retry.inboxId()))
                .containsEntry("status", "COMPLETED").containsEntry("attempts", 1);
        assertThat(jdbc.queryForObject("SELECT reason FROM inbox_attempt WHERE inbox_id = ?", String.class, retry.inboxId()))
                .startsWith("the sender's retry of a synchronous registration (id ");

        // its event, as the inbox-mode pod published it: the claim refuses the finished row
        double refused = meters.counter(com.hospital.surveyinbox.processing.ProcessingRecord.CLAIMS, "result", "not-claimable").count();
        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, retry.event())).isTrue();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> meters.counter(
                com.hospital.surveyinbox.processing.ProcessingRecord.CLAIMS, "result", "not-claimable").count() > refused);
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE");
    }

    /**
     * An inbox-mode pod's SEND of the subject that took its id before the synchronous claim's subject lock but
     * committed after the claim's checks read their snapshot: arrived first, it is registered first, and the
     * synchronous message joins the inbox behind it (a resend), as the claim sends a message whose subject is
     * draining. The instant is held open here: a transaction stores the row under the subject's lock and commits once
     * the claim waits for it.
     */
    @Test
    void aSendStoredJustBeforeTheLeaseIsRegisteredFirstAndTheSynchronousOneJoinsBehindIt() throws Exception {
        String subject = uniqueSubject("SYNCJOIN");
        java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(1);
        try (java.sql.Connection reception = jdbc.getDataSource().getConnection()) {
            reception.setAutoCommit(false);
            long storedId;
            try (java.sql.PreparedStatement insert = reception.prepareStatement("INSERT INTO inbox_message (srvy_drawup_no, msg_type, payload)"
                    + " SELECT ?, 'SEND', ? FROM (SELECT pg_advisory_xact_lock(?, hashtext(?))) AS subject_lock RETURNING id")) {
                insert.setString(1, subject);
                insert.setBytes(2, send(subject, "").getBytes(StandardCharsets.UTF_8));
                insert.setInt(3, InboxStore.SUBJECT_LOCK_SPACE);
                insert.setString(4, subject);
                try (java.sql.ResultSet id = insert.executeQuery()) {
                    assertThat(id.next()).isTrue();
                    storedId = id.getLong(1);
                }
            }
            java.util.concurrent.Future<Reply> synchronous = senders.submit(() -> client.receive(send(subject, "")));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
                            + " AND query LIKE 'WITH checks AS%'", Long.class) > 0);
            reception.commit();

            Reply b = synchronous.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(b.status()).as(b.body()).isEqualTo(200);
            assertThat(b.header("X-Result-Code")).isEqualTo("Y");
            String joined = b.json().path("inboxId").asText();
            assertThat(Long.parseLong(joined)).as("stored behind the row").isGreaterThan(storedId);
            assertThat(simulator().events(subject)).as("nothing registered on the request").isEmpty();

            assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer,
                    new com.hospital.surveyinbox.inbox.InboxEvent(Long.toString(storedId), subject, "SEND"))).isTrue();
            Rows rows = new Rows(jdbc);
            rows.awaitStatus(Long.toString(storedId), "COMPLETED");
            rows.awaitStatus(joined, "COMPLETED");
            assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
        } finally {
            senders.shutdownNow();
        }
    }

    @Test
    void answersABusinessFailureWithNAndItsReason(org.springframework.boot.test.system.CapturedOutput output) {
        String subject = uniqueSubject("SYNCBAD");
        Reply reply = client.receive("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P\",\"formCd\":\"UNREG-S\"}");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("X-Result-Code")).isEqualTo("N");
        assertThat(reply.json().get("resultMessage").asText()).isEqualTo("form UNREG-S is not registered");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
        // no row is left of a failed synchronous registration: its log line names the subject (it named none)
        assertThat(output.getAll().lines().filter(line -> line.contains("Refused by survey")))
                .anyMatch(line -> line.contains("srvyDrawupNo=" + subject + "]"));
    }

    @Test
    void answers503WhenADownstreamIsDown() {
        String subject = uniqueSubject("SYNCDOWN");
        simulator().failWhen("GET /legacy/patients/P-" + subject, 503, "{}");

        Reply reply = client.receive(send(subject, ""));

        assertThat(reply.status()).isEqualTo(503);
        assertThat(reply.header("X-Result-Code")).isEqualTo("N");
        // never "nothing registered": a resend or a submission whose answer was lost may have been acted on
        assertThat(reply.json().get("resultMessage").asText()).isEqualTo("downstream unavailable; registration not completed, please retry");
        assertThat(simulator().bundleCreates(subject)).isZero();
    }

    /**
     * One registration of a subject at a time, across pods (the subject's lease): a registration is not on record
     * until it succeeded, so a SUBMIT sent while its SEND was registering ran beside it, was refused by the survey side
     * (no bundle yet) and answered 200 N: a submission lost. It is answered 503 "please retry" instead, and its retry
     * after the SEND is registered.
     */
    @Test
    void aMessageOfASubjectBeingRegisteredIsAnswered503AndRegisteredOnItsRetry() throws Exception {
        String subject = uniqueSubject("SYNCLEASE");
        // the patient lookup slow enough (under this class's 4 s response timeout) that the next request, sent once the lookup
        // is seen, meets the registration still under way on a loaded machine (at 600 ms it once came too late)
        simulator().setLatency(new DownstreamSimulator.Latency(0, 2, 2500, 2600, 0, 2));
        java.util.concurrent.CompletableFuture<Reply> first;
        try {
            first = java.util.concurrent.CompletableFuture.supplyAsync(() -> client.receive(send(subject, "")));
            // the SUBMIT while the SEND is registering (its patient lookup under way)
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> simulator().requests().stream()
                    .anyMatch(r -> r.line().startsWith("GET /legacy/patients/P-" + subject)));

            Reply submit = client.receive(send(subject, "\"msgType\":\"SUBMIT\""));
            assertThat(submit.status()).isEqualTo(503);
            assertThat(submit.header("X-Result-Code")).isEqualTo("N");
            assertThat(submit.body()).contains("a message of this subject is being registered");
            assertThat(first.get(30, java.util.concurrent.TimeUnit.SECONDS).header("X-Result-Code")).isEqualTo("Y");
        } finally {
            simulator().setLatency(DownstreamSimulator.Latency.FAST);
        }
        Reply retried = client.receive(send(subject, "\"msgType\":\"SUBMIT\""));
        assertThat(retried.status()).isEqualTo(200);
        assertThat(retried.header("X-Result-Code")).isEqualTo("Y");
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "SUBMISSION");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM synchronous_lease WHERE srvy_drawup_no = ?", Long.class, subject))
                .as("leases given back").isZero();
    }

    /** A lease whose pod died mid-registration is taken over once older than a registration can last. */
    @Test
    void aDeadRegistrationsLeaseIsTakenOverOnceOlderThanARegistrationCanLast() {
        String subject = uniqueSubject("SYNCDEAD");
        jdbc.update("INSERT INTO synchronous_lease (srvy_drawup_no, holder, taken_at) VALUES (?, 'a pod gone', now())", subject);
        Reply held = client.receive(send(subject, ""));
        assertThat(held.status()).as("while its holder may still run").isEqualTo(503);
        assertThat(held.body()).contains("a message of this subject is being registered");

        // twice the longest a registration can last (every wait run out: minutes, here), not stuck-processing-after
        jdbc.update("UPDATE synchronous_lease SET taken_at = now() - INTERVAL '15 minutes' WHERE srvy_drawup_no = ?", subject);
        Reply sent = client.receive(send(subject, ""));
        assertThat(sent.status()).isEqualTo(200);
        assertThat(sent.header("X-Result-Code")).isEqualTo("Y");
    }

    @Test
    void keepsDrainingStoredRowsAndRoutesTheirSubjectsLaterMessagesThroughTheInbox() {
        String subject = uniqueSubject("DRAIN");
        DownstreamSimulator.Fault down = simulator().failWhen("GET /legacy/patients/P-" + subject, 503, "{}");
        Acceptance stored = store.accept(new ReceivedMessage(subject, "SEND",
                send(subject, "").getBytes(StandardCharsets.UTF_8), null));
        Rows rows = new Rows(jdbc);
        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, stored.event())).isTrue();
        rows.awaitAttempt(Long.toString(stored.inboxId()), 1, "FAILED");

        // the subject still drains: its SUBMIT must queue behind the SEND, not overtake it synchronously
        Reply submit = client.receive(send(subject, "\"msgType\":\"SUBMIT\""));
        assertThat(submit.status()).isEqualTo(200);
        assertThat(submit.header("X-Result-Code")).isEqualTo("Y");
        String submitId = submit.json().get("inboxId").asText();

        simulator().remove(down);
        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, stored.event())).isTrue(); // the redelivery job's retry
        rows.awaitStatus(Long.toString(stored.inboxId()), "COMPLETED");
        rows.awaitStatus(submitId, "COMPLETED");
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "SUBMISSION");

        // and once drained, the subject is synchronous again
        Reply resend = client.receive(send(subject, ""));
        assertThat(resend.status()).isEqualTo(200);
        assertThat(resend.json().has("inboxId")).isFalse();
        assertThat(resend.header("X-Result-Code")).isEqualTo("N"); // already submitted: resend refused
        // on record with the reply its answer carried, delivered in that answer: never sent again by a job
        // (its code, not its text: no payload is kept, and no downstream text either)
        assertThat(jdbc.queryForMap("SELECT status, reply_status, reply_reason_code, reply_reason FROM inbox_message WHERE srvy_drawup_no = ? "
                + "ORDER BY id DESC LIMIT 1", subject)).isEqualTo(java.util.Map.of("status", "COMPLETED", "reply_status", "SENT",
                "reply_reason_code", "ALREADY_SUBMITTED", "reply_reason", "(removed with the payload)"));
    }

    /**
     * A replay of a resend the survey side refused (its answer lost on the way) is answered 200 N like the first
     * ALREADY_SUBMITTED, nothing stored or sent again: it was answered as a stored message's replay, 200 Y, and the
     * legacy system took the refused resend for one that went out.
     */
    @Test
    void aReplayOfARefusedResendIsAnswered200NLikeTheFirst() {
        String subject = uniqueSubject("REPLAYREFUSED");
        assertThat(client.receive(send(subject, "")).header("X-Result-Code")).isEqualTo("Y");
        assertThat(client.receive(send(subject, "\"msgType\":\"SUBMIT\"")).header("X-Result-Code")).isEqualTo("Y");
        String key = "resend-" + subject;
        Reply refused = client.receive(send(subject, ""), java.util.Map.of("Idempotency-Key", key));
        assertThat(refused.status()).isEqualTo(200);
        assertThat(refused.header("X-Result-Code")).isEqualTo("N");
        String resendCall = "POST /survey/dispatch-bundles/" + subject + "/resend";
        long resends = simulator().requests().stream().filter(r -> r.line().equals(resendCall)).count();
        assertThat(resends).as("the refused resend's call").isOne();
        long stored = jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject);

        Reply replay = client.receive(send(subject, ""), java.util.Map.of("Idempotency-Key", key));

        assertThat(replay.status()).isEqualTo(200);
        assertThat(replay.header("X-Result-Code")).isEqualTo("N");
        assertThat(replay.json().get("resultMessage").asText()).startsWith("ALREADY_SUBMITTED");
        assertThat(replay.json().has("inboxId")).isFalse();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isEqualTo(stored);
        assertThat(simulator().requests().stream().filter(r -> r.line().equals(resendCall)).count()).as("sent again").isEqualTo(resends);
    }
}
