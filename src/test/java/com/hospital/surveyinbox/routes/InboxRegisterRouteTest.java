package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.support.ServiceClient;
import java.util.Map;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-register.camel.yaml} (and the {@code inbox-downstream} configuration its calls run in) (shared setup: {@link RouteKit}). */
class InboxRegisterRouteTest extends RouteKit {

    @Test
    void registerSendsTheBundleWithItsIdempotencyKeyAndOnlyTheHeadersItMeans() throws Exception {
        String subject = uniqueSubject("ALONE-REG");
        mock("mock:bundle").expectedHeaderReceived("Idempotency-Key", subject);

        Outcome outcome = register(subject, "{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P-" + subject + "\",\"formCd\":\"F1\"}",
                Map.of("Authorization", "Basic c2VjcmV0", "kafka.KEY", subject));

        assertThat(outcome.success()).isTrue();
        mock("mock:bundle").assertIsSatisfied();
        Map<String, Object> sent = mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getHeaders();
        // the route adds only its own header (Accept and Content-Type come from inbox-downstream's interceptor),
        // and tracing its traceparent; nothing inbound (Authorization, kafka.KEY) rides along
        assertThat(sent.keySet()).filteredOn(k -> !k.startsWith("Camel"))
                .containsExactlyInAnyOrder("Idempotency-Key", "traceparent");
        JsonNode bundle = mapper.readTree(mock("mock:bundle").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(bundle.get("guestId").asText()).startsWith("G");
    }

    @Test
    void registerClassifiesA4xxWithAMessageAsBusinessAndA5xxAsSystem() {
        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://survey", 422, "Unprocessable", null, Map.of(),
                    "{\"code\":\"FORM_NOT_REGISTERED\",\"message\":\"form F9 is not registered\"}");
        });
        String subject = uniqueSubject("ALONE-422");
        Outcome business = register(subject, ServiceClient.message(subject, "P-" + subject, ""), Map.of());
        assertThat(business.success()).isFalse();
        assertThat(business.failureReason()).isEqualTo("form F9 is not registered");

        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://survey", 503, "Unavailable", null, Map.of(), "{}");
        });
        String other = uniqueSubject("ALONE-503");
        Outcome system = register(other, ServiceClient.message(other, "P-" + other, ""), Map.of());
        assertThat(system.failureReason()).isEqualTo(Outcome.SYSTEM_ERROR);
    }
}
