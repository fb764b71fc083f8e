package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-receive.camel.yaml} (shared setup: {@link RouteKit}). */
class InboxReceiveRouteTest extends RouteKit {

    @Test
    void receiveStoresAValidMessageAnswersYAndPublishesItsEvent() throws Exception {
        String subject = uniqueSubject("ALONE-RCV");
        mock("mock:kafka").expectedHeaderReceived("kafka.KEY", subject);
        Exchange answer = template.request("direct:receive-alone", e -> {
            e.getMessage().setBody(ServiceClient.message(subject, "P1", "").getBytes(StandardCharsets.UTF_8));
            e.getMessage().setHeader("Authorization", "Basic c2VjcmV0");
        });

        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
        assertThat(answer.getMessage().getHeader("X-Result-Code")).isEqualTo("Y");
        assertThat(answer.getMessage().getHeader("Authorization")).isNull();
        String inboxId = mapper.readTree(answer.getMessage().getBody(String.class)).get("inboxId").asText();
        assertThat(rows.status(inboxId)).isEqualTo("RECEIVED");
        mock("mock:kafka").assertIsSatisfied(10_000);
        assertThat(mock("mock:kafka").getReceivedExchanges().get(0).getMessage().getHeader("Authorization")).isNull();
    }

    @Test
    void receiveAnswers400NamingTheFieldAndStoresNothing() throws Exception {
        String subject = uniqueSubject("ALONE-BAD");
        Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                .setBody(("{\"srvyDrawupNo\":\"" + subject + "\",\"formCd\":\"F1\"}").getBytes(StandardCharsets.UTF_8)));

        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(400);
        assertThat(answer.getMessage().getBody(String.class)).contains("patno");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isZero();
    }

    @Test
    @org.junit.jupiter.api.Timeout(60) // with a caller-runs pool the fourth reception would wait on the blocked publish
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void receptionsNeverWaitOnKafkaWhenThePublishPoolIsFull(org.springframework.boot.test.system.CapturedOutput output) throws Exception {
        java.util.concurrent.CountDownLatch kafkaBack = new java.util.concurrent.CountDownLatch(1);
        java.util.Set<Thread> publishedOn = java.util.concurrent.ConcurrentHashMap.newKeySet();
        mock("mock:kafka").whenAnyExchangeReceived(e -> { // a broker that does not answer
            publishedOn.add(Thread.currentThread());
            kafkaBack.await(30, TimeUnit.SECONDS);
        });
        double dropped = meters.find("adapter.inbox.publish.dropped").counter().count();
        String run = uniqueSubject("ALONE-FULL");
        List<String> ids = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                String subject = run + "-" + i;
                Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                        .setBody(ServiceClient.message(subject, "P1", "").getBytes(StandardCharsets.UTF_8)));
                assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
                ids.add(mapper.readTree(answer.getMessage().getBody(String.class)).get("inboxId").asText());
            }
            // all ten answered while the one publish that started waits on the broker; each row is committed and waits
            // as RECEIVED. One publishing, two queued: the other seven were dropped at once, never run on the caller
            assertThat(meters.find("adapter.inbox.publish.dropped").counter().count() - dropped).isGreaterThanOrEqualTo(7);
            // and said at WARN (the dropped events' rows wait lost-event-after: the only sign before the backlog alert)
            assertThat(output.getAll().lines()).anySatisfy(line -> assertThat(line).contains("WARN").contains("Publish pool full ("));
            await().atMost(java.time.Duration.ofSeconds(10)).until(() -> !publishedOn.isEmpty());
            assertThat(publishedOn).doesNotContain(Thread.currentThread()).hasSize(1);
            assertThat(ids).allSatisfy(id -> assertThat(rows.status(id)).isEqualTo("RECEIVED"));
        } finally {
            kafkaBack.countDown();
        }
    }
}
