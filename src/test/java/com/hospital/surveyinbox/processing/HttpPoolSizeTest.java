package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.config.AdapterProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.validation.ValidationAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * The HTTP client keeps a pooled connection per downstream host for every call that can run at once: workers raised
 * to drain a backlog waited for one of a fixed 50 up to the connect timeout, and the wait failed as a system error
 * counted against the downstream's circuit.
 */
class HttpPoolSizeTest {

    @Configuration
    @EnableConfigurationProperties(AdapterProperties.class)
    static class Bound {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
            .withUserConfiguration(Bound.class)
            .withPropertyValues("adapter.legacy.base-url=http://legacy", "adapter.account.base-url=http://account",
                    "adapter.survey.base-url=http://survey", "adapter.security.legacy.username=legacy",
                    "adapter.security.legacy.password=legacy-secret-1234", "adapter.security.ops.username=ops",
                    "adapter.security.ops.password=ops-secret-12345678");

    @Test
    void everyCallThatCanRunAtOnceHasAConnection() {
        runner.withPropertyValues("adapter.kafka.workers=64", "adapter.inbox.synchronous-concurrency=16").run(context ->
                assertThat(CamelHttpTuning.connectionsPerHost(context.getBean(AdapterProperties.class))).isGreaterThanOrEqualTo(64 + 16 + 1));
        runner.withPropertyValues("adapter.kafka.workers=4", "adapter.inbox.synchronous-concurrency=2").run(context ->
                assertThat(CamelHttpTuning.connectionsPerHost(context.getBean(AdapterProperties.class))).isEqualTo(50));
    }
}
