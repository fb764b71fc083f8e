package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import com.hospital.surveyinbox.support.ServiceClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;

/** The consumer half end to end: Kafka -> claim -> downstream (simulator over HTTP) -> row outcome -> reply. */
class ProcessingTest extends IntegrationTest {

    @Autowired
    org.apache.camel.ProducerTemplate producer;

    static String send(String subject, String patno, String extra) {
        return ServiceClient.message(subject, patno, extra);
    }

    void republish(String inboxId, String subject, String msgType) {
        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, new InboxEvent(inboxId, subject, msgType))).isTrue();
    }

    @Autowired
    org.springframework.core.env.Environment environment;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @Autowired
    com.hospital.surveyinbox.inbox.InboxDatabase inboxDatabase;

    /**
     * Records on the topic that are no event (text, no value, an id that is no number, bytes that are no UTF-8) are
     * skipped and committed: the consumer neither stops nor retries them, and the subject's next event on the same
     * partition (the same key) is processed.
     */
    @Test
    void recordsThatAreNoEventAreSkippedAndTheNextEventOnTheirPartitionIsProcessed() throws Exception {
        String subject = uniqueSubject("POISON");
        String topic = environment.getRequiredProperty("adapter.kafka.topic");
        String unreadable = ProcessingRecord.CLAIMS;
        double before = meters.counter(unreadable, "result", "unreadable-event").count();
        java.util.Map<String, Object> config = java.util.Map.of(
                "bootstrap.servers", environment.getRequiredProperty("spring.kafka.bootstrap-servers"),
                "key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName(),
                "value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        try (org.apache.kafka.clients.producer.KafkaProducer<String, byte[]> poison = new org.apache.kafka.clients.producer.KafkaProducer<>(config)) {
            for (byte[] value : java.util.Arrays.asList("not an event".getBytes(java.nio.charset.StandardCharsets.UTF_8), null,
                    "{\"inboxId\":\"x\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[] {(byte) 0xff, 0, (byte) 0xfe})) {
                poison.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, subject, value)).get(10, java.util.concurrent.TimeUnit.SECONDS);
            }
        }

        String id = client.accept(send(subject, "P-" + subject, ""));

        new Rows(jdbc).awaitStatus(id, "COMPLETED");
        assertThat(meters.counter(unreadable, "result", "unreadable-event").count()).isEqualTo(before + 4);
    }

    /**
     * An event published against another database (its inboxDatabase header: another deployment sharing the topic and
     * consumer group, a staging copied from prod) is skipped and counted as foreign, not as a row the database lost
     * (the critical lost-rows alert and its restore runbook); the subject's own events are processed as before.
     */
    @Test
    void anEventOfAnotherDatabaseIsSkippedNotTakenForALostRow() throws Exception {
        String subject = uniqueSubject("FOREIGN");
        String topic = environment.getRequiredProperty("adapter.kafka.topic");
        double foreign = meters.counter(ProcessingRecord.CLAIMS, "result", "foreign-database").count();
        double missing = meters.counter(ProcessingRecord.CLAIMS, "result", "row-missing").count();
        java.util.Map<String, Object> config = java.util.Map.of(
                "bootstrap.servers", environment.getRequiredProperty("spring.kafka.bootstrap-servers"),
                "key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName(),
                "value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
        try (org.apache.kafka.clients.producer.KafkaProducer<String, String> other = new org.apache.kafka.clients.producer.KafkaProducer<>(config)) {
            var record = new org.apache.kafka.clients.producer.ProducerRecord<>(topic, subject,
                    "{\"inboxId\":\"999999999\",\"srvyDrawupNo\":\"" + subject + "\",\"msgType\":\"SEND\"}");
            record.headers().add("inboxDatabase", java.util.UUID.randomUUID().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            other.send(record).get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                meters.counter(ProcessingRecord.CLAIMS, "result", "foreign-database").count() >= foreign + 1);
        assertThat(meters.counter(ProcessingRecord.CLAIMS, "result", "row-missing").count()).isEqualTo(missing);

        // one published before this database's identity was written is most likely a row it lost (a database created
        // anew, or restored from before V25): named at WARN each time; a later one is another deployment's
        assertThat(inboxDatabase.publishedBeforeIdentity(1_000L)).isTrue();
        assertThat(inboxDatabase.publishedBeforeIdentity(System.currentTimeMillis())).isFalse();
        assertThat(inboxDatabase.publishedBeforeIdentity(null)).isFalse();

        // the subject's own events (this database's header) are processed as before, on the same partition
        String id = client.accept(send(subject, "P-" + subject, ""));
        new Rows(jdbc).awaitStatus(id, "COMPLETED");
        assertThat(meters.counter(ProcessingRecord.CLAIMS, "result", "row-missing").count()).isEqualTo(missing);
    }

    /**
     * The patient number goes where CONTRACT §3 puts it and nowhere else: the patient lookup's path and the
     * guest find's query — not the guest create, not the bundle (a header a step sets must not ride along to
     * the next call) — and a value with '+', '&', '=' and a space arrives as sent.
     */
    @Test
    void sendsThePatientNumberOnlyWhereTheContractPutsIt() {
        String subject = uniqueSubject("PATNO-URL");
        String token = "T" + Math.abs(subject.hashCode());
        String patno = "PQ+1&x=2 " + token;
        String id = client.accept(send(subject, patno, ""));

        rows.awaitStatus(id, "COMPLETED");
        List<String> lines = simulator().requestLines().stream().filter(l -> l.contains(token)).toList();
        assertThat(lines).hasSize(2);
        assertThat(lines).anyMatch(l -> l.startsWith("GET /legacy/patients/")).anyMatch(l -> l.startsWith("GET /account/guests?patno="));
        assertThat(simulator().events(patno + "|Patient-" + patno)).extracting(DownstreamSimulator.Event::kind)
                .containsExactly("GUEST_CREATE");

        // the query value arrives as sent: a second subject of the same patient finds that guest, creates none
        String second = client.accept(send(uniqueSubject("PATNO-URL"), patno, ""));
        rows.awaitStatus(second, "COMPLETED");
        assertThat(simulator().events(patno + "|Patient-" + patno)).hasSize(1);
        // and exactly as RFC 3986 encodes it (a form encoding's '+' for the space would pass the lookup above)
        assertThat(simulator().requestLines()).filteredOn(l -> l.endsWith("%20" + token) && l.startsWith("GET /account/guests?"))
                .containsExactly("GET /account/guests?patno=PQ%2B1%26x%3D2%20" + token,
                        "GET /account/guests?patno=PQ%2B1%26x%3D2%20" + token);
    }

    @Test
    void registersASendDownstreamOnceAndCompletesTheRow() {
        String subject = uniqueSubject("HAPPY");
        String id = client.receive(send(subject, "P-" + subject, "\"srvyNo\":\"CONSENT-" + subject
                + "\",\"groupCd\":\"G1\",\"sendDt\":\"20261130093000\""), Map.of("X-Trace-Marker", "leak-check")).json()
                .get("inboxId").asText();

        rows.awaitStatus(id, "COMPLETED");

        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
        // the shipped order (routes/inbox-register.camel.yaml): consents, then the patient (RouteEditTest swaps them)
        long consents = simulator().events("CONSENT-" + subject).get(0).seq();
        long patient = simulator().events("P-" + subject).get(0).seq();
        assertThat(consents).isLessThan(patient);
        JsonNode bundle = simulator().bundleRequests(subject).get(0);
        assertThat(bundle.get("formCd").asText()).isEqualTo("F100");
        assertThat(bundle.get("groupCd").asText()).isEqualTo("G1");
        assertThat(bundle.get("guestId").asText()).startsWith("G");
        assertThat(bundle.get("consents")).hasSize(1);
        assertThat(bundle.get("sendAt").asText()).isEqualTo("2026-11-30T09:30:00+09:00"); // seconds even when :00 (RFC 3339)
        assertThat(bundle.get("notify").asBoolean()).isTrue();
        assertThat(rows.attempts(id)).isEqualTo(1);
        assertThat(rows.row(id).get("reply_status")).isEqualTo("NONE");
        assertThat(jdbc.queryForObject("SELECT outcome FROM inbox_attempt WHERE inbox_id = ?", String.class, Long.parseLong(id)))
                .isEqualTo("COMPLETED");
        // no inbound header ever reaches a downstream
        assertThat(simulator().requestHeaders()).noneSatisfy(h -> assertThat(h.keySet()).anyMatch(k ->
                k.equalsIgnoreCase("Authorization") || k.equalsIgnoreCase("X-Trace-Marker")));
    }

    @Test
    void twoHangulSubjectsEachGetTheirOwnBundleUnderTheirOwnIdempotencyKey() {
        // an HTTP header carries Latin-1 at most: unencoded, both keys went out as "???-…" and the survey side saw one
        String tail = java.util.UUID.randomUUID().toString().substring(0, 8);
        String first = "가나다-" + tail;
        String second = "라마바-" + tail;
        eachGetsItsOwnBundle(first, second);
        assertThat(Registration.percentEncoded(first)).startsWith("%EA%B0%80").endsWith("-" + tail);
    }

    @Test
    void aSubjectWithAnEdgeSpaceIsNotTheSubjectWithout() {
        // a header value is trimmed on the way: sent raw, " SP-…" would be the key of "SP-…"
        String plain = uniqueSubject("SP");
        eachGetsItsOwnBundle(plain, " " + plain);
    }

    /** Two subjects whose keys an unencoded header would confuse: both complete, each with a bundle of its own. */
    private void eachGetsItsOwnBundle(String first, String second) {
        String a = client.accept(send(first, "P-OWN-1-" + first.strip(), ""));
        String b = client.accept(send(second, "P-OWN-2-" + first.strip(), ""));

        rows.awaitStatus(a, "COMPLETED");
        rows.awaitStatus(b, "COMPLETED");

        assertThat(simulator().bundleCreates(first)).isEqualTo(1);
        assertThat(simulator().bundleCreates(second)).isEqualTo(1);
    }

    /**
     * Identifiers the contract allows though they hold a C1 control or an invisible format character (an emoji's
     * zero-width joiners, a byte order mark, a right-to-left mark): stored and registered, each under its own key,
     * percent-encoded downstream. Refused with a 400, such a dispatch was never sent again by the legacy system.
     */
    @Test
    void identifiersWithC1OrInvisibleCharactersAreStoredAndRegisteredAsTheContractAllows() {
        String tail = java.util.UUID.randomUUID().toString().substring(0, 8);
        for (String subject : List.of("FAM-\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67-" + tail, "BOM-\uFEFF-" + tail,
                "NEL-\u0085-" + tail, "RLM-\u200F-" + tail)) {
            String id = client.accept(send(subject, "P-\u200B" + tail, "\"srvyNo\":\"S\u00A0\u2060" + tail + "\""));
            rows.awaitStatus(id, "COMPLETED");
            assertThat(simulator().bundleCreates(subject)).as(subject).isEqualTo(1);
        }
    }

    @Test
    void unparsableSendDtMeansTimeOfProcessing() {
        // not a date at all, a 30th of February, hour 24: none is a time the sender named (the lenient default took
        // the second for 28 February and the third for the next day's midnight); a number or an object is stored as
        // it came too (CONTRACT §1: unparsable is stored as-is)
        for (String sendDt : List.of("\"garbage\"", "\"20260230093000\"", "\"20261130240000\"", "2.0261130093E13", "{\"at\":1}")) {
            String subject = uniqueSubject("SENDDT");
            String id = client.accept(send(subject, "P-" + subject, "\"sendDt\":" + sendDt));
            rows.awaitStatus(id, "COMPLETED");
            String sendAt = simulator().bundleRequests(subject).get(0).get("sendAt").asText();
            assertThat(sendAt).as(sendDt).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\+09:00");
            assertThat(java.time.OffsetDateTime.parse(sendAt)).as(sendDt).isCloseTo(java.time.OffsetDateTime.now(),
                    org.assertj.core.api.Assertions.within(1, java.time.temporal.ChronoUnit.MINUTES));
        }
    }

    /**
     * A downstream message with a NUL and a line break: PostgreSQL refused the NUL in the row's outcome, which
     * then stayed PROCESSING until the stuck-row reset (and held its subject's later rows). Recorded as text now.
     */
    @Test
    void aDownstreamCodeThatNamesThePatientIsNotStoredLoggedOrShown() {
        String subject = uniqueSubject("BIZCODE");
        String patno = "PLEAKQZ"; // an identifier without a digit run: a code carrying it passes the shape check
        DownstreamSimulator.Fault fault = simulator().failWhen("GET /legacy/patients/" + patno, 404,
                "{\"code\":\"NOPATIENT" + patno + "\",\"message\":\"no patient " + patno + "\"}");
        try {
            String id = client.accept(send(subject, patno, ""));

            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id).get("last_error_code")).isEqualTo("(non-standard code)");
            assertThat(String.valueOf(rows.row(id).get("last_error"))).doesNotContain(patno);
        } finally {
            simulator().remove(fault);
        }
    }

    @Test
    void aBusinessMessageWithControlCharactersIsRecordedAsText() {
        String subject = uniqueSubject("BIZNUL");
        String patno = "PNUL-" + subject;
        DownstreamSimulator.Fault fault = simulator().failWhen("GET /legacy/patients/" + patno, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"not\\u0000found\\nhere\"}");
        try {
            String id = client.accept(send(subject, patno, ""));

            rows.awaitAttempt(id, 1, "FAILED");
            assertThat(rows.row(id).get("last_error")).isEqualTo("not found here");
        } finally {
            simulator().remove(fault);
        }
    }

    /**
     * A srvyNo that reads "null" (or is quoted) is a survey number like any other: looked up as it is, the row
     * completes. Bound as a String parameter, Camel turned "null" into null and the consent step failed every attempt
     * as a system error until the row was DEAD.
     */
    @Test
    void aSurveyNumberThatReadsNullIsLookedUpAsItIs() {
        String id = client.accept(send(uniqueSubject("SNULL"), "P-SNULL", "\"srvyNo\":\"null\""));
        String quoted = client.accept(send(uniqueSubject("SQUOTE"), "P-SQUOTE", "\"srvyNo\":\"'CONSENT-Q'\""));

        rows.awaitStatus(id, "COMPLETED");
        rows.awaitStatus(quoted, "COMPLETED");
        assertThat(rows.attempts(id)).isEqualTo(1);
        assertThat(simulator().events("null")).extracting(DownstreamSimulator.Event::kind).contains("CONSENTS");
    }

    @Test
    void recordsEachBusinessErrorWithTheDownstreamMessage() {
        String unregistered = client.accept(send(uniqueSubject("BIZ"), "P1", "\"formCd\":\"UNREG-9\"").replace("\"formCd\":\"F100\",", ""));
        String noPatient = client.accept(send(uniqueSubject("BIZ"), "NOPAT-1", ""));
        String noSurvey = client.accept(send(uniqueSubject("BIZ"), "P2", "\"srvyNo\":\"NOCFG-" + uniqueSubject("S") + "\""));
        String noGroup = client.accept(send(uniqueSubject("BIZ"), "P3", "\"groupCd\":\"NOGRP-1\""));

        rows.awaitAttempt(unregistered, 1, "FAILED");
        rows.awaitAttempt(noPatient, 1, "FAILED");
        rows.awaitAttempt(noSurvey, 1, "FAILED");
        rows.awaitAttempt(noGroup, 1, "FAILED");
        assertThat(rows.row(unregistered).get("last_error")).isEqualTo("form UNREG-9 is not registered");
        assertThat(rows.row(noPatient).get("last_error")).isEqualTo("patient not found");
        assertThat(rows.row(noSurvey).get("last_error")).isEqualTo("survey not configured");
        assertThat(rows.row(noGroup).get("last_error")).isEqualTo("group not found");
        assertThat(jdbc.queryForObject("SELECT reason FROM inbox_attempt WHERE inbox_id = ?", String.class,
                Long.parseLong(noPatient))).isEqualTo("patient not found");
    }

    /**
     * CONTRACT §3: the patient's and the consents' 404 is a business error, also when its answer says nothing (an
     * empty body, a code without a message); the reason is ours. It was recorded as a system error.
     */
    @Test
    void aNotFoundWithoutAMessageIsABusinessError() {
        String patno = "PBARE-" + uniqueSubject("P");
        String survey = "NOMSG-" + uniqueSubject("S");
        DownstreamSimulator.Fault patient = simulator().failWhen("GET /legacy/patients/" + patno, 404, "");
        DownstreamSimulator.Fault consents = simulator().failWhen("GET /legacy/surveys/" + survey + "/consents", 404,
                "{\"code\":\"SURVEY_NOT_CONFIGURED\"}");
        try {
            String noPatient = client.accept(send(uniqueSubject("BIZ404"), patno, ""));
            String noSurvey = client.accept(send(uniqueSubject("BIZ404"), "P4", "\"srvyNo\":\"" + survey + "\""));

            rows.awaitAttempt(noPatient, 1, "FAILED");
            rows.awaitAttempt(noSurvey, 1, "FAILED");
            assertThat(rows.row(noPatient).get("last_error")).isEqualTo("not found (HTTP 404, no message)");
            assertThat(rows.row(noPatient).get("last_error_code")).isEqualTo("(no code)");
            assertThat(rows.row(noSurvey).get("last_error")).isEqualTo("not found (HTTP 404, no message)");
            assertThat(rows.row(noSurvey).get("last_error_code")).isEqualTo("(non-standard code)");
        } finally {
            simulator().remove(patient);
            simulator().remove(consents);
        }
    }

    @Test
    void aBusinessErrorOfAPatientWithAVeryLongNameIsRecordedLikeAnyOther() {
        // 20,000 Hangul characters (60 KB, under the body limit) in patNm: masking the 404's message by each end of
        // that name exhausted the worker's heap, and the row killed one pod after another
        String name = "가나다라마바사아자차카타파하".repeat(1_430);
        String id = client.accept(send(uniqueSubject("LONGNAME"), "NOPAT-2", "\"patNm\":\"" + name + "\""));

        rows.awaitAttempt(id, 1, "FAILED");
        assertThat(rows.row(id).get("last_error")).isEqualTo("patient not found");
    }

    @Test
    void recordsSystemErrorForA5xxAndForATimeout() {
        String subject5xx = uniqueSubject("SYS");
        String patno5xx = "P5XX-" + subject5xx;
        simulator().failWhen("GET /legacy/patients/" + patno5xx, 503, "{\"error\":\"down\"}");
        String subjectSlow = uniqueSubject("SLOW");
        String patnoSlow = "PSLOW-" + subjectSlow;
        // answers only after 3 s, past adapter.http.response-timeout (1 s in tests)
        simulator().add(new DownstreamSimulator.Fault(s -> s.startsWith("GET /legacy/patients/" + patnoSlow), 200, "{}", 3_000));

        String failing = client.accept(send(subject5xx, patno5xx, ""));
        String slow = client.accept(send(subjectSlow, patnoSlow, ""));

        rows.awaitAttempt(failing, 1, "FAILED");
        rows.awaitAttempt(slow, 1, "FAILED");
        assertThat(rows.row(failing).get("last_error")).isEqualTo("system error");
        assertThat(rows.row(slow).get("last_error")).isEqualTo("system error");
        assertThat(simulator().bundleCreates(subject5xx)).isZero();
        // where and what, for an operator with the API alone: the attempt's history names the step, the downstream
        // and what failed (never a value: no patient number), the row's code selects system errors for a bulk requeue
        assertThat(client.ops("/ops/inbox/" + failing).json().get("lastErrorCode").asText()).isEqualTo("SYSTEM_ERROR");
        com.fasterxml.jackson.databind.JsonNode attempts = client.ops("/ops/inbox/" + failing).json().get("attemptHistory");
        assertThat(attempts.get(0).get("reason").asText())
                .isEqualTo("system error at inbox-register-legacy-patient (legacy): HTTP 503");
        assertThat(client.ops("/ops/inbox/" + slow).json().get("attemptHistory").get(0).get("reason").asText())
                .startsWith("system error at inbox-register-legacy-patient (legacy): ").endsWith("Exception")
                .doesNotContain(patnoSlow);
    }

    @Test
    void aDownstream503IsCalledOncePerAttemptTheInboxBeingTheOnlyRetryLedger() {
        String subject = uniqueSubject("ONCE");
        String patno = "PONCE-" + subject;
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        simulator().add(new DownstreamSimulator.Fault(s -> s.startsWith("GET /legacy/patients/" + patno)
                && calls.incrementAndGet() > 0, 503, "{\"error\":\"down\"}", 0));

        String failing = client.accept(send(subject, patno, ""));

        rows.awaitAttempt(failing, 1, "FAILED");
        // Apache HttpClient's default strategy would have repeated this GET once after 1 s, unrecorded
        assertThat(calls.get()).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class,
                Long.parseLong(failing))).isEqualTo(1);
    }

    @Test
    void goesDeadOnTheFifthFailedAttemptAndRepliesExactlyOnceWithTheDownstreamReason() {
        String subject = uniqueSubject("DEAD");
        String id = client.accept("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P9\",\"formCd\":\"UNREG-DEAD\"}");
        rows.awaitAttempt(id, 1, "FAILED");
        for (int attempt = 2; attempt <= 4; attempt++) {
            republish(id, subject, "SEND");
            rows.awaitAttempt(id, attempt, "FAILED");
        }
        republish(id, subject, "SEND");
        rows.awaitAttempt(id, 5, "DEAD");
        await().atMost(Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));

        List<JsonNode> replies = simulator().replies(subject);
        assertThat(replies).hasSize(1);
        JsonNode reply = replies.get(0);
        assertThat(reply.get("inboxId").asText()).isEqualTo(id);
        assertThat(reply.get("resultCode").asText()).isEqualTo("N");
        assertThat(reply.get("reasonCode").asText()).isEqualTo("DEAD");
        assertThat(reply.get("reason").asText()).isEqualTo("form UNREG-DEAD is not registered");

        // a late duplicate event changes nothing and sends nothing
        String sentinel = client.accept(send(subject + "-S", "P9", ""));
        republish(id, subject, "SEND");
        rows.awaitStatus(sentinel, "COMPLETED");
        assertThat(rows.attempts(id)).isEqualTo(5);
        assertThat(simulator().replies(subject)).hasSize(1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class, Long.parseLong(id)))
                .isEqualTo(5);
    }

    @Test
    void aSendWithoutNotificationCompletesAndRepliesNotifySkippedOnce() {
        String subject = uniqueSubject("NOTIFY");
        String id = client.accept(send(subject, "P7", "\"alimtalkYn\":\"N\""));
        rows.awaitStatus(id, "COMPLETED");
        await().atMost(Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));

        assertThat(simulator().bundleRequests(subject).get(0).get("notify").asBoolean()).isFalse();
        List<JsonNode> replies = simulator().replies(subject);
        assertThat(replies).hasSize(1);
        assertThat(replies.get(0).get("reasonCode").asText()).isEqualTo("NOTIFY_SKIPPED");
        republish(id, subject, "SEND");
        String sentinel = client.accept(send(subject + "-S", "P7", ""));
        rows.awaitStatus(sentinel, "COMPLETED");
        assertThat(simulator().replies(subject)).hasSize(1);
    }

    /**
     * "N" as a legacy system may spell it: padded (a fixed-width field), full-width (an IME's Ｎ), lower case. Read as
     * "notify" before, the patient was sent a notification the hospital had suppressed.
     */
    @ParameterizedTest(name = "alimtalkYn \"{0}\"")
    @ValueSource(strings = {"N ", " n", "\uFF2E", "N\\n"})
    void anNSpelledOtherwiseStillSendsNoNotification(String alimtalkYn) {
        String subject = uniqueSubject("NOTIFYSP");
        String id = client.accept(send(subject, "P7", "\"alimtalkYn\":\"" + alimtalkYn + "\""));
        rows.awaitStatus(id, "COMPLETED");
        assertThat(simulator().bundleRequests(subject).get(0).get("notify").asBoolean()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));
        assertThat(simulator().replies(subject)).singleElement()
                .satisfies(reply -> assertThat(reply.get("reasonCode").asText()).isEqualTo("NOTIFY_SKIPPED"));
    }

    @Test
    void aSecondSendIsAResendUntilTheQuestionnaireIsSubmitted() {
        String subject = uniqueSubject("RESEND");
        String first = client.accept(send(subject, "P8", ""));
        rows.awaitStatus(first, "COMPLETED");
        String resend = client.accept(send(subject, "P8", ""));
        rows.awaitStatus(resend, "COMPLETED");
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
        assertThat(simulator().replies(subject)).isEmpty();

        String submit = client.accept(send(subject, "P8", "\"msgType\":\"SUBMIT\""));
        rows.awaitStatus(submit, "COMPLETED");
        String refused = client.accept(send(subject, "P8", ""));
        rows.awaitStatus(refused, "COMPLETED");
        await().atMost(Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(refused).get("reply_status")));

        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
        assertThat(simulator().replies(subject)).singleElement()
                .satisfies(r -> assertThat(r.get("reasonCode").asText()).isEqualTo("ALREADY_SUBMITTED"));
    }

    /**
     * A refused resend's message as JSON escapes it: masked once decoded (masking the raw JSON missed the escaped
     * name, and a NUL between the digits of a number hid it from the patterns) and stored as text (its NUL left the
     * row PROCESSING).
     */
    @Test
    void aRefusedResendsEscapedMessageIsMaskedAndStoredAsText() {
        String subject = uniqueSubject("RESNUL");
        String first = client.accept(send(subject, "P11", "\"patNm\":\"홍길동\""));
        rows.awaitStatus(first, "COMPLETED");
        DownstreamSimulator.Fault refusal = simulator().failWhen("POST /survey/dispatch-bundles/" + subject + "/resend", 409,
                "{\"code\":\"ALREADY_SUBMITTED\",\"message\":\"submitted by \\uD64D\\uAE38\\uB3D9\\u0000on 010\\u00001234\\u00005678\"}");
        try {
            String resend = client.accept(send(subject, "P11", "\"patNm\":\"홍길동\""));

            rows.awaitStatus(resend, "COMPLETED");
            assertThat((String) rows.row(resend).get("reply_reason")).startsWith("submitted by ")
                    .doesNotContain("홍길동").doesNotContain("1234").doesNotContain(String.valueOf((char) 0));
        } finally {
            simulator().remove(refusal);
        }
    }

    /** The legacy system's record of {@code patno}, with this name (the simulator's own is "Patient-" + patno). */
    private DownstreamSimulator.Fault legacyRecord(String patno, String name) {
        return simulator().failWhen("GET /legacy/patients/" + patno, 200,
                "{\"patno\":\"" + patno + "\",\"patNm\":\"" + name + "\",\"mobileNo\":\"010-2222-3333\"}");
    }

    /**
     * A SUBMIT's refusal that quotes the patient by the name the legacy system knows, the message carrying none: the
     * path never reads the record, so the name stayed in lastError, the attempt history and the operator API. The
     * record is now read to mask it (CONTRACT §6).
     */
    @Test
    void aSubmitsRefusalQuotingTheLegacyRecordsNameIsMaskedWithTheRecord() {
        String subject = uniqueSubject("SUBNAME");
        String patno = "PN" + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault record = legacyRecord(patno, "김민수");
        DownstreamSimulator.Fault refusal = simulator().failWhen("POST /survey/dispatch-bundles/" + subject + "/submission", 404,
                "{\"code\":\"BUNDLE_NOT_FOUND\",\"message\":\"김민수님의 설문 발송이 없습니다\"}");
        try {
            String submit = client.accept(send(subject, patno, "\"msgType\":\"SUBMIT\""));

            rows.awaitAttempt(submit, 1, "FAILED");
            assertThat(rows.row(submit).get("last_error")).isEqualTo("***님의 설문 발송이 없습니다");
            assertThat(jdbc.queryForObject("SELECT reason FROM inbox_attempt WHERE inbox_id = ?", String.class,
                    Long.parseLong(submit))).isEqualTo("***님의 설문 발송이 없습니다");
            assertThat(client.ops("/ops/inbox/" + submit).json().get("lastError").asText()).doesNotContain("김민수");
        } finally {
            simulator().remove(refusal);
            simulator().remove(record);
        }
    }

    /** The same for a refused resend: its reason, sent to the legacy system and shown to operators. */
    @Test
    void aRefusedResendQuotingTheLegacyRecordsNameIsMaskedWithTheRecord() {
        String subject = uniqueSubject("RESNAME");
        String patno = "PR" + Math.abs(subject.hashCode());
        DownstreamSimulator.Fault record = legacyRecord(patno, "이서연");
        try {
            String first = client.accept(send(subject, patno, ""));
            rows.awaitStatus(first, "COMPLETED");
            DownstreamSimulator.Fault refusal = simulator().failWhen("POST /survey/dispatch-bundles/" + subject + "/resend", 409,
                    "{\"code\":\"ALREADY_SUBMITTED\",\"message\":\"이서연 환자가 이미 제출했습니다\"}");
            try {
                String resend = client.accept(send(subject, patno, ""));

                rows.awaitStatus(resend, "COMPLETED");
                assertThat(rows.row(resend).get("reply_reason")).isEqualTo("*** 환자가 이미 제출했습니다");
            } finally {
                simulator().remove(refusal);
            }
        } finally {
            simulator().remove(record);
        }
    }

    /**
     * When the record cannot be read (a 403 for a sealed record, a gateway's HTML page or JSON object), a refusal's text has no name
     * to be masked with: it is withheld and its code shown only if the contract defines it, unless the message names
     * the patient itself (then masked with that name; a name the sender wrote masked, 박*훈, names nobody). So is the refusal of the patient lookup itself, but for a 404
     * (no record: nothing to quote).
     */
    @Test
    void aRefusalsTextIsWithheldWhenNoNameIsKnownToMaskIt() {
        String unnamed = uniqueSubject("WITHHELD");
        String named = uniqueSubject("WITHNAME");
        String starred = uniqueSubject("WITHSTAR");
        String sealedSend = uniqueSubject("WITHSEAL");
        String pageSubmit = uniqueSubject("WITHPAGE");
        String objectSubmit = uniqueSubject("WITHOBJ");
        String goneSubmit = uniqueSubject("WITHGONE");
        String sealed = "PW" + Math.abs(unnamed.hashCode());
        String paged = "PH" + Math.abs(pageSubmit.hashCode());
        String objected = "PO" + Math.abs(objectSubmit.hashCode());
        String text = "{\"code\":\"BUNDLE_NOT_FOUND\",\"message\":\"박지훈님의 설문 발송이 없습니다\"}";
        List<DownstreamSimulator.Fault> faults = List.of(
                // 4xx answers: the legacy circuit takes them as signs of life, so they cannot open it for other tests
                simulator().failWhen("GET /legacy/patients/" + sealed, 403,
                        "{\"code\":\"RECORD_SEALED\",\"message\":\"박지훈 님의 기록은 열람 제한\"}"),
                simulator().failWhen("GET /legacy/patients/" + paged, 200, "<html><body>maintenance</body></html>"),
                simulator().failWhen("GET /legacy/patients/" + objected, 200, "{\"status\":\"maintenance\"}"),
                simulator().failWhen("POST /survey/dispatch-bundles/" + objectSubmit + "/", 404, text),
                simulator().failWhen("POST /survey/dispatch-bundles/" + goneSubmit + "/", 404, text),
                simulator().failWhen("POST /survey/dispatch-bundles/" + unnamed + "/", 404, text),
                simulator().failWhen("POST /survey/dispatch-bundles/" + named + "/", 404, text),
                simulator().failWhen("POST /survey/dispatch-bundles/" + starred + "/", 404, text),
                simulator().failWhen("POST /survey/dispatch-bundles/" + pageSubmit + "/", 404, text));
        try {
            String withheld = client.accept(send(unnamed, sealed, "\"msgType\":\"SUBMIT\""));
            String masked = client.accept(send(named, sealed, "\"msgType\":\"SUBMIT\",\"patNm\":\"박지훈\""));
            String maskedBySender = client.accept(send(starred, sealed, "\"msgType\":\"SUBMIT\",\"patNm\":\"박*훈\""));
            String lookupRefused = client.accept(send(sealedSend, sealed, ""));
            String page = client.accept(send(pageSubmit, paged, "\"msgType\":\"SUBMIT\""));
            String object = client.accept(send(objectSubmit, objected, "\"msgType\":\"SUBMIT\""));
            // a patient the legacy system no longer knows (merged since the SEND): the survey side may still know the name
            String gone = client.accept(send(goneSubmit, "NOPAT-" + Math.abs(goneSubmit.hashCode()), "\"msgType\":\"SUBMIT\""));

            for (String id : List.of(withheld, masked, maskedBySender, lookupRefused, page, object, gone)) {
                rows.awaitAttempt(id, 1, "FAILED");
            }
            for (String id : List.of(withheld, maskedBySender, lookupRefused, page, object, gone)) {
                assertThat(rows.row(id)).as("row %s", id).containsEntry("last_error", DownstreamCalls.WITHHELD)
                        .containsEntry("last_error_code", "(non-standard code)");
            }
            assertThat(rows.row(masked).get("last_error")).isEqualTo("***님의 설문 발송이 없습니다");
            assertThat(rows.row(masked).get("last_error_code")).isEqualTo("BUNDLE_NOT_FOUND");
        } finally {
            faults.forEach(simulator()::remove);
        }
    }

    @Test
    void duplicateEventsForOneRowRegisterItOnce() throws Exception {
        String subject = uniqueSubject("DUP");
        String id = client.accept(send(subject, "P10", ""));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        for (int i = 0; i < 20; i++) {
            pool.submit(() -> com.hospital.surveyinbox.support.EventPublisher.publish(producer, new InboxEvent(id, subject, "SEND")));
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        rows.awaitStatus(id, "COMPLETED");
        String sentinel = client.accept(send(subject + "-S", "P10", ""));
        rows.awaitStatus(sentinel, "COMPLETED");

        assertThat(simulator().bundleRequests(subject)).hasSize(1);
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
        assertThat(rows.attempts(id)).isEqualTo(1);
    }

    @Test
    void aSubmitSentWhileItsSendIsFailingIsRegisteredOnlyAfterTheSendCompletes() {
        String subject = uniqueSubject("ORDER");
        String patno = "PORD-" + subject;
        DownstreamSimulator.Fault outage = simulator().failWhen("GET /legacy/patients/" + patno, 503, "{}");
        String sendId = client.accept(send(subject, patno, ""));
        rows.awaitAttempt(sendId, 1, "FAILED");

        String submitId = client.accept(send(subject, patno, "\"msgType\":\"SUBMIT\""));
        await().atMost(Duration.ofSeconds(20)).until(() -> rows.row(submitId).get("held_reason") != null);
        assertThat(rows.status(submitId)).isEqualTo("RECEIVED");
        assertThat(rows.row(submitId).get("held_reason")).isEqualTo("waiting behind inbox " + sendId);
        assertThat(simulator().events(subject)).isEmpty();

        simulator().remove(outage);
        republish(sendId, subject, "SEND"); // what the redelivery job does for a FAILED row
        rows.awaitStatus(sendId, "COMPLETED");
        rows.awaitStatus(submitId, "COMPLETED");

        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind)
                .containsExactly("BUNDLE", "SUBMISSION");
        assertThat(rows.row(submitId).get("held_reason")).isNull();
    }
}
