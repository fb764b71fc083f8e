package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.camel.Exchange;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-reply.camel.yaml} (shared setup: {@link RouteKit}). */
class InboxReplyRouteTest extends RouteKit {

    @Test
    void replyRecordsARefusalAsFailedAndDeliversOnTheNextTry() throws Exception {
        String subject = uniqueSubject("ALONE-RPL");
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'PENDING', reply_reason_code = 'NOTIFY_SKIPPED', "
                + "reply_reason = 'no notification' WHERE id = ?", id);
        // a status outside the step's okStatusCodeRange (2xx) throws, as camel-http does
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://legacy/survey-send-results", 503, "Unavailable", null, Map.of(), "");
        });

        template.sendBody("direct:inbox-reply", Map.of("id", id));
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED")
                .containsEntry("reply_last_error", "legacy answered HTTP 503");
        // the legacy circuit open: the call is refused before it is made (inbox-downstream's interceptor throws)
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            throw new com.hospital.surveyinbox.processing.CircuitOpenException("legacy");
        });
        template.sendBody("direct:inbox-reply", Map.of("id", id));
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED")
                .containsEntry("reply_last_error", "waiting: legacy unavailable (circuit open)");

        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200));
        template.sendBody("direct:inbox-reply", Map.of("id", id));
        template.sendBody("direct:inbox-reply", Map.of("id", id)); // delivered once: a SENT reply is never taken again
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENT");
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).isEqualTo(3);
    }
}
