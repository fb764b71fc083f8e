package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.builder.AdviceWith;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.component.mock.MockEndpoint;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.apache.camel.support.DefaultExchange;
import org.apache.camel.test.spring.junit5.UseAdviceWith;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Each route of {@code routes/} driven alone — the kit an engineer runs after editing a route. Its
 * consumer (Kafka, Quartz, platform-http) is replaced by a {@code direct:} endpoint with AdviceWith, and
 * the side effects it is about are woven by step id into MockEndpoints; everything else (PostgreSQL,
 * Redis, the downstream simulator) is real. The black-box tests prove the whole; these pin each route.
 */
@UseAdviceWith
@TestPropertySource(properties = {
        "adapter.kafka.topic=routes-alone-tests",
        "adapter.kafka.group-id=routes-alone-tests",
        "spring.quartz.scheduler-name=routes-alone-tests",
        // the jobs are driven by hand here (their Quartz consumers are replaced), so they may start
        "adapter.inbox.redeliver-enabled=true",
        "adapter.retention.enabled=true",
        "adapter.retention.batch-size=2",
        // a publish pool this small fills at once: receptions must not wait on it
        "adapter.kafka.publish-threads=1",
        "adapter.kafka.publish-queue=2"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RoutesAloneTest extends IntegrationTest {

    private static boolean advised;

    @Autowired
    CamelContext camel;

    @Autowired
    ProducerTemplate template;

    @Autowired
    InboxStore store;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    ObjectMapper mapper;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @BeforeEach
    void adviseOnceAndStart() throws Exception {
        if (!advised) {
            AdviceWith.adviceWith(camel, "inbox-receive", a -> a.replaceFromWith("direct:receive-alone"));
            AdviceWith.adviceWith(camel, "inbox-process", a -> a.replaceFromWith("direct:process-alone"));
            AdviceWith.adviceWith(camel, "inbox-process-row", a ->
                    a.weaveById("inbox-process-register").replace().to("mock:register"));
            AdviceWith.adviceWith(camel, "inbox-publish", a -> a.weaveById("to-kafka-inbox-event").replace().to("mock:kafka"));
            AdviceWith.adviceWith(camel, "inbox-register-send", a ->
                    a.weaveById("to-http-survey-bundle").replace().to("mock:bundle"));
            AdviceWith.adviceWith(camel, "inbox-consents-lookup", a ->
                    a.weaveById("to-http-legacy-consents").before().to("mock:consent-lookup"));
            AdviceWith.adviceWith(camel, "inbox-reply", a -> a.weaveById("to-legacy-reply").replace().to("mock:legacy-reply"));
            AdviceWith.adviceWith(camel, "inbox-redeliver", a -> a.replaceFromWith("direct:redeliver-tick"));
            AdviceWith.adviceWith(camel, "inbox-retention", a -> a.replaceFromWith("direct:retention-tick"));
            camel.start();
            advised = true;
        }
        MockEndpoint.resetMocks(camel);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.completed()));
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200));
        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 201);
            e.getMessage().setBody("{\"dispatchId\":\"D-alone\"}");
        });
    }

    // ---- inbox-receive ---------------------------------------------------------------------------

    @Test
    void receiveStoresAValidMessageAnswersYAndPublishesItsEvent() throws Exception {
        String subject = uniqueSubject("ALONE-RCV");
        mock("mock:kafka").expectedHeaderReceived("kafka.KEY", subject);
        Exchange answer = template.request("direct:receive-alone", e -> {
            e.getMessage().setBody(ServiceClient.message(subject, "P1", "").getBytes(StandardCharsets.UTF_8));
            e.getMessage().setHeader("Authorization", "Basic c2VjcmV0");
        });

        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
        assertThat(answer.getMessage().getHeader("X-Result-Code")).isEqualTo("Y");
        assertThat(answer.getMessage().getHeader("Authorization")).isNull();
        String inboxId = mapper.readTree(answer.getMessage().getBody(String.class)).get("inboxId").asText();
        assertThat(rows.status(inboxId)).isEqualTo("RECEIVED");
        mock("mock:kafka").assertIsSatisfied(10_000);
        assertThat(mock("mock:kafka").getReceivedExchanges().get(0).getMessage().getHeader("Authorization")).isNull();
    }

    @Test
    void receiveAnswers400NamingTheFieldAndStoresNothing() throws Exception {
        String subject = uniqueSubject("ALONE-BAD");
        Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                .setBody(("{\"srvyDrawupNo\":\"" + subject + "\",\"formCd\":\"F1\"}").getBytes(StandardCharsets.UTF_8)));

        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(400);
        assertThat(answer.getMessage().getBody(String.class)).contains("patno");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
    }

    @Test
    @org.junit.jupiter.api.Timeout(60) // with a caller-runs pool the fourth reception would wait on the blocked publish
    void receptionsNeverWaitOnKafkaWhenThePublishPoolIsFull() throws Exception {
        java.util.concurrent.CountDownLatch kafkaBack = new java.util.concurrent.CountDownLatch(1);
        mock("mock:kafka").whenAnyExchangeReceived(e -> kafkaBack.await(30, TimeUnit.SECONDS)); // a broker that does not answer
        String run = uniqueSubject("ALONE-FULL");
        List<String> ids = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                String subject = run + "-" + i;
                Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                        .setBody(ServiceClient.message(subject, "P1", "").getBytes(StandardCharsets.UTF_8)));
                assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
                ids.add(mapper.readTree(answer.getMessage().getBody(String.class)).get("inboxId").asText());
            }
            // all ten answered while no publish had finished; each row is committed and waits as RECEIVED
            assertThat(kafkaBack.getCount()).isOne();
            // one publishing, two queued: the other seven were dropped at once, never run on the caller
            assertThat(meters.find("adapter.inbox.publish.dropped").counter().count()).isGreaterThanOrEqualTo(7);
            assertThat(ids).allSatisfy(id -> assertThat(rows.status(id)).isEqualTo("RECEIVED"));
        } finally {
            kafkaBack.countDown();
        }
    }

    // ---- inbox-process ---------------------------------------------------------------------------

    @Test
    void processClaimsOnceAndRecordsWhatTheRegistrationCameTo() throws Exception {
        String subject = uniqueSubject("ALONE-PROC");
        long id = stored(subject);
        mock("mock:register").expectedMessageCount(1);

        // the consumer route hands each event to a worker and returns: both duplicates may be in flight at once
        template.sendBody("direct:process-alone", event(id, subject));
        template.sendBody("direct:process-alone", event(id, subject)); // a duplicate event: the claim refuses it
        template.sendBody("direct:process-alone", "not an event");   // unreadable: skipped, no exception

        mock("mock:register").assertIsSatisfied();
        rows.awaitStatus(Long.toString(id), "COMPLETED");
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        mock("mock:register").assertIsSatisfied(); // both workers done: still only one registration
        assertThat(rows.attempts(Long.toString(id))).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT outcome FROM inbox_attempt WHERE inbox_id = ?", String.class, id))
                .isEqualTo("COMPLETED");
    }

    @Test
    void processRecordsTheLastAllowedFailureAsDeadAndRepliesOnce() throws Exception {
        String subject = uniqueSubject("ALONE-DEAD");
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 4 WHERE id = ?", id);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.businessFailure("FORM_NOT_REGISTERED", "form X is not registered")));
        mock("mock:legacy-reply").expectedMessageCount(1);

        template.sendBody("direct:process-alone", event(id, subject));

        mock("mock:legacy-reply").assertIsSatisfied();
        rows.awaitStatus(Long.toString(id), "DEAD");
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(Long.toString(id)).get("reply_status")));
        JsonNode reply = mapper.readTree(mock("mock:legacy-reply").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(reply.get("reasonCode").asText()).isEqualTo("DEAD");
        assertThat(reply.get("reason").asText()).isEqualTo("form X is not registered");
        assertThat(rows.status(Long.toString(id))).isEqualTo("DEAD");
        assertThat(rows.row(Long.toString(id)).get("reply_status")).isEqualTo("SENT");
    }

    // ---- inbox-register (+ inbox-consents, inbox-downstream) ------------------------------------

    @Test
    void registerSendsTheBundleWithItsIdempotencyKeyAndOnlyTheHeadersItMeans() throws Exception {
        String subject = uniqueSubject("ALONE-REG");
        mock("mock:bundle").expectedHeaderReceived("Idempotency-Key", subject);

        Outcome outcome = register(subject, "{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P-" + subject + "\",\"formCd\":\"F1\"}",
                Map.of("Authorization", "Basic c2VjcmV0", "kafka.KEY", subject));

        assertThat(outcome.success()).isTrue();
        mock("mock:bundle").assertIsSatisfied();
        Map<String, Object> sent = mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getHeaders();
        assertThat(sent.keySet()).filteredOn(k -> !k.startsWith("Camel"))
                .containsExactlyInAnyOrder("Content-Type", "Idempotency-Key");
        JsonNode bundle = mapper.readTree(mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(bundle.get("guestId").asText()).startsWith("G");
    }

    @Test
    void registerClassifiesA4xxWithAMessageAsBusinessAndA5xxAsSystem() {
        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://survey", 422, "Unprocessable", null, Map.of(),
                    "{\"code\":\"FORM_NOT_REGISTERED\",\"message\":\"form F9 is not registered\"}");
        });
        String subject = uniqueSubject("ALONE-422");
        Outcome business = register(subject, ServiceClient.message(subject, "P-" + subject, ""), Map.of());
        assertThat(business.success()).isFalse();
        assertThat(business.failureReason()).isEqualTo("form F9 is not registered");

        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://survey", 503, "Unavailable", null, Map.of(), "{}");
        });
        String other = uniqueSubject("ALONE-503");
        Outcome system = register(other, ServiceClient.message(other, "P-" + other, ""), Map.of());
        assertThat(system.failureReason()).isEqualTo(Outcome.SYSTEM_ERROR);
    }

    @Test
    void consentsAreLookedUpOncePerSurveyEvenByConcurrentMissesAndThenComeFromRedis() throws Exception {
        String srvyNo = "CONSENT-" + uniqueSubject("ALONE");
        mock("mock:consent-lookup").expectedMessageCount(1);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<Outcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String subject = uniqueSubject("ALONE-CNS");
            outcomes.add(pool.submit(() -> register(subject,
                    ServiceClient.message(subject, "P-" + subject, "\"srvyNo\":\"" + srvyNo + "\""), Map.of())));
        }
        for (Future<Outcome> f : outcomes) {
            assertThat(f.get(30, TimeUnit.SECONDS).success()).isTrue();
        }
        pool.shutdown();

        mock("mock:consent-lookup").assertIsSatisfied();
        assertThat(redis.opsForValue().get("survey-inbox-adapter:consents:" + srvyNo)).contains("C1");
        JsonNode bundle = mapper.readTree(mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(bundle.get("consents")).hasSize(1);
    }

    // ---- inbox-reply -----------------------------------------------------------------------------

    @Test
    void replyRecordsARefusalAsFailedAndDeliversOnTheNextTry() throws Exception {
        String subject = uniqueSubject("ALONE-RPL");
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'PENDING', reply_reason_code = 'NOTIFY_SKIPPED', "
                + "reply_reason = 'no notification' WHERE id = ?", id);
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 503));

        template.sendBody("direct:inbox-reply", id);
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED")
                .containsEntry("reply_last_error", "legacy answered HTTP 503");

        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200));
        template.sendBody("direct:inbox-reply", id);
        template.sendBody("direct:inbox-reply", id); // delivered once: a SENT reply is never taken again
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENT");
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).isEqualTo(2);
    }

    // ---- inbox-redeliver -------------------------------------------------------------------------

    @Test
    void redeliverRepublishesStalledRowsInArrivalOrderResetsStuckOnesAndRecordsTheRun() throws Exception {
        String run = uniqueSubject("ALONE-REDEL");
        long lost = stored(run + "-lost");
        long retry = stored(run + "-retry");
        long stuck = stored(run + "-stuck");
        long stuckLast = stored(run + "-stuck-last");
        long successor = stored(run + "-stuck-last"); // waits behind stuckLast; not old enough to count as lost
        jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = now() - INTERVAL '1 hour' WHERE id = ?", retry);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 1, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuck);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 5, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuckLast);
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();

        template.sendBody("direct:redeliver-tick", null);

        assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
        List<String> republished = mock("mock:kafka").getReceivedExchanges().stream()
                .map(e -> e.getMessage().getBody(String.class)).filter(b -> b.contains(run)).toList();
        assertThat(republished).hasSize(4);
        assertThat(republished.get(0)).contains("\"inboxId\":\"" + lost + "\"");
        assertThat(republished.get(1)).contains("\"inboxId\":\"" + retry + "\"");
        assertThat(republished.get(2)).contains("\"inboxId\":\"" + stuck + "\"");
        // stuckLast went DEAD: the row waiting behind it is released at once
        assertThat(republished.get(3)).contains("\"inboxId\":\"" + successor + "\"");
        assertThat(rows.status(Long.toString(stuck))).isEqualTo("RECEIVED");
        assertThat(rows.status(Long.toString(stuckLast))).isEqualTo("DEAD");
        assertThat(rows.row(Long.toString(stuckLast))).containsEntry("reply_status", "SENT"); // the same tick sent its reply
        assertThat(jdbc.queryForObject("SELECT count(*) FROM redelivery_run WHERE scheduler = 'routes-alone-tests'", Long.class))
                .isPositive();
    }

    @Test
    void redeliverDuringAKafkaOutageSendsTheRepliesAndStopsPublishingAtTheFirstFailure() throws Exception {
        String run = uniqueSubject("ALONE-KDOWN");
        for (int i = 0; i < 3; i++) {
            long lost = stored(run + "-lost-" + i);
            jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        }
        long owed = stored(run + "-reply");
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', reply_status = 'PENDING', reply_reason_code = 'DEAD', "
                + "reply_reason = 'x', reply_updated_at = now() - INTERVAL '1 hour' WHERE id = ?", owed);
        mock("mock:kafka").whenAnyExchangeReceived(e -> {
            throw new org.apache.kafka.common.errors.TimeoutException("broker unavailable"); // what a delivery timeout looks like
        });
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();

        template.sendBody("direct:redeliver-tick", null);

        assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
        // one publish tried and failed: the rest of the tick's events wait for a later tick instead of each
        // waiting out a delivery timeout; the owed reply, which needs no Kafka, went out all the same
        assertThat(mock("mock:kafka").getReceivedCounter()).isOne();
        assertThat(rows.row(Long.toString(owed))).containsEntry("reply_status", "SENT");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'RECEIVED'",
                Long.class, run + "-lost-%")).isEqualTo(3);
    }

    // ---- inbox-retention -------------------------------------------------------------------------

    @Test
    void retentionRedactsOldClosedPayloadsInBatchesAndNeverUnfinishedRows() throws Exception {
        String p = uniqueSubject("ALONE-RET");
        long completedOld = aged(p + "-c-old", "COMPLETED", 31);
        long completedOld2 = aged(p + "-c-old2", "COMPLETED", 45);
        long completedYoung = aged(p + "-c-young", "COMPLETED", 29);
        long deadOld = aged(p + "-d-old", "DEAD", 91);
        long deadMid = aged(p + "-d-mid", "DEAD", 60);
        long received = aged(p + "-r", "RECEIVED", 400);
        long processing = aged(p + "-p", "PROCESSING", 400);
        long failed = aged(p + "-f", "FAILED", 400);
        NotifyBuilder done = new NotifyBuilder(camel).fromRoute("inbox-retention").whenDone(1).create();

        template.sendBody("direct:retention-tick", null); // batch-size 2: three due rows take more than one batch

        assertThat(done.matches(30, TimeUnit.SECONDS)).isTrue();
        for (long id : new long[] {completedOld, completedOld2, deadOld}) {
            Map<String, Object> r = jdbc.queryForMap("SELECT * FROM inbox_message WHERE id = ?", id);
            assertThat(r.get("payload")).isNull();
            assertThat(r.get("redacted_at")).isNotNull();
            assertThat(r.get("srvy_drawup_no")).isNotNull();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class, id)).isEqualTo(1);
        }
        for (long id : new long[] {completedYoung, deadMid, received, processing, failed}) {
            assertThat(jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, id)).isNotNull();
        }
        // a redacted DEAD row cannot be requeued: there is nothing left to process
        assertThat(client.opsPost("/ops/inbox/" + deadOld + "/requeue").status()).isEqualTo(409);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id IN (?, ?, ?)", received, processing, failed);
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private MockEndpoint mock(String uri) {
        return camel.getEndpoint(uri, MockEndpoint.class);
    }

    private long stored(String subject) {
        return store.accept(new ReceivedMessage(subject, "SEND",
                ServiceClient.message(subject, "P-" + subject, "").getBytes(StandardCharsets.UTF_8), null)).inboxId();
    }

    private long aged(String subject, String status, int ageDays) {
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = ?, updated_at = now() - make_interval(days => ?), "
                + "created_at = now() - make_interval(days => ?) WHERE id = ?", status, ageDays, ageDays, id);
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, outcome) VALUES (?, 1, now(), ?)", id, status);
        return id;
    }

    private String event(long id, String subject) throws Exception {
        return mapper.writeValueAsString(new InboxEvent(Long.toString(id), subject, "SEND"));
    }

    /** inbox-register on a row that is not stored (as the synchronous path does), with some inbound headers. */
    private Outcome register(String subject, String json, Map<String, Object> inboundHeaders) {
        Exchange exchange = new DefaultExchange(camel);
        exchange.setProperty("row", new ClaimedRow(Long.MAX_VALUE, subject, "SEND", json.getBytes(StandardCharsets.UTF_8), 1, null));
        exchange.getMessage().setHeaders(new java.util.HashMap<>(inboundHeaders));
        Exchange done = template.send("direct:inbox-register", exchange);
        assertThat(done.getException()).isNull();
        return done.getProperty("outcome", Outcome.class);
    }

}
