package com.hospital.surveyinbox.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.KafkaContinuations;
import com.hospital.surveyinbox.support.IntegrationTest;
import java.util.concurrent.TimeUnit;
import org.apache.camel.CamelContext;
import org.apache.camel.component.kafka.KafkaComponent;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * A route continued after its Kafka publish runs on a thread without the trace of the route that ran there before:
 * Camel restores a traced route's {@code trace_id}/{@code span_id} on the thread that finishes it and leaves them.
 */
class KafkaContinuationsTest extends IntegrationTest {

    @Autowired
    CamelContext camel;

    @Autowired
    KafkaContinuations continuations;

    @Test
    void theKafkaProducerGoesOnOnTheseThreads() {
        assertThat(camel.getComponent("kafka", KafkaComponent.class).getConfiguration().getWorkerPool()).isSameAs(continuations);
    }

    @Test
    void aTaskFindsNoTraceOfTheTaskBeforeOnItsThread() throws Exception {
        KafkaContinuations one = new KafkaContinuations();
        one.setCorePoolSize(1);
        one.setMaximumPoolSize(1);
        try {
            String[] thread = new String[2];
            one.submit(() -> {
                thread[0] = Thread.currentThread().getName();
                MDC.put("trace_id", "0af7651916cd43dd8448eb211c80319c"); // as Camel leaves it
                MDC.put("span_id", "b7ad6b7169203331");
            }).get(10, TimeUnit.SECONDS);
            String found = one.submit(() -> {
                thread[1] = Thread.currentThread().getName();
                return MDC.get("trace_id") + "/" + MDC.get("span_id");
            }).get(10, TimeUnit.SECONDS);
            assertThat(thread[1]).as("the same thread").isEqualTo(thread[0]);
            assertThat(found).isEqualTo("null/null");
        } finally {
            one.destroy();
        }
    }
}
