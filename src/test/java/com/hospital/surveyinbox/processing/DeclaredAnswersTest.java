package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

/**
 * A route's declared answer that is wrong fails the start, naming the route and step: an unknown answerIs failed every
 * call it declared (each row charged to DEAD), and a misspelt name or a declaration away from its call turned the
 * check off silently. The real routes pass it at every start (RoutesLoadTest, RouteEditTest with the recipes).
 */
class DeclaredAnswersTest {

    @Test
    void aWellPlacedDeclarationPasses() throws Exception {
        assertThatCode(() -> check(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:ok").routeId("ok").step("a-call").setProperty("createdAnswerNames", constant("dispatchId"))
                        .setProperty("answerIs", constant("json")).toD("http://localhost:1/x").end()
                        .choice().when(simple("${body} == null"))
                        .setProperty("answerNames", constant("guestId")).to("http://localhost:1/y").end();
            }
        })).doesNotThrowAnyException();
    }

    @Test
    void anUnknownShapeFailsTheStart() {
        assertThatThrownBy(() -> check(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:a").routeId("shape").step("a-call").setProperty("answerIs", constant("list")).id("declare")
                        .toD("http://localhost:1/x").end();
            }
        })).hasMessage("route shape, setProperty declare: answerIs must be one of " + DownstreamCalls.SHAPES + ", not 'list'");
    }

    @Test
    void aMisspeltDeclarationFailsTheStart() {
        assertThatThrownBy(() -> check(new RouteBuilder() {
            @Override
            public void configure() {
                // inside a choice, too
                from("direct:a").routeId("typo").choice().when(simple("${body} == null"))
                        .setProperty("answerName", constant("guestId")).to("http://localhost:1/x").end();
            }
        })).hasMessageContaining("no declared answer is named 'answerName'");
    }

    @Test
    void aDeclarationAwayFromItsCallFailsTheStart() {
        assertThatThrownBy(() -> check(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:a").routeId("away").setProperty("answerIs", constant("object")).log("between")
                        .toD("http://localhost:1/x");
            }
        })).hasMessageContaining("answerIs must come right before the HTTP call it declares");
        assertThatThrownBy(() -> check(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:a").routeId("computed").setProperty("answerIs", simple("${header.shape}")).toD("http://localhost:1/x");
            }
        })).hasMessageContaining("answerIs must be a constant");
    }

    /** The check runs at every start (InterceptorsFirst's startup listener): a wrong declaration fails it. */
    @Test
    void theStartChecksTheDeclarations() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            assertThatThrownBy(() -> com.hospital.surveyinbox.support.InterceptorContexts.start(context, new RouteBuilder() {
                @Override
                public void configure() {
                    from("direct:a").routeId("started").setProperty("answerIs", constant("list")).toD("http://localhost:1/x");
                }
            })).hasStackTraceContaining("route started, setProperty answerIs: answerIs must be one of");
        }
    }

    private static void check(RouteBuilder routes) throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            context.addRoutes(routes);
            DeclaredAnswers.check(context);
        }
    }
}
