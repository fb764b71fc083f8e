package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.inbox.Acceptance;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.processing.ClaimRepository;
import com.hospital.surveyinbox.processing.ProcessingRecord;
import com.hospital.surveyinbox.support.RowOutcomes;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The redelivery job end to end with second-scale timings: its own topic and Quartz cluster, so the
 * shared test context neither consumes these events nor runs these ticks.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=redelivery-tests",
        "adapter.kafka.group-id=redelivery-tests",
        "spring.quartz.scheduler-name=redelivery-tests",
        "adapter.inbox.redeliver-enabled=true",
        "adapter.inbox.redeliver-cron=0/1 * * * * ?",
        "adapter.inbox.lost-event-after=PT2S",
        // with lost-event-after 2 s: a bulk requeue has room for 2 events (2/s x 1 s), one published each 500 ms
        "adapter.inbox.bulk-requeue-rate-per-second=2",
        "adapter.inbox.retry-delay=PT1S",
        // a reply failing 4 times waits 1, 2, 4 s between tries, then at most 4 s
        "adapter.inbox.reply-max-retry-delay=PT4S",
        "adapter.inbox.stuck-processing-after=PT3S",
        "adapter.circuit.failure-threshold=3",
        "adapter.circuit.open-duration=PT2S"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RedeliveryTest extends IntegrationTest {

    /** Spans as an exporter (OTLP in production) receives them: after {@code SpanRedaction}. */
    static final com.hospital.surveyinbox.support.CollectedSpans EXPORTED = new com.hospital.surveyinbox.support.CollectedSpans();

    @org.springframework.boot.test.context.TestConfiguration
    static class SpanCollector {
        @org.springframework.context.annotation.Bean
        io.opentelemetry.sdk.trace.export.SpanExporter collectingSpanExporter() {
            return EXPORTED;
        }
    }

    @Autowired
    InboxStore store;

    @Autowired
    org.apache.camel.CamelContext camel;

    @Autowired
    com.hospital.surveyinbox.config.AdapterProperties adapterProperties;

    @Autowired
    ClaimRepository claims;

    @Autowired
    com.hospital.surveyinbox.processing.DownstreamCircuits circuits;

    @Autowired
    org.apache.camel.ProducerTemplate producer;

    @Autowired
    ProcessingRecord record;

    @Autowired
    com.hospital.surveyinbox.ops.PacedRepublisher paced;

    static String send(String subject, String patno, String extra) {
        return ServiceClient.message(subject, patno, extra);
    }

    /** A row stored without its event: exactly what a crash between commit and publish leaves. */
    private long storeWithoutEvent(String subject, String json) {
        Acceptance a = store.accept(new ReceivedMessage(subject, "SEND", json.getBytes(StandardCharsets.UTF_8), null));
        return a.inboxId();
    }

    @Test
    void theRetentionJobFiresAtItsCronInTheHospitalsZoneNotTheJvms() throws Exception {
        // a pod's JVM runs in UTC: without the trigger's zone "daily 03:30" ran at 12:30 in Seoul, at peak load
        org.apache.camel.component.quartz.QuartzEndpoint retention = (org.apache.camel.component.quartz.QuartzEndpoint)
                camel.getRoute("inbox-retention").getEndpoint();
        java.time.ZoneId hospital = adapterProperties.getLegacy().getZone();
        assertThat(retention.getTriggerParameters()).containsEntry("timeZone", hospital.getId());
        // as camel-quartz builds the trigger (CronScheduleBuilder ... inTimeZone): the next fire is 03:30 there
        org.quartz.CronExpression cron = new org.quartz.CronExpression(retention.getCron());
        cron.setTimeZone(java.util.TimeZone.getTimeZone((String) retention.getTriggerParameters().get("timeZone")));
        java.time.ZonedDateTime next = cron.getNextValidTimeAfter(new java.util.Date()).toInstant().atZone(hospital);
        assertThat(next.toLocalTime()).isEqualTo(java.time.LocalTime.of(3, 30));
    }

    /**
     * After the database failed, the scheduler tries it again after 5 s, not Quartz's 15 s: with 15 s the redelivery
     * job resumed 45 s after a 10 s freeze (FrozenDatabaseTest), its trigger misfired meanwhile and left to the
     * misfire scan. Read from the running scheduler's job store, where a key Quartz does not know would be ignored.
     */
    @Test
    void theSchedulerTriesAFailingDatabaseAgainAfterFiveSeconds() throws Exception {
        org.quartz.Scheduler scheduler = ((org.apache.camel.component.quartz.QuartzEndpoint)
                camel.getRoute("inbox-redeliver").getEndpoint()).getComponent().getScheduler();
        java.lang.reflect.Field sched = org.quartz.impl.StdScheduler.class.getDeclaredField("sched");
        sched.setAccessible(true);
        java.lang.reflect.Field resources = org.quartz.core.QuartzScheduler.class.getDeclaredField("resources");
        resources.setAccessible(true);
        org.quartz.spi.JobStore store = ((org.quartz.core.QuartzSchedulerResources) resources.get(sched.get(scheduler)))
                .getJobStore();
        assertThat(((org.quartz.impl.jdbcjobstore.JobStoreSupport) store).getDbRetryInterval()).isEqualTo(5000);
    }

    @Test
    void aRetentionTriggerStoredInAnotherZoneIsRescheduledInTheHospitalsWhenTheRouteStarts() throws Exception {
        org.apache.camel.component.quartz.QuartzEndpoint retention = (org.apache.camel.component.quartz.QuartzEndpoint)
                camel.getRoute("inbox-retention").getEndpoint();
        org.quartz.Scheduler scheduler = retention.getComponent().getScheduler();
        String hospital = adapterProperties.getLegacy().getZone().getId();
        try {
            camel.getRouteController().startRoute("inbox-retention");
            assertThat(storedZone(scheduler, retention.getTriggerKey())).isEqualTo(hospital);

            // a pod of an older release (no zone, camel-quartz's misfire rule) stores the trigger while the cluster is on
            // this one: in UTC, "fire once now"
            org.quartz.CronTrigger stored = (org.quartz.CronTrigger) scheduler.getTrigger(retention.getTriggerKey());
            // (stored days ago: realigned from that start, its first fire time would be in the past and fire at once)
            scheduler.rescheduleJob(stored.getKey(), stored.getTriggerBuilder()
                    .startAt(java.util.Date.from(java.time.Instant.now().minus(java.time.Duration.ofDays(3))))
                    .withSchedule(org.quartz.CronScheduleBuilder
                    .cronSchedule(stored.getCronExpression()).withMisfireHandlingInstructionFireAndProceed()
                    .inTimeZone(java.util.TimeZone.getTimeZone("UTC"))).build());
            assertThat(storedZone(scheduler, retention.getTriggerKey())).isEqualTo("UTC");

            // camel-quartz alone keeps a stored trigger whose cron text is unchanged, whatever its zone
            camel.getRouteController().stopRoute("inbox-retention");
            camel.getRouteController().startRoute("inbox-retention");

            org.quartz.CronTrigger aligned = (org.quartz.CronTrigger) scheduler.getTrigger(retention.getTriggerKey());
            assertThat(aligned.getTimeZone().getID()).isEqualTo(hospital);
            assertThat(aligned.getCronExpression()).isEqualTo(stored.getCronExpression());
            assertThat(aligned.getJobKey()).isEqualTo(stored.getJobKey());
            // a run missed across 03:30 (every pod down) waits for the next 03:30: "fire once now" ran it when the pods
            // came back, at peak hours
            assertThat(aligned.getMisfireInstruction()).isEqualTo(org.quartz.CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING);
            org.quartz.spi.OperableTrigger missed = (org.quartz.spi.OperableTrigger) ((org.quartz.impl.triggers.CronTriggerImpl) aligned).clone();
            missed.setNextFireTime(java.util.Date.from(java.time.Instant.now().minus(java.time.Duration.ofHours(6))));
            missed.updateAfterMisfire(null);
            assertThat(missed.getNextFireTime()).isInTheFuture();
            assertThat(missed.getNextFireTime().toInstant().atZone(adapterProperties.getLegacy().getZone()).toLocalTime())
                    .isEqualTo(java.time.LocalTime.of(3, 30));
            assertThat(aligned.getNextFireTime().toInstant().atZone(adapterProperties.getLegacy().getZone()).toLocalTime())
                    .isEqualTo(java.time.LocalTime.of(3, 30));
            // started now: from the stored start its first fire time lay in the past, fired at once as a misfire
            assertThat(aligned.getStartTime()).isAfter(java.util.Date.from(java.time.Instant.now().minus(java.time.Duration.ofMinutes(1))));
            assertThat(aligned.getNextFireTime()).isInTheFuture();
            assertThat(scheduler.getTriggerState(aligned.getKey())).isEqualTo(org.quartz.Trigger.TriggerState.NORMAL);
        } finally {
            camel.getRouteController().stopRoute("inbox-retention");
        }
    }

    /**
     * A pod whose clock ran an hour ahead fired the redelivery trigger (or took it as a misfire) and stored its next
     * fire from that clock: every other pod waited an hour for it, and restarting pods did not help (camel-quartz keeps
     * a stored trigger whose cron is unchanged). A route starting with such a trigger reschedules it from now.
     */
    @Test
    void aRedeliveryTriggerStoredAnHourPastItsScheduleIsRescheduledWhenTheRouteStarts() throws Exception {
        org.apache.camel.component.quartz.QuartzEndpoint redeliver = (org.apache.camel.component.quartz.QuartzEndpoint)
                camel.getRoute("inbox-redeliver").getEndpoint();
        org.quartz.Scheduler scheduler = redeliver.getComponent().getScheduler();
        org.quartz.CronTrigger stored = (org.quartz.CronTrigger) scheduler.getTrigger(redeliver.getTriggerKey());
        java.time.Instant anHourAhead = java.time.Instant.now().plus(java.time.Duration.ofHours(1));
        scheduler.rescheduleJob(stored.getKey(), stored.getTriggerBuilder().startAt(java.util.Date.from(anHourAhead))
                .withSchedule((org.quartz.CronScheduleBuilder) stored.getScheduleBuilder()).build());
        try {
            assertThat(scheduler.getTrigger(redeliver.getTriggerKey()).getNextFireTime())
                    .isAfter(java.util.Date.from(anHourAhead.minus(java.time.Duration.ofSeconds(1))));

            camel.getRouteController().stopRoute("inbox-redeliver");
            camel.getRouteController().startRoute("inbox-redeliver");

            org.quartz.Trigger aligned = scheduler.getTrigger(redeliver.getTriggerKey());
            assertThat(aligned.getNextFireTime()).isBefore(java.util.Date.from(java.time.Instant.now().plus(java.time.Duration.ofMinutes(1))));
            java.sql.Timestamp restarted = jdbc.queryForObject("SELECT now()", java.sql.Timestamp.class);
            await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM redelivery_run WHERE fired_at > ?", Long.class, restarted) > 0);
        } finally {
            // the other tests of this class need the ticks, whatever happened above
            org.quartz.Trigger now = scheduler.getTrigger(redeliver.getTriggerKey());
            if (now.getNextFireTime().after(java.util.Date.from(java.time.Instant.now().plus(java.time.Duration.ofMinutes(1))))) {
                scheduler.rescheduleJob(now.getKey(), now.getTriggerBuilder().startNow().build());
            }
        }
    }

    /**
     * A "do nothing" trigger (retention, daily) is not realigned for lying ahead: a pod whose clock ran ahead moves its
     * run to the next day's at most, and a pod whose clock is behind would take a healthy one for late and move the run
     * to its own 03:30 (peak hours in real time).
     */
    @Test
    void aDoNothingTriggerAheadOfItsScheduleIsLeftAsStored() throws Exception {
        org.apache.camel.component.quartz.QuartzEndpoint retention = (org.apache.camel.component.quartz.QuartzEndpoint)
                camel.getRoute("inbox-retention").getEndpoint();
        org.quartz.Scheduler scheduler = retention.getComponent().getScheduler();
        try {
            camel.getRouteController().startRoute("inbox-retention");
            org.quartz.CronTrigger stored = (org.quartz.CronTrigger) scheduler.getTrigger(retention.getTriggerKey());
            assertThat(stored.getMisfireInstruction()).isEqualTo(org.quartz.CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING);
            scheduler.rescheduleJob(stored.getKey(), stored.getTriggerBuilder()
                    .startAt(java.util.Date.from(java.time.Instant.now().plus(java.time.Duration.ofDays(2))))
                    .withSchedule((org.quartz.CronScheduleBuilder) stored.getScheduleBuilder()).build());
            java.util.Date ahead = scheduler.getTrigger(retention.getTriggerKey()).getNextFireTime();

            camel.getRouteController().stopRoute("inbox-retention");
            camel.getRouteController().startRoute("inbox-retention");

            assertThat(scheduler.getTrigger(retention.getTriggerKey()).getNextFireTime()).isEqualTo(ahead);
        } finally {
            camel.getRouteController().stopRoute("inbox-retention");
        }
    }

    private static String storedZone(org.quartz.Scheduler scheduler, org.quartz.TriggerKey key) throws Exception {
        return ((org.quartz.CronTrigger) scheduler.getTrigger(key)).getTimeZone().getID();
    }

    @Test
    void republishesALostEventAfterLostEventAfterAndTheRowCompletes() {
        String subject = uniqueSubject("LOST");
        String id = Long.toString(storeWithoutEvent(subject, send(subject, "P1", "")));

        rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(30));

        assertThat(rows.row(id).get("published_at")).isNotNull();
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM redelivery_run WHERE scheduler = 'redelivery-tests' AND lost_events > 0",
                Long.class)).isPositive();
    }

    @Test
    void resetsARowWhoseWorkerDiedAndRejectsTheDeadWorkersLateCompletion() {
        String subject = uniqueSubject("STUCK");
        String patno = "PSTUCK-" + subject;
        String traceId = java.util.UUID.randomUUID().toString().replace("-", "");
        long id = store.accept(new ReceivedMessage(subject, "SEND", send(subject, patno, "").getBytes(StandardCharsets.UTF_8),
                null, "00-" + traceId + "-00f067aa0ba902b7-01")).inboxId();
        ClaimedRow deadWorker = claims.claim(id).orElseThrow(); // claimed, then the worker "dies"

        rows.awaitStatus(Long.toString(id), "COMPLETED", Duration.ofSeconds(30));
        // reset and republished by the job, the row is registered in the trace it was received in
        assertThat(simulator().requests()).filteredOn(r -> r.line().contains(patno)).isNotEmpty()
                .allSatisfy(r -> assertThat(r.header("traceparent")).contains(traceId));

        RowOutcomes outcomes = new RowOutcomes(producer, record);
        assertThat(outcomes.complete(deadWorker)).isFalse();
        assertThat(outcomes.fail(deadWorker, "late")).isNull();
        assertThat(rows.status(Long.toString(id))).isEqualTo("COMPLETED");
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
        JsonNode detail = client.ops("/ops/inbox/" + id).json();
        assertThat(detail.get("attemptHistory")).extracting(a -> a.get("outcome").asText())
                .containsExactly("ABANDONED", "COMPLETED");
    }

    @Test
    void retriesAFailedRowOnScheduleUntilDeadAndRepliesOnce() {
        String subject = uniqueSubject("RETRY");
        String id = client.accept("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P3\",\"formCd\":\"UNREG-R\"}");

        rows.awaitStatus(id, "DEAD", Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(20)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));

        assertThat(rows.attempts(id)).isEqualTo(5);
        assertThat(simulator().replies(subject)).singleElement().satisfies(r -> {
            assertThat(r.get("reasonCode").asText()).isEqualTo("DEAD");
            assertThat(r.get("reason").asText()).isEqualTo("form UNREG-R is not registered");
        });
        // the job keeps ticking; nothing more happens to a DEAD row
        long ticks = ticks();
        await().atMost(Duration.ofSeconds(20)).until(() -> ticks() >= ticks + 3);
        assertThat(rows.attempts(id)).isEqualTo(5);
        assertThat(simulator().replies(subject)).hasSize(1);
    }

    /**
     * Issue 21.1: the sender's trace reaches every downstream call of every attempt and the reply: the row stores
     * the reception's trace context and each of its events carries it (the first publish and the redelivery).
     */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void theSendersTraceReachesEveryDownstreamCallTheReplyAndTheLogAlsoAfterARedelivery(
            org.springframework.boot.test.system.CapturedOutput output) throws Exception {
        String subject = uniqueSubject("TRACE");
        String patno = "PTRACE-" + subject;
        String traceId = java.util.UUID.randomUUID().toString().replace("-", "");
        java.util.concurrent.atomic.AtomicInteger patientCalls = new java.util.concurrent.atomic.AtomicInteger();
        DownstreamSimulator.Fault firstAttemptFails = simulator().add(new DownstreamSimulator.Fault(
                s -> s.equals("GET /legacy/patients/" + patno) && patientCalls.incrementAndGet() == 1,
                503, "{\"error\":\"down\"}", 0));
        // the log events themselves, to format them as the prod profile does (ECS JSON)
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events = new ch.qos.logback.core.read.ListAppender<>();
        events.setContext(root.getLoggerContext());
        events.start();
        root.addAppender(events);
        try {
            Reply reply = client.receive(send(subject, patno, "\"srvyNo\":\"S-" + subject + "\",\"alimtalkYn\":\"N\""),
                    Map.of("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"));
            assertThat(reply.status()).isEqualTo(200);
            String id = reply.json().get("inboxId").asText();

            rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(30)); // attempt 1 FAILED, redelivered, attempt 2
            await().atMost(Duration.ofSeconds(20)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));

            assertThat(rows.attempts(id)).isEqualTo(2);
            assertThat(rows.row(id).get("trace_parent")).asString().contains(traceId);
            List<String> traced = simulator().requests().stream()
                    .filter(r -> r.header("traceparent") != null && r.header("traceparent").contains(traceId))
                    .map(r -> r.line().replaceAll("\\?.*", "")).toList();
            assertThat(traced).containsSubsequence(
                    "GET /legacy/surveys/S-" + subject + "/consents", "GET /legacy/patients/" + patno, // attempt 1
                    "GET /legacy/patients/" + patno, "GET /account/guests", "POST /account/guests", // attempt 2
                    "POST /survey/dispatch-bundles", "POST /legacy/survey-send-results");
            assertThat(simulator().requests()).filteredOn(r -> r.line().contains(patno)).hasSize(3)
                    .allSatisfy(r -> assertThat(r.header("traceparent")).contains(traceId));
            List<String> rowLines = output.getAll().lines().filter(l -> l.contains("Inbox " + id + " ")).toList();
            assertThat(rowLines).anyMatch(l -> l.contains("FAILED after attempt 1")).anyMatch(l -> l.contains("COMPLETED"))
                    .allSatisfy(l -> assertThat(l).contains(traceId));
            // the same lines as the prod profile writes them (logging.structured.format.console: ecs)
            org.springframework.boot.logging.logback.StructuredLogEncoder ecs = new org.springframework.boot.logging.logback.StructuredLogEncoder();
            ecs.setContext(root.getLoggerContext());
            ecs.setFormat("ecs");
            ecs.start();
            List<JsonNode> jsonLines = new ArrayList<>();
            for (ch.qos.logback.classic.spi.ILoggingEvent event : List.copyOf(events.list)) {
                if (event.getFormattedMessage().startsWith("Inbox " + id + " ")) {
                    jsonLines.add(new com.fasterxml.jackson.databind.ObjectMapper().readTree(ecs.encode(event)));
                }
            }
            assertThat(jsonLines).hasSizeGreaterThanOrEqualTo(4).allSatisfy(json -> {
                assertThat(json.path("trace_id").asText()).isEqualTo(traceId);
                assertThat(json.path("span_id").asText()).matches("[0-9a-f]{16}");
                assertThat(json.path("inboxId").asText()).isEqualTo(id);
            });

            // the exported spans: the failed patient call is there, and no span names the patient (Camel's spans
            // carry each call's URL and the failure's message, which quotes it)
            await().atMost(Duration.ofSeconds(20)).until(() -> EXPORTED.stream().anyMatch(s -> s.getTraceId().equals(traceId)
                    && s.getStatus().getStatusCode() == io.opentelemetry.api.trace.StatusCode.ERROR)
                    && EXPORTED.stream().anyMatch(s -> s.getTraceId().equals(traceId) && s.getName().contains("inbox-reply")));
            List<io.opentelemetry.sdk.trace.data.SpanData> spans = EXPORTED.stream()
                    .filter(s -> s.getTraceId().equals(traceId)).toList();
            assertThat(spans).hasSizeGreaterThan(10).allSatisfy(s -> assertThat(s.getName() + s.getAttributes()
                    + s.getEvents() + s.getStatus()).doesNotContain(patno).doesNotContain("/patients/"));
        } finally {
            root.detachAppender(events);
            simulator().remove(firstAttemptFails);
        }
    }

    /** Issue 22: each tick folds the count deltas of finished rows (V8) into their totals, so reads sum few. */
    @Test
    void eachTickFoldsTheCountDeltas() {
        // a delta of zero: folded like any other, changes no count
        long delta = jdbc.queryForObject("INSERT INTO inbox_status_delta (status, delta) VALUES ('COMPLETED', 0) RETURNING id", Long.class);
        await().atMost(Duration.ofSeconds(20)).until(() ->
                jdbc.queryForObject("SELECT count(*) FROM inbox_status_delta WHERE id <= ?", Long.class, delta) == 0);
    }

    /** Issue 22: each tick folds the console chart's minutes that can no longer change (V14), up to 2 minutes ago. */
    @Test
    void eachTickFoldsTheChartsMinutes() {
        // a row received ten minutes ago (its minute folded as empty already, if the job ran then): counted again.
        // The row first, then the watermark moved back: the other way round, a tick between the two statements folded
        // the minute again without the row and moved the watermark past it (a flake)
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, updated_at)"
                + " VALUES ('CHART-' || gen_random_uuid(), 'SEND', 'COMPLETED', 1, date_trunc('minute', now()) - INTERVAL '10 minutes',"
                + " date_trunc('minute', now()) - INTERVAL '10 minutes')");
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '30 minutes'");
        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "SELECT folded_until >= date_trunc('minute', now()) - INTERVAL '3 minutes' FROM inbox_history_folded", Boolean.class));
        // every row received in that minute, this one included: a minute folded before the row, and not replaced
        // when folded again (an upsert that kept the first count), reads one fewer
        assertThat(jdbc.queryForObject("SELECT received FROM inbox_history_minute WHERE minute = (SELECT date_trunc('minute', created_at)"
                + " FROM inbox_message WHERE srvy_drawup_no LIKE 'CHART-%' ORDER BY id DESC LIMIT 1)", Long.class))
                .as("the minute of that row, folded by the tick").isEqualTo(jdbc.queryForObject("SELECT count(*) FROM inbox_message"
                        + " WHERE date_trunc('minute', created_at) = (SELECT date_trunc('minute', created_at) FROM inbox_message"
                        + " WHERE srvy_drawup_no LIKE 'CHART-%' ORDER BY id DESC LIMIT 1)", Long.class));
        assertThat(jdbc.queryForObject("SELECT folded_until <= now() - INTERVAL '2 minutes' FROM inbox_history_folded", Boolean.class))
                .as("never a minute that may still gain rows").isTrue();
    }

    @Test
    void retriesAFailedReplyLaterAndDeliversItExactlyOnce() {
        String subject = uniqueSubject("REPLY");
        // other tests' failures count towards the legacy circuit (threshold 3): start with it not open (half-open,
        // the consents call is its trial and closes it)
        await().atMost(Duration.ofSeconds(20)).until(() -> circuits.state("legacy") != com.hospital.surveyinbox.processing.DownstreamCircuits.State.OPEN);
        DownstreamSimulator.Fault replyDown = simulator().failWhen("POST /legacy/survey-send-results", 503, "{}");
        String id = client.accept(send(subject, "P4", "\"alimtalkYn\":\"N\""));

        rows.awaitStatus(id, "COMPLETED");
        await().atMost(Duration.ofSeconds(20)).until(() -> "FAILED".equals(rows.row(id).get("reply_status")));
        assertThat(rows.row(id).get("reply_last_error")).isEqualTo("legacy answered HTTP 503");
        // retried while the legacy side refuses; once its refusals open the circuit, a retry is not even sent
        // (one snapshot of the row, taken between two tries: during a try the row reads SENDING)
        Map<String, Object> between = await().atMost(Duration.ofSeconds(30)).until(() -> rows.row(id),
                row -> ((Number) row.get("reply_attempts")).intValue() >= 4 && "FAILED".equals(row.get("reply_status")));
        assertThat(between.get("reply_last_error")).isIn("legacy answered HTTP 503", "waiting: legacy unavailable (circuit open)");
        assertThat(simulator().replies(subject)).isEmpty();

        simulator().remove(replyDown);
        await().atMost(Duration.ofSeconds(20)).until(() -> "SENT".equals(rows.row(id).get("reply_status")));
        long ticks = ticks();
        await().atMost(Duration.ofSeconds(20)).until(() -> ticks() >= ticks + 3);
        assertThat(simulator().replies(subject)).singleElement()
                .satisfies(r -> assertThat(r.get("reasonCode").asText()).isEqualTo("NOTIFY_SKIPPED"));
    }

    @Test
    void aDownstreamOutageDefersRowsUnchargedAndEveryRowCompletesWhenItIsBack() {
        DownstreamSimulator.Fault outage = simulator().failWhen("GET /legacy/patients/", 503, "{\"error\":\"maintenance\"}");
        String run = uniqueSubject("OUTAGE");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ids.add(client.accept(send(run + "-" + i, "P-" + run + "-" + i, "")));
        }
        // every row has been tried or deferred, and the outage lasts several retry rounds
        await().atMost(Duration.ofSeconds(30)).until(() -> ids.stream().allMatch(id -> "FAILED".equals(rows.status(id))));
        long ticks = ticks();
        await().atMost(Duration.ofSeconds(30)).until(() -> ticks() >= ticks + 6);
        assertThat(ids).allSatisfy(id -> assertThat(rows.status(id)).isNotEqualTo("DEAD"));
        int deferred = jdbc.queryForObject("SELECT count(*) FROM inbox_attempt a JOIN inbox_message m ON m.id = a.inbox_id "
                + "WHERE m.srvy_drawup_no LIKE ? AND a.outcome = 'DEFERRED'", Integer.class, run + "-%");
        assertThat(deferred).isPositive();

        simulator().remove(outage);
        for (String id : ids) {
            rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(60));
        }
        for (int i = 0; i < 30; i++) {
            assertThat(simulator().bundleCreates(run + "-" + i)).isEqualTo(1);
        }
        int maxAttempts = jdbc.queryForObject("SELECT max(attempts) FROM inbox_message WHERE srvy_drawup_no LIKE ?",
                Integer.class, run + "-%");
        assertThat(maxAttempts).isLessThan(5);
    }

    /** An operator's requeue continues the reception's trace too: the row keeps it, its event carries it. */
    @Test
    void aRequeuedRowsCallsCarryTheSendersTrace() {
        String subject = uniqueSubject("TRACEQ");
        String patno = "PTRACEQ-" + subject;
        String traceId = java.util.UUID.randomUUID().toString().replace("-", "");
        DownstreamSimulator.Fault missing = simulator().failWhen("GET /legacy/patients/" + patno, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"not registered yet\"}");
        Reply reply = client.receive(send(subject, patno, ""), Map.of("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"));
        String id = reply.json().get("inboxId").asText();
        rows.awaitStatus(id, "DEAD", Duration.ofSeconds(60));
        simulator().remove(missing);
        int before = simulator().requests().size();

        assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
        rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(30));

        List<DownstreamSimulator.Request> after = simulator().requests().subList(before, simulator().requests().size());
        assertThat(after).filteredOn(r -> r.line().contains(patno)).isNotEmpty()
                .allSatisfy(r -> assertThat(r.header("traceparent")).contains(traceId));
        assertThat(after).filteredOn(r -> r.header("traceparent") != null && r.header("traceparent").contains(traceId))
                .extracting(r -> r.line().replaceAll("\\?.*", ""))
                .contains("GET /legacy/patients/" + patno, "POST /survey/dispatch-bundles");
    }

    /**
     * Bulk requeue after a downstream fix: a dry run counts the DEAD rows a filter matches and changes nothing;
     * the real call takes at most {@code limit} of them, oldest first, each audited like a single requeue, and
     * they complete; rows the filter does not match stay DEAD; a filter that is not one is a 400.
     */
    @Test
    void bulkRequeuesTheDeadRowsAFilterMatchesAfterADryRun() {
        String run = uniqueSubject("BULK");
        java.time.OffsetDateTime before = java.time.OffsetDateTime.now().minusSeconds(5);
        List<String> matching = new java.util.ArrayList<>();
        List<DownstreamSimulator.Fault> faults = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String patno = "PBULK" + i + "-" + run;
            faults.add(simulator().failWhen("GET /legacy/patients/" + patno, 404,
                    "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient not registered yet\"}"));
            matching.add(client.accept(send(run + "-" + i, patno, "")));
        }
        String otherPatno = "PBULKX-" + run;
        faults.add(simulator().failWhen("GET /legacy/patients/" + otherPatno, 404,
                "{\"code\":\"PATIENT_BLOCKED\",\"message\":\"patient blocked\"}"));
        String other = client.accept(send(run + "-x", otherPatno, ""));
        for (String id : matching) {
            rows.awaitStatus(id, "DEAD", Duration.ofSeconds(60));
        }
        rows.awaitStatus(other, "DEAD", Duration.ofSeconds(60));
        faults.forEach(simulator()::remove); // the cause is fixed

        String filter = "\"status\":\"DEAD\",\"lastErrorContains\":\"not registered yet\",\"srvyDrawupNoPrefix\":\"" + run + "-\"";
        Reply dry = bulk("{" + filter + "}");
        assertThat(dry.status()).as(dry.body()).isEqualTo(200);
        assertThat(dry.json().get("dryRun").asBoolean()).isTrue();
        assertThat(dry.json().get("matching").asLong()).isEqualTo(3);
        assertThat(dry.json().get("firstIds")).extracting(JsonNode::asText).containsExactlyElementsOf(matching);
        assertThat(matching).allSatisfy(id -> assertThat(rows.status(id)).isEqualTo("DEAD"));

        // the downstream's code of the last business error selects exactly, the reception time range filters
        String byCode = "\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + run + "-\",\"lastErrorCode\":";
        assertThat(bulk("{" + byCode + "\"PATIENT_NOT_FOUND\"}").json().get("firstIds")).extracting(JsonNode::asText)
                .containsExactlyElementsOf(matching);
        assertThat(bulk("{" + byCode + "\"PATIENT_BLOCKED\"}").json().get("firstIds")).extracting(JsonNode::asText)
                .containsExactly(other);
        assertThat(bulk("{" + byCode + "\"PATIENT_NOT\"}").json().get("matching").asLong()).isZero();
        assertThat(client.ops("/ops/inbox/" + other).json().get("lastErrorCode").asText()).isEqualTo("PATIENT_BLOCKED");
        assertThat(bulk("{" + filter + ",\"receivedFrom\":\"" + before + "\"}").json().get("matching").asLong()).isEqualTo(3);
        assertThat(bulk("{" + filter + ",\"receivedTo\":\"" + before + "\"}").json().get("matching").asLong()).isZero();
        assertThat(bulk("{" + filter + ",\"receivedFrom\":\"" + java.time.OffsetDateTime.now().plusSeconds(5) + "\"}")
                .json().get("matching").asLong()).isZero();

        // while this pod's room (what it can publish before the job would take the events as lost: 2 here) is
        // taken by another bulk requeue in progress, a bulk requeue is refused and changes nothing
        var inProgress = paced.reserve(2);
        assertThat(inProgress.getGranted()).isEqualTo(2);
        Reply busy = bulk("{" + filter + ",\"dryRun\":false,\"limit\":2}");
        assertThat(busy.status()).as(busy.body()).isEqualTo(409);
        assertThat(busy.json().get("pending").asInt()).isEqualTo(2);
        assertThat(matching).allSatisfy(id -> assertThat(rows.status(id)).isEqualTo("DEAD"));
        paced.release(inProgress);

        // room for one more event: one row is requeued, the rest stays for a later call (not a 409 forever)
        var held = paced.reserve(1);
        Reply partial = bulk("{" + filter + ",\"dryRun\":false,\"limit\":2}");
        paced.release(held);
        assertThat(partial.status()).as(partial.body()).isEqualTo(200);
        assertThat(partial.json().get("requeued").asInt()).isEqualTo(1);
        assertThat(partial.json().get("remaining").asLong()).isEqualTo(2);
        assertThat(partial.json().get("ids")).extracting(JsonNode::asText).containsExactly(matching.get(0));
        await().atMost(Duration.ofSeconds(10)).until(() -> paced.pending() == 0);

        // paced: queued events leave one per 500 ms (2/s here), never all at once
        long queuedAt = System.nanoTime();
        fakeEvents(2).forEach(event -> producer.sendBody("seda:inbox-requeue-publish?queue=#bulkRequeueEvents", event));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> paced.pending() == 0);
        assertThat(Duration.ofNanos(System.nanoTime() - queuedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(450));

        Reply real = bulk("{" + filter + ",\"dryRun\":false,\"limit\":1}");
        assertThat(real.status()).as(real.body()).isEqualTo(200);
        assertThat(real.json().get("requeued").asInt()).isEqualTo(1);
        assertThat(real.json().get("remaining").asLong()).isEqualTo(1);
        assertThat(real.json().get("ids")).extracting(JsonNode::asText).containsExactly(matching.get(1));
        rows.awaitStatus(matching.get(0), "COMPLETED");
        rows.awaitStatus(matching.get(1), "COMPLETED");
        assertThat(rows.status(matching.get(2))).isEqualTo("DEAD");
        assertThat(rows.status(other)).isEqualTo("DEAD");
        assertThat(client.ops("/ops/inbox/" + matching.get(0)).json().get("audit")).singleElement().satisfies(a -> {
            assertThat(a.get("actor").asText()).isEqualTo("ops");
            assertThat(a.get("action").asText()).isEqualTo("REQUEUE");
            assertThat(a.get("fromStatus").asText()).isEqualTo("DEAD");
        });

        // a filter that is not one changes nothing
        for (String bad : List.of("{\"status\":\"COMPLETED\"}", "{" + filter + ",\"lastError\":\"x\"}",
                "{\"status\":\"DEAD\",\"lastErrorContains\":\"\"}", "{\"status\":\"DEAD\",\"lastErrorContains\":{}}",
                "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"  \"}", "{\"status\":\"DEAD\",\"limit\":1.5}",
                "{" + filter + ",\"limit\":0}", "{" + filter + ",\"receivedFrom\":\"yesterday\"}", "[]",
                "{" + filter + ",\"dryRun\":\"no\"}")) {
            Reply refused = bulk(bad);
            assertThat(refused.status()).as(bad + " -> " + refused.body()).isEqualTo(400);
        }
        assertThat(rows.status(matching.get(2))).isEqualTo("DEAD");
    }

    private static List<com.hospital.surveyinbox.inbox.InboxEvent> fakeEvents(int count) {
        return java.util.stream.IntStream.range(0, count)
                .mapToObj(i -> new com.hospital.surveyinbox.inbox.InboxEvent("999999999" + i, "NO-SUCH-ROW", "SEND")).toList();
    }

    private Reply bulk(String json) {
        return client.post("/ops/inbox/requeue", json.getBytes(java.nio.charset.StandardCharsets.UTF_8), "application/json",
                ServiceClient.OPS_AUTH, Map.of());
    }

    @Test
    void requeuesADeadRowThatCompletesOnceTheCauseIsFixedAndRefusesOtherStates() {
        String subject = uniqueSubject("REQ");
        String patno = "PREQ-" + subject;
        DownstreamSimulator.Fault missing = simulator().failWhen("GET /legacy/patients/" + patno, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient not registered yet\"}");
        String id = client.accept(send(subject, patno, ""));
        rows.awaitStatus(id, "DEAD", Duration.ofSeconds(60));
        simulator().remove(missing); // the cause is fixed

        Reply requeued = client.opsPost("/ops/inbox/" + id + "/requeue");

        assertThat(requeued.status()).as(requeued.body()).isEqualTo(200);
        rows.awaitStatus(id, "COMPLETED");
        assertThat(rows.attempts(id)).isEqualTo(1);
        JsonNode detail = client.ops("/ops/inbox/" + id).json();
        assertThat(detail.get("audit")).singleElement().satisfies(a -> {
            assertThat(a.get("actor").asText()).isEqualTo("ops");
            assertThat(a.get("action").asText()).isEqualTo("REQUEUE");
            assertThat(a.get("fromStatus").asText()).isEqualTo("DEAD");
            assertThat(a.get("toStatus").asText()).isEqualTo("RECEIVED");
            assertThat(a.get("at").asText()).isNotBlank();
        });
        assertThat(detail.get("attemptHistory")).hasSize(6);
        assertThat(simulator().replies(subject)).hasSize(1); // the DEAD reply, once

        Reply again = client.opsPost("/ops/inbox/" + id + "/requeue");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.json().get("status").asText()).isEqualTo("COMPLETED");
        assertThat(client.opsPost("/ops/inbox/987654321/requeue").status()).isEqualTo(404);
        assertThat(client.post("/ops/inbox/" + id + "/requeue", new byte[0], null,
                com.hospital.surveyinbox.support.ServiceClient.LEGACY_AUTH, java.util.Map.of()).status()).isEqualTo(403);
    }

    private long ticks() {
        return jdbc.queryForObject("SELECT count(*) FROM redelivery_run WHERE scheduler = 'redelivery-tests'", Long.class);
    }
}
