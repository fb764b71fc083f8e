package com.hospital.surveyinbox.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import com.hospital.surveyinbox.support.ServiceClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** Metrics on /actuator/prometheus, health details, and logs that never carry patient data. */
@ExtendWith(OutputCaptureExtension.class)
class ObservabilityTest extends IntegrationTest {

    /** The sum of a metric's series whose labels contain {@code labels} ("" : every series, labelled or not); NaN when none. */
    private double metric(String name, String labels) {
        String body = client.management("/actuator/prometheus").body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{([^}]*)\\})? ([0-9.eE+-]+)$").matcher(body);
        double sum = 0;
        boolean found = false;
        while (m.find()) {
            if ((m.group(1) == null ? "" : m.group(1)).contains(labels)) {
                sum += Double.parseDouble(m.group(2));
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    @Test
    void theStatusGaugesMoveWhileMessagesFlowAndEveryMetricFamilyIsExported() {
        double before = metric("adapter_inbox_rows", "status=\"COMPLETED\"");
        assertThat(before).isNotNaN();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(client.accept(ServiceClient.message(uniqueSubject("MET"), "\"srvyNo\":\"MET-S\"")));
        }
        Rows rows = new Rows(jdbc);
        ids.forEach(id -> rows.awaitStatus(id, "COMPLETED"));
        await().atMost(Duration.ofSeconds(20)).until(() -> metric("adapter_inbox_rows", "status=\"COMPLETED\"") >= before + 5);

        String body = client.management("/actuator/prometheus").body();
        assertThat(body).contains(
                "adapter_inbox_oldest_pending_age_seconds",
                "adapter_reception_accept_seconds",
                "adapter_downstream_calls_seconds_count{call=\"inbox-register-legacy-patient\"",
                "adapter_inbox_outcomes_total{outcome=\"completed\"",
                "adapter_inbox_claims_total{result=\"claimed\"",
                "adapter_consent_cache_total",
                "adapter_circuit_state{downstream=\"legacy\"",
                "camel_exchanges_total");
    }

    /**
     * Receptions that wait for the database (here a lock on the inbox table, as a slow database would) hold the public
     * port's request threads, and the gauges count them: the saturation that turns connections away at the ingress
     * (502s that never reach the reception's histogram) shows on the pod before it happens. Nothing is lost: once the
     * lock goes, the waiting receptions are stored (or answered 503 past the store timeout).
     */
    @Test
    void requestThreadsHeldByWaitingReceptionsAreCountedBusy(@org.springframework.beans.factory.annotation.Autowired
                                                            io.micrometer.core.instrument.MeterRegistry meters) throws Exception {
        assertThat(metric("adapter_http_threads_max", "")).isEqualTo(200);
        assertThat(metric("adapter_http_threads_queued", "")).isZero();
        io.micrometer.core.instrument.Gauge busy = meters.get("adapter.http.threads.busy").gauge();
        java.util.concurrent.atomic.AtomicReference<Double> most = new java.util.concurrent.atomic.AtomicReference<>(0.0);
        int held = 6;
        java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(held);
        List<java.util.concurrent.Future<ServiceClient.Reply>> replies = new ArrayList<>();
        try (java.sql.Connection lock = jdbc.getDataSource().getConnection()) {
            lock.setAutoCommit(false);
            try (java.sql.Statement statement = lock.createStatement()) {
                statement.execute("LOCK TABLE inbox_message IN SHARE MODE"); // inserts wait, reads go on
            }
            try {
                for (int i = 0; i < held; i++) {
                    String message = ServiceClient.message(uniqueSubject("THREADS"), "");
                    replies.add(senders.submit(() -> client.receive(message)));
                }
                // read in the pod, often: the inserts wait for the lock at most the reception pool's lock timeout (3 s)
                await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20))
                        .until(() -> most.accumulateAndGet(busy.value(), Math::max) >= held);
            } finally {
                lock.rollback();
            }
        } finally {
            senders.shutdown();
        }
        Rows rows = new Rows(jdbc);
        for (java.util.concurrent.Future<ServiceClient.Reply> reply : replies) {
            ServiceClient.Reply answer = reply.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(answer.status()).isIn(200, 503);
            if (answer.status() == 200) { // finished before the next test, which shares the context
                rows.awaitStatus(answer.json().get("inboxId").asText(), "COMPLETED");
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> metric("adapter_http_threads_busy", "") < held);
    }

    /**
     * A new pod's DEAD count starts at zero, not absent: a series that first appears at 1 shows no increase, and
     * the DEAD alert (increase of adapter_inbox_outcomes_total{outcome="dead"}) would miss that pod's first row.
     */
    @Test
    void aNewPodsDeadCountExistsAtZero(@org.springframework.beans.factory.annotation.Autowired
                                       com.hospital.surveyinbox.config.AdapterProperties properties) {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry fresh = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        new com.hospital.surveyinbox.processing.ProcessingRecord(properties, fresh, new com.fasterxml.jackson.databind.ObjectMapper());
        assertThat(fresh.find("adapter.inbox.outcomes").tag("outcome", "dead").counter())
                .isNotNull().satisfies(c -> assertThat(c.count()).isZero());
        assertThat(fresh.find("adapter.inbox.outcomes").tag("outcome", "stale").counter())
                .isNotNull().satisfies(c -> assertThat(c.count()).isZero());
        assertThat(fresh.find("adapter.inbox.claims").tag("result", "row-missing").counter())
                .isNotNull().satisfies(c -> assertThat(c.count()).isZero());
        new com.hospital.surveyinbox.reception.ReceptionReplies(new com.fasterxml.jackson.databind.ObjectMapper(), fresh);
        // and the answers the SLO burn alerts count (a quiet hour of 500s on new pods went unseen)
        for (String[] answer : new String[][] {{"503", "N"}, {"500", "N"}, {"200", "Y"}}) {
            assertThat(fresh.find("adapter.reception.accept").tag("status", answer[0]).tag("resultCode", answer[1]).timer())
                    .as(answer[0] + " " + answer[1]).isNotNull().satisfies(t -> assertThat(t.count()).isZero());
        }
    }

    /** Without management.otlp.tracing.endpoint (the default) nothing is exported: no collector is needed. */
    @Test
    void noSpanExporterWithoutAnOtlpEndpoint(@org.springframework.beans.factory.annotation.Autowired
                                             org.springframework.context.ApplicationContext context) {
        assertThat(context.getEnvironment().getProperty("management.otlp.tracing.endpoint")).isNull();
        assertThat(context.getBeansOfType(io.opentelemetry.sdk.trace.export.SpanExporter.class)).isEmpty();
        // spans are still made (and trace ids propagated and logged): sampling as configured
        assertThat(context.getEnvironment().getProperty("management.tracing.sampling.probability")).isEqualTo("0.1");
    }

    /**
     * camel.observation.exclude-patterns, decided once per route and static endpoint (CamelTracing.ExcludingTracer):
     * the receptions (Boot's server span is theirs) and the event publish with its Kafka producer make no span; the
     * consumer (its URI has parameters), the registration routes and their HTTP calls do. Dynamic endpoints are
     * decided on each call and never remembered.
     */
    @Test
    void excludedRoutesAndCallsMakeNoSpanAndTheRestDo(@org.springframework.beans.factory.annotation.Autowired
                                                      com.hospital.surveyinbox.config.CamelTracing.ExcludingTracer tracer,
                                                      @org.springframework.beans.factory.annotation.Autowired
                                                      org.apache.camel.CamelContext camel,
                                                      @org.springframework.beans.factory.annotation.Value("${adapter.kafka.topic}") String topic)
            throws ReflectiveOperationException {
        java.util.function.Predicate<String> traced = routeId -> camel.getRoute(routeId).getRoutePolicyList().stream()
                .filter(p -> p instanceof com.hospital.surveyinbox.config.CamelTracing.ExcludingTracer.DecidedPolicy)
                .map(p -> ((com.hospital.surveyinbox.config.CamelTracing.ExcludingTracer.DecidedPolicy) p).on())
                .findFirst().orElseThrow(() -> new AssertionError(routeId + " has no tracing policy"));
        assertThat(List.of("inbox-receive", "inbox-publish")).noneMatch(traced);
        assertThat(List.of("inbox-process", "inbox-register", "inbox-register-send", "inbox-reply")).allMatch(traced);
        assertThat(camel.getRoute("inbox-process").getEndpoint().getEndpointUri()).contains("?");

        // the calls, on the live endpoints the routes send to
        assertThat(tracer.decorator(camel.getEndpoint("kafka:" + topic)).newSpan()).isFalse(); // the publish's producer
        assertThat(tracer.decorator(camel.getEndpoint("direct:inbox-publish")).newSpan()).isFalse();
        assertThat(tracer.decorator(camel.getEndpoint("direct:inbox-register")).newSpan()).isTrue();
        assertThat(tracer.decorator(camel.getEndpoint("http://127.0.0.1:1/patients")).newSpan()).isTrue();
        assertThat(tracer.excluded("platform-http:/legacy/survey-send-info?httpMethodRestrict=POST")).isTrue();
        assertThat(tracer.excluded(null)).isFalse();

        // a static endpoint's decision is remembered; endpoints made after start (dynamic) are decided each time
        tracer.decorator(camel.getRoute("inbox-process").getEndpoint());
        int remembered = tracer.remembered();
        assertThat(remembered).isPositive();
        for (int i = 0; i < 50; i++) {
            assertThat(tracer.decorator(camel.getEndpoint("http://127.0.0.1:1/patients/P" + i)).newSpan()).isTrue();
        }
        assertThat(tracer.remembered()).isEqualTo(remembered);

        // the patterns cannot be changed behind the configuration's back (Camel's setter is ignored)
        String configured = tracer.getExcludePatterns();
        tracer.setExcludePatterns("direct:*");
        assertThat(tracer.getExcludePatterns()).isEqualTo(configured);
        assertThat(tracer.decorator(camel.getEndpoint("direct:inbox-register")).newSpan()).isTrue();
        java.lang.reflect.Field camelsOwn = org.apache.camel.tracing.Tracer.class.getDeclaredField("excludePatterns");
        camelsOwn.setAccessible(true);
        assertThat(camelsOwn.get(tracer)).as("Camel's per-exchange matching stays off").isNull();
    }

    @Test
    void theInfoEndpointNamesTheBuildAndTheCommitAPodRuns() {
        JsonNode info = client.management("/actuator/info", ServiceClient.OPS_AUTH).json();

        assertThat(info.at("/build/artifact").asText()).isEqualTo("survey-inbox-adapter");
        assertThat(info.at("/build/version").asText()).isNotBlank();
        assertThat(info.at("/build/time").asText()).isNotBlank();
        // the commit comes from the checkout's .git (a source tree without one builds, and says no commit)
        if (java.nio.file.Files.exists(java.nio.file.Path.of(".git"))) {
            assertThat(info.at("/git/commit/id").asText()).matches("[0-9a-f]{7,40}");
        } else {
            assertThat(info.at("/git/commit/id").isMissingNode()).isTrue();
        }
    }

    @Test
    void showsHealthDetailsOnlyToAnOperator() {
        for (String path : List.of("/actuator/health", "/actuator/health/readiness", "/actuator/health/liveness")) {
            ServiceClient.Reply anonymous = client.management(path);
            assertThat(anonymous.status()).as(path).isEqualTo(200);
            assertThat(anonymous.json().get("status").asText()).as(path).isEqualTo("UP");
            assertThat(anonymous.json().has("components")).as(path).isFalse();
            assertThat(anonymous.body()).as(path).doesNotContain("clusterId", "brokers", "jdbc");
            ServiceClient.Reply legacy = client.management(path, ServiceClient.LEGACY_AUTH);
            assertThat(legacy.json().has("components")).as(path + " with the legacy credential").isFalse();
        }
        assertThat(client.management("/actuator/health", ServiceClient.OPS_AUTH).json().has("components")).isTrue();
    }

    @Test
    void showsKafkaAndRedisInHealthDetailsWithoutGatingReadinessOnThem() {
        ServiceClient.Reply health = client.management("/actuator/health", ServiceClient.OPS_AUTH);
        assertThat(health.json().at("/components/kafka/status").asText()).isEqualTo("UP");
        assertThat(health.json().at("/components/kafka/details/brokers").asInt()).isEqualTo(1);
        assertThat(health.json().at("/components/redis/status").asText()).isEqualTo("UP");
        ServiceClient.Reply readiness = client.management("/actuator/health/readiness", ServiceClient.OPS_AUTH);
        assertThat(readiness.json().at("/components").fieldNames()).toIterable()
                .containsExactlyInAnyOrder("readinessState", "databaseReached");
        ServiceClient.Reply liveness = client.management("/actuator/health/liveness", ServiceClient.OPS_AUTH);
        assertThat(liveness.json().at("/components").fieldNames()).toIterable()
                .containsExactlyInAnyOrder("livenessState", "camelLivenessState");
    }

    @Test
    void neverLogsPatientDataOfRejectedOrFailingMessages(CapturedOutput output) {
        String patno = "PATNO-MARK-5151";
        String name = "NAME-MARK-6262";
        String phone = "010-7373-8484";
        String subject = uniqueSubject("SCRUB");
        // rejections
        client.receive("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"" + patno + "\",\"patNm\":\"" + name + "\"}");
        client.receive("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"" + patno + "\",\"formCd\":\"F\",\"msgType\":\"" + name + "\"}");
        client.receive("{\"patno\":\"" + patno + "\",\"mobileNo\":\"" + phone + "\" broken");
        client.post("/legacy/survey-send-info", ("{\"patno\":\"" + patno + "\"}").getBytes(), "text/plain",
                ServiceClient.LEGACY_AUTH, Map.of());
        // failures: business (patient unknown), system (5xx on a path holding the patient number), timeout
        Rows rows = new Rows(jdbc);
        String business = client.accept("{\"srvyDrawupNo\":\"" + uniqueSubject("SCRUB") + "\",\"patno\":\"NOPAT-" + patno
                + "\",\"formCd\":\"F100\",\"patNm\":\"" + name + "\",\"mobileNo\":\"" + phone + "\"}");
        simulator().failWhen("GET /legacy/patients/" + patno, 503, "{\"message\":\"" + patno + " " + name + "\"}");
        String system = client.accept("{\"srvyDrawupNo\":\"" + uniqueSubject("SCRUB") + "\",\"patno\":\"" + patno
                + "\",\"formCd\":\"F100\",\"patNm\":\"" + name + "\",\"mobileNo\":\"" + phone + "\"}");
        String patnoSlow = patno + "-SLOW";
        simulator().add(new DownstreamSimulator.Fault(s -> s.startsWith("GET /legacy/patients/" + patnoSlow), 200, "{}", 3_000));
        String slow = client.accept("{\"srvyDrawupNo\":\"" + uniqueSubject("SCRUB") + "\",\"patno\":\"" + patnoSlow
                + "\",\"formCd\":\"F100\",\"patNm\":\"" + name + "\",\"mobileNo\":\"" + phone + "\"}");
        // a business error whose message quotes the patient (CONTRACT §6): the log gets its code, the row a masked text
        String patnoQuoted = "Q-" + patno;
        simulator().failWhen("GET /legacy/patients/" + patnoQuoted, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient " + patnoQuoted + " (" + name + ", " + phone + ") not found\"}");
        String quoted = client.accept("{\"srvyDrawupNo\":\"" + uniqueSubject("SCRUB") + "\",\"patno\":\"" + patnoQuoted
                + "\",\"formCd\":\"F100\",\"patNm\":\"" + name + "\",\"mobileNo\":\"" + phone + "\"}");
        rows.awaitAttempt(business, 1, "FAILED");
        rows.awaitAttempt(system, 1, "FAILED");
        rows.awaitAttempt(slow, 1, "FAILED");
        rows.awaitAttempt(quoted, 1, "FAILED");
        assertThat(rows.row(quoted).get("last_error")).isEqualTo("patient *** (***, ***) not found");
        assertThat(client.ops("/ops/inbox/" + quoted).json().get("lastError").asText()).isEqualTo("patient *** (***, ***) not found");
        assertThat(client.ops("/ops/inbox/" + quoted).body()).doesNotContain(patno, name, phone);

        String logs = output.getAll();
        assertThat(logs).contains("inboxId=" + system); // the processing lines do name the row
        assertThat(logs).doesNotContain(patno, name, phone, "PATNO-MARK", "NAME-MARK", "7373-8484");
    }
}
