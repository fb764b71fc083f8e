package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.AdapterProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The HTTP client keeps a pooled connection per downstream host for every call that can run at once: workers raised
 * to drain a backlog waited for one of a fixed 50 up to the connect timeout, and the wait failed as a system error
 * counted against the downstream's circuit.
 */
class HttpPoolSizeTest {

    private final ApplicationContextRunner runner = com.hospital.surveyinbox.support.BoundSettings.runner();

    @Test
    void everyCallThatCanRunAtOnceHasAConnection() {
        runner.withPropertyValues("adapter.kafka.workers=64", "adapter.inbox.synchronous-concurrency=16").run(context ->
                assertThat(CamelHttpTuning.connectionsPerHost(context.getBean(AdapterProperties.class))).isGreaterThanOrEqualTo(64 + 16 + 1));
        runner.withPropertyValues("adapter.kafka.workers=4", "adapter.inbox.synchronous-concurrency=2").run(context ->
                assertThat(CamelHttpTuning.connectionsPerHost(context.getBean(AdapterProperties.class))).isEqualTo(50));
    }
}
