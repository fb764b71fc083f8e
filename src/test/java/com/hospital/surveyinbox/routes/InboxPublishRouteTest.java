package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-publish.camel.yaml} (shared setup: {@link RouteKit}). */
@org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
class InboxPublishRouteTest extends RouteKit {

    @Test
    void publishesARowAsItsEventKeyedBySubjectWithNoInboundHeader() throws Exception {
        String subject = uniqueSubject("ALONE-PUB");
        mock("mock:kafka").expectedMessageCount(1);

        Exchange done = template.request("direct:inbox-publish", e -> {
            e.getMessage().setBody(Map.of("inboxId", 42L, "srvyDrawupNo", subject, "msgType", "SUBMIT"));
            e.getMessage().setHeader("Authorization", "Basic c2VjcmV0");
        });

        mock("mock:kafka").assertIsSatisfied();
        Exchange sent = mock("mock:kafka").getReceivedExchanges().get(0);
        // here the producer is a mock, which tracing does not leave alone: its traceparent is the call's
        // and the database the row is in (a consumer of another deployment sharing the topic tells its events apart)
        assertThat(sent.getMessage().getHeaders()).containsOnlyKeys("kafka.KEY", "traceparent", "inboxDatabase")
                .containsEntry("kafka.KEY", subject)
                .containsEntry("inboxDatabase", jdbc.queryForObject("SELECT CAST(id AS TEXT) FROM inbox_database", String.class));
        JsonNode event = mapper.readTree(sent.getMessage().getBody(String.class));
        assertThat(event.get("inboxId").asText()).isEqualTo("42");
        assertThat(event.get("msgType").asText()).isEqualTo("SUBMIT");
        assertThat(done.getProperty("inboxPublished", Boolean.class)).isTrue();
    }

    /** The failure's line names the row and its trace (on the reception's wireTap thread no trace is current); it is counted. */
    @Test
    void aFailedPublishAnswersFalseAndNeverFailsTheCaller(org.springframework.boot.test.system.CapturedOutput output) {
        mock("mock:kafka").whenAnyExchangeReceived(e -> {
            throw new IllegalStateException("broker gone");
        });
        String traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        String failures = com.hospital.surveyinbox.inbox.InboxEventPublisher.PUBLISH_FAILURES;
        double before = meters.counter(failures).count();

        Exchange done = template.request("direct:inbox-publish", e -> e.getMessage().setBody(Map.of("inboxId", 43L,
                "srvyDrawupNo", uniqueSubject("ALONE-PUB"), "msgType", "SEND", "traceParent", traceParent)));

        assertThat(done.getException()).isNull();
        assertThat(done.getProperty("inboxPublished", Boolean.class)).isFalse();
        assertThat(output.getAll().lines().filter(l -> l.contains("Event of inbox 43 not published")))
                .singleElement().asString().contains("trace " + traceParent);
        // counted for SurveyInboxEventsNotPublished: receptions answer while Kafka is away, nothing else says so
        assertThat(meters.counter(failures).count()).isEqualTo(before + 1);
    }
}
