package com.hospital.surveyinbox.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.CollectedSpans;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A caller's {@code traceparent} asking for its trace to be recorded is honoured at a bounded rate: anyone who
 * reaches the port can send it (it is read before authentication), and honoured for every request, a flood of
 * unauthenticated requests made spans for the collector at the flood's rate. Within the bound a sender's sampled
 * trace is recorded whole, its row's processing and downstream calls included.
 */
@TestPropertySource(properties = {
        // events of its own: a row processed by another cached context's consumers has its spans exported there
        "adapter.kafka.topic=trace-sampling",
        "adapter.kafka.group-id=trace-sampling",
        "spring.quartz.scheduler-name=trace-sampling",
        // nothing started here is recorded: every span below is there on a caller's word
        "management.tracing.sampling.probability=0.0",
        "adapter.tracing.sender-sampled-per-second=1"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class TraceSamplingTest extends IntegrationTest {

    static final CollectedSpans EXPORTED = new CollectedSpans();

    @TestConfiguration
    static class SpanCollector {
        @Bean
        SpanExporter collectingSpanExporter() {
            return EXPORTED;
        }
    }

    @Autowired
    SdkTracerProvider tracerProvider;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    /**
     * One test, its steps in order: the bound is one filter's, shared by every request of the context (a sender's
     * sampled reception first, while the burst is there; then the flag in other forms while it has room; then a
     * flood).
     */
    @Test
    void callersAskingForTheirTraceAreRecordedUpToTheBoundOnly() {
        // within the bound: a sender's sampled reception is recorded, and its row's processing in the same trace
        // down to every downstream call, each told "sampled" (a span dropped on the way would pass on "not sampled")
        String subject = uniqueSubject("TRACED");
        String sent = traceId();
        String patno = "PT-" + subject;
        String id = client.receive(ServiceClient.message(subject, patno, ""), Map.of("traceparent", traceparent(sent, "01")))
                .json().get("inboxId").asText();
        rows.awaitStatus(id, "COMPLETED");
        assertThat(simulator().requests()).filteredOn(r -> r.line().contains(patno)).isNotEmpty()
                .allSatisfy(r -> assertThat(r.header("traceparent")).startsWith("00-" + sent + "-"));
        assertThat(simulator().requests()).filteredOn(r -> String.valueOf(r.header("traceparent")).contains(sent))
                .as("the registration's calls").hasSizeGreaterThanOrEqualTo(4)
                .allSatisfy(r -> assertThat(r.header("traceparent")).endsWith("-01"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);
            assertThat(EXPORTED.stream().filter(s -> s.getTraceId().equals(sent)).map(SpanData::getKind))
                    .as(() -> "row " + rows.row(id) + ", spans " + EXPORTED.stream().filter(s -> s.getTraceId().equals(sent))
                            .map(s -> s.getKind() + " " + s.getName()).toList())
                    .contains(SpanKind.SERVER, SpanKind.CONSUMER, SpanKind.CLIENT);
        });

        // the flag where a lenient reading would take it, while the bound still has room (the wait above refilled
        // it): in another version of the header, in two headers, in B3's headers (Boot's propagation reads them), as
        // a query parameter of a reception (Camel's platform-http makes it a header of the route, whose span is the
        // request's child: not read). None is recorded (nothing is started here at 0.0)
        List<String> odd = new ArrayList<>();
        String future = traceId();
        String twice = traceId();
        String b3 = traceId();
        String multi = traceId();
        odd.addAll(List.of(future, twice, b3, multi));
        assertThat(unauthenticated(Map.of("traceparent", List.of("01-" + future + "-00f067aa0ba902b7-01-future")))).isEqualTo(401);
        assertThat(unauthenticated(Map.of("traceparent", List.of(traceparent(twice, "01"), traceparent(twice, "01")))))
                .isEqualTo(401);
        assertThat(unauthenticated(Map.of("b3", List.of(b3 + "-00f067aa0ba902b7-1")))).isEqualTo(401);
        assertThat(unauthenticated(Map.of("X-B3-TraceId", List.of(multi), "X-B3-SpanId", List.of("00f067aa0ba902b7"),
                "X-B3-Sampled", List.of("1")))).isEqualTo(401);
        String queried = traceId();
        odd.add(queried);
        String query = client.post("/legacy/survey-send-info?traceparent=" + traceparent(queried, "01"),
                ServiceClient.message(uniqueSubject("TRACEQ"), "").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "application/json", ServiceClient.LEGACY_AUTH, Map.of()).json().get("inboxId").asText();
        rows.awaitStatus(query, "COMPLETED");
        assertThat(recorded(odd)).isEmpty();
        assertThat(dropped("malformed")).isEqualTo(2);
        assertThat(dropped("b3")).isEqualTo(2);

        // a flood of unauthenticated requests asking for it: recorded at the bound only
        List<String> flood = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 40; i++) {
            flood.add(traceId());
            assertThat(unauthenticated(Map.of("traceparent", List.of(traceparent(flood.get(i), "01"))))).isEqualTo(401);
        }
        double elapsedSeconds = (System.nanoTime() - start) / 1e9;
        // the burst (2) and one a second while they were sent
        Set<String> recorded = recorded(flood);
        assertThat(recorded).as("traces of the flood recorded on the callers' word").isNotEmpty()
                .hasSizeLessThanOrEqualTo(2 + (int) Math.ceil(elapsedSeconds));
        // the others counted, for the operator who wonders where a sender's traces went (a span still ending when
        // the flush ran is not among the recorded: at most as many as not recorded)
        assertThat(dropped("over-bound")).isBetween((long) flood.size() - 2 - (int) Math.ceil(elapsedSeconds),
                (long) flood.size() - recorded.size());
    }

    private long dropped(String reason) {
        return (long) meters.get("adapter.tracing.sender.context.dropped").tag("reason", reason).counter().count();
    }

    /** GET /ops/inbox/stats without credentials, with these headers: its status. */
    private int unauthenticated(Map<String, List<String>> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(client.uri("/ops/inbox/stats")).GET();
        headers.forEach((name, values) -> values.forEach(value -> request.header(name, value)));
        return client.send(request.build()).status();
    }

    /** The given traces' ids that spans were exported for, after every ended span was exported. */
    private Set<String> recorded(List<String> traces) {
        tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);
        return EXPORTED.stream().map(SpanData::getTraceId).filter(traces::contains).collect(Collectors.toSet());
    }

    private static String traceparent(String traceId, String flags) {
        return "00-" + traceId + "-" + HexFormat.of().formatHex(randomBytes(8)) + "-" + flags;
    }

    private static String traceId() {
        return HexFormat.of().formatHex(randomBytes(16));
    }

    private static byte[] randomBytes(int n) {
        byte[] bytes = new byte[n];
        ThreadLocalRandom.current().nextBytes(bytes);
        bytes[0] |= 1; // never the invalid all-zero id
        return bytes;
    }
}
