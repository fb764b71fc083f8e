package com.hospital.surveyinbox.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
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
        // nothing started here is recorded: every span below is there on a caller's word
        "management.tracing.sampling.probability=0.0",
        "adapter.tracing.sender-sampled-per-second=1"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class TraceSamplingTest extends IntegrationTest {

    static final List<SpanData> EXPORTED = new CopyOnWriteArrayList<>();

    @TestConfiguration
    static class SpanCollector {
        @Bean
        SpanExporter collectingSpanExporter() {
            return new SpanExporter() {
                @Override
                public CompletableResultCode export(Collection<SpanData> spans) {
                    EXPORTED.addAll(spans);
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode flush() {
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode shutdown() {
                    return CompletableResultCode.ofSuccess();
                }
            };
        }
    }

    @Autowired
    SdkTracerProvider tracerProvider;

    /**
     * One test, its steps in order: the bound is one filter's, shared by every request of the context (a sender's
     * sampled reception first, while the burst is there; then the floods).
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
                    .contains(SpanKind.SERVER, SpanKind.CONSUMER, SpanKind.CLIENT);
        });

        // a flood of unauthenticated requests asking for it: recorded at the bound only
        List<String> flood = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 40; i++) {
            flood.add(traceId());
            assertThat(unauthenticated(traceparent(flood.get(i), "01"))).isEqualTo(401);
        }
        double elapsedSeconds = (System.nanoTime() - start) / 1e9;
        // the burst (2) and one a second while they were sent
        assertThat(recorded(flood)).as("traces of the flood recorded on the callers' word").isNotEmpty()
                .hasSizeLessThanOrEqualTo(2 + (int) Math.ceil(elapsedSeconds));

        // the same flag in a form the standard does not write (another version, upper case, two headers): never
        // carried past the bound by a lenient reading, nothing recorded (nothing is started here at 0.0)
        List<String> odd = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String future = traceId();
            String upper = traceId();
            String twice = traceId();
            odd.addAll(List.of(future, upper, twice));
            assertThat(unauthenticated("01-" + future + "-00f067aa0ba902b7-01-future")).isEqualTo(401);
            assertThat(unauthenticated(traceparent(upper, "01").toUpperCase(java.util.Locale.ROOT))).isEqualTo(401);
            assertThat(unauthenticated(traceparent(twice, "01"), traceparent(twice, "01"))).isEqualTo(401);
        }
        assertThat(recorded(odd)).isEmpty();
    }

    /** GET /ops/inbox/stats without credentials, with these traceparent headers: its status. */
    private int unauthenticated(String... traceparents) {
        HttpRequest.Builder request = HttpRequest.newBuilder(client.uri("/ops/inbox/stats")).GET();
        for (String traceparent : traceparents) {
            request.header("traceparent", traceparent);
        }
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
