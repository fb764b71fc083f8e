package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

/**
 * The interceptors' configurations must be in routes/: renamed or dropped there, the calls of every route would go
 * without them, silently. The start fails instead, naming the configuration (InterceptedCallsTest starts the real
 * routes, which have both).
 */
class InterceptorsFirstTest {

    @Test
    void aStartWithoutTheInterceptorsConfigurationsFailsNamingThem() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            assertThatThrownBy(() -> {
                context.addRoutes(new InterceptorsFirst());
                context.start();
            }).hasStackTraceContaining("routeConfiguration inbox-downstream is not in routes/");
        }
    }
}
