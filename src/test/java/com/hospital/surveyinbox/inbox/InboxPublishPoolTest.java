package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * The reception's publish pool starts each event with an empty log context: Camel leaves a traced exchange's
 * {@code trace_id} on the thread that finishes it, and the next event published on that thread logged under the
 * previous message's trace.
 */
class InboxPublishPoolTest {

    @Test
    void eachTaskStartsWithAnEmptyLogContext() throws Exception {
        ExecutorService pool = new InboxPublishPoolConfiguration().inboxPublishPool(
                TestProperties.bind(Map.of("adapter.kafka.publish-threads", "1")), new SimpleMeterRegistry());
        try {
            // a task that ends with a trace on its thread, as a traced exchange finished there does
            pool.submit(() -> MDC.put("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736")).get(10, TimeUnit.SECONDS);
            Map<String, String> seen = pool.submit(() -> MDC.getCopyOfContextMap()).get(10, TimeUnit.SECONDS);
            assertThat(seen == null ? Map.of() : seen).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }
}
