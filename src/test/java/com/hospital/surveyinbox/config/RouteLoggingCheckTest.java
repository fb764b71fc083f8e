package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.builder.RouteConfigurationBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/**
 * Route steps that would log a message's payload or all its headers: named, refused in the prod profile, a WARN
 * elsewhere. An engineer's debugging line ({@code log: "${body}"}, {@code to: log:debug}) edited into a route file
 * reached production unseen (the settings that log bodies were checked, the routes not). HardeningTest finds the
 * shipped routes clean.
 */
class RouteLoggingCheckTest {

    private static RouteBuilder debugging() {
        return new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:debugged").routeId("debugged")
                        .log("received ${body}")
                        .log("as text ${bodyAs(String)}")
                        .log("with ${in.headers}")
                        .to("log:debug")
                        .to("log:quiet?showBody=false")
                        .toD("http://legacy.invalid/patients/${header.patno}?logHttpActivity=true");
                from("direct:traced").routeId("traced").tracing().log("traced");
                // parts a route names are its author's choice
                from("direct:clean").routeId("clean").log("inbox ${body[inboxId]} ${body.fresh()} ${header.CamelHttpResponseCode}")
                        .to("log:clean?showBody=false");
            }
        };
    }

    @Test
    void namesEachStepThatWouldLogTheMessage() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            context.addRoutes(debugging());
            context.addRoutes(new RouteConfigurationBuilder() {
                @Override
                public void configuration() {
                    routeConfiguration("failures").onException(Exception.class).log("failed: ${exchange}");
                }
            });

            assertThat(RouteLoggingCheck.problems(context))
                    .anySatisfy(p -> assertThat(p).startsWith("route debugged, log").contains("received ${body}"))
                    .anySatisfy(p -> assertThat(p).startsWith("route debugged, log").contains("${bodyAs(String)}"))
                    .anySatisfy(p -> assertThat(p).startsWith("route debugged, log").contains("${in.headers}"))
                    .anySatisfy(p -> assertThat(p).contains("log:debug logs the message"))
                    .anySatisfy(p -> assertThat(p).contains("logHttpActivity=true"))
                    .anySatisfy(p -> assertThat(p).isEqualTo("route traced: trace is on (the tracer logs every message)"))
                    .anySatisfy(p -> assertThat(p).startsWith("routeConfiguration failures, log").contains("${exchange}"))
                    .noneSatisfy(p -> assertThat(p).contains("route clean"))
                    .noneSatisfy(p -> assertThat(p).contains("log:quiet"))
                    .hasSize(7);
        }
    }

    @Test
    void theProdProfileRefusesToStartAndOtherProfilesStartWarned() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            MockEnvironment prod = new MockEnvironment();
            prod.setActiveProfiles("Prod"); // in any letter case, as ProductionSafetyCheck reads it
            new RouteLoggingCheck(prod).beforeApplicationStart(context);
            context.addRoutes(debugging());
            assertThatThrownBy(context::start).hasStackTraceContaining("Refusing to start: route steps would log patient data")
                    .hasStackTraceContaining("route debugged, log");
        }
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            MockEnvironment dev = new MockEnvironment();
            dev.setActiveProfiles("dev");
            new RouteLoggingCheck(dev).beforeApplicationStart(context);
            context.addRoutes(debugging());
            context.start();
            assertThat(context.isStarted()).isTrue();
        }
    }
}
