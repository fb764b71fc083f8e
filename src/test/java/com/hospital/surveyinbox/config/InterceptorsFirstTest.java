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

    /** A route of routes/ naming one of them would set its interceptor up a second time: the start fails, naming it. */
    @Test
    void aRouteThatNamesAnInterceptorsConfigurationFailsTheStart() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            assertThatThrownBy(() -> com.hospital.surveyinbox.support.InterceptorContexts.start(context,
                    new org.apache.camel.builder.RouteBuilder() {
                        @Override
                        public void configure() {
                            from("direct:a-route").routeId("a-route").routeConfigurationId("inbox-downstream").log("a route");
                        }
                    })).hasStackTraceContaining("route a-route names routeConfiguration inbox-downstream");
        }
    }
}
