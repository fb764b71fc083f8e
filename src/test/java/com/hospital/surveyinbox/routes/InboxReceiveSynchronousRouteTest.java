package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.camel.Exchange;
import org.apache.camel.builder.AdviceWith;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * The route kit for {@code routes/inbox-receive.camel.yaml}'s synchronous path (the rollback toggle: a context of
 * its own). A failed registration comes back from {@code inbox-register} marked "failure handled"; a later failure of
 * the reception (here a step an engineer added after the registration) reached none of the route's
 * {@code onException} clauses: a 500 with an empty body and no {@code X-Result-Code}. It is the contract's answer.
 */
@TestPropertySource(properties = "adapter.inbox.enabled=false")
class InboxReceiveSynchronousRouteTest extends RouteKit {

    @Test
    void aFailureAfterAFailedRegistrationIsStillAnsweredAsTheContractSays() throws Exception {
        String subject = uniqueSubject("ALONE-SYNC");
        // the added step fails for this test's message only (the advice stays in the class's context)
        AdviceWith.adviceWith(camel, "inbox-receive", a -> a.weaveById("inbox-receive-if-registered").after()
                .process(e -> {
                    if (subject.equals(e.getVariable("received", com.hospital.surveyinbox.inbox.ReceivedMessage.class).srvyDrawupNo())) {
                        throw new IllegalStateException("a step added after the registration failed");
                    }
                }));
        mock("mock:bundle").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://survey", 422, "Unprocessable", null, Map.of(),
                    "{\"code\":\"FORM_NOT_REGISTERED\",\"message\":\"form F100 is not registered\"}");
        });

        Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                .setBody(ServiceClient.message(subject, "P-" + subject, "").getBytes(StandardCharsets.UTF_8)));

        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(500);
        assertThat(answer.getMessage().getHeader("X-Result-Code")).isEqualTo("N");
        assertThat(mapper.readTree(answer.getMessage().getBody(String.class)).get("resultCode").asText()).isEqualTo("N");
    }

    /**
     * The record of a synchronous registration commits and its answer is lost (the connection dropped just after the
     * COMMIT): the statement is tried again (inbox-receive-record-errors) and finds its own row, fenced by the
     * registration's holder. Without an Idempotency-Key nothing conflicted: a second COMPLETED row for one
     * registration, in the counts and the chart, and the answer carried the second row's id.
     */
    @Test
    void aRecordWhoseCommitAnswerWasLostIsRecordedOnce() throws Exception {
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger(1);
        javax.sql.DataSource losing = answerLostAfterCommit(jdbc.getDataSource(), "'COMPLETED', 1, ", lost);
        // the registration routes start clean (inbox-clean-start): the header is set where the record runs
        AdviceWith.adviceWith(camel, "inbox-receive-record", a -> a.weaveById("inbox-receive-record-synchronous").before()
                .setHeader("CamelSqlDataSource", a.constant(losing)));
        String subject = uniqueSubject("ALONE-SYNCREC");

        Exchange answer = template.request("direct:receive-alone", e -> e.getMessage()
                .setBody(ServiceClient.message(subject, "P-" + subject, "").getBytes(StandardCharsets.UTF_8)));

        assertThat(lost.get()).as("the record's first answer was lost").isZero();
        assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
        java.util.List<Long> rows = jdbc.queryForList("SELECT id FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject);
        assertThat(rows).as("one record of one registration").hasSize(1);
        assertThat(mapper.readTree(answer.getMessage().getBody(String.class)).get("inboxId").asText()).isEqualTo(rows.get(0).toString());
    }

    /**
     * The claim of a synchronous registration commits its lease and its answer is lost: the sender is told 503
     * "nothing stored, retry", and the lease this registration may hold is given back. Kept, the retry was answered
     * "subject being registered" (503) until the lease expired, twice the longest registration (minutes).
     */
    @Test
    void aLeaseWhoseClaimGotNoAnswerIsGivenBack() throws Exception {
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger(1);
        javax.sql.DataSource losing = answerLostAfterCommit(jdbc.getDataSource(), "INSERT INTO synchronous_lease", lost);
        AdviceWith.adviceWith(camel, "inbox-receive", a -> a.weaveById("inbox-receive-claim-synchronous").before()
                .setHeader("CamelSqlDataSource", a.constant(losing)));
        String subject = uniqueSubject("ALONE-SYNCLEASE");
        byte[] message = ServiceClient.message(subject, "P-" + subject, "").getBytes(StandardCharsets.UTF_8);

        Exchange first = template.request("direct:receive-alone", e -> e.getMessage().setBody(message));

        assertThat(lost.get()).as("the claim's answer was lost").isZero();
        assertThat(first.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(503);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM synchronous_lease WHERE srvy_drawup_no = ?", Long.class, subject))
                .as("the lease the lost claim took").isZero();
        // registered now, not refused as "subject being registered"
        Exchange retry = template.request("direct:receive-alone", e -> e.getMessage().setBody(message));
        assertThat(retry.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
        assertThat(mock("mock:bundle").getReceivedCounter()).as("the retry registered the message").isEqualTo(1);
    }

    /**
     * A synchronous registration paused past its lease (a frozen pod) between the lease and its SUBMIT: the lease
     * expired and was taken over by the sender's retry on another pod, which registered the subject; or it expired and
     * nobody took it yet (an inbox worker may claim a stored row of the subject then). Resumed, it submits nothing (the
     * survey side does not key a submission: it was recorded twice), answers 503 and records nothing, and leaves the
     * other registration's lease alone. A lease still held (however little of it is left) is taken again for its own
     * length before the call, and the message is submitted.
     */
    @Test
    void aRegistrationWhoseLeaseWasTakenOverOrExpiredWhilePausedDoesNotSubmit() throws Exception {
        java.util.Map<String, Boolean> renewed = new java.util.concurrent.ConcurrentHashMap<>();
        AdviceWith.adviceWith(camel, "inbox-register", a -> a.weaveById("inbox-register-renew-claim").after().process(e -> {
            String subject = e.getProperty("row", com.hospital.surveyinbox.inbox.ClaimedRow.class).srvyDrawupNo();
            jdbc.queryForList("SELECT taken_at > now() - INTERVAL '5 seconds' AND expires_at > now() + INTERVAL '50 seconds'"
                    + " FROM synchronous_lease WHERE srvy_drawup_no = ?", Boolean.class, subject)
                    .forEach(taken -> renewed.put(subject, taken));
        }));

        String takenOver = uniqueSubject("ALONE-SYNCTAKEN");
        // while it is paused (here: just before its resend check): its lease expired and another registration took it
        Exchange resumed = pausedSubmit(takenOver, "holder = 'another-pod', taken_at = now(), expires_at = now() + INTERVAL '5 minutes'");

        assertThat(surveyCalls(takenOver, "submission")).as("the paused registration submitted").isZero();
        assertThat(resumed.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(503);
        assertThat(resumed.getMessage().getHeader("X-Result-Code")).isEqualTo("N");
        assertThat(resumed.getMessage().getBody(String.class)).contains("nothing registered, please retry");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, takenOver)).isZero();
        assertThat(jdbc.queryForObject("SELECT holder FROM synchronous_lease WHERE srvy_drawup_no = ?", String.class, takenOver))
                .isEqualTo("another-pod");

        String expired = uniqueSubject("ALONE-SYNCEXPIRED");
        Exchange late = pausedSubmit(expired, "taken_at = now() - INTERVAL '10 minutes', expires_at = now() - INTERVAL '1 second'");

        assertThat(surveyCalls(expired, "submission")).as("the registration whose lease expired submitted").isZero();
        assertThat(late.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(503);

        String held = uniqueSubject("ALONE-SYNCHELD");
        // a minute of it used, 20 s left: renewed for the same length (80 s) from now
        Exchange submitted = pausedSubmit(held, "taken_at = now() - INTERVAL '60 seconds', expires_at = now() + INTERVAL '20 seconds'");

        assertThat(submitted.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(200);
        assertThat(surveyCalls(held, "submission")).isOne();
        assertThat(renewed).as("the lease taken again before the call").containsEntry(held, true);
    }

    /** A SUBMIT on the synchronous path, its lease row changed by {@code leaseChange} before its resend check. */
    private Exchange pausedSubmit(String subject, String leaseChange) throws Exception {
        byte[] submit = ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"SUBMIT\"").getBytes(StandardCharsets.UTF_8);
        bundleOnTheSurveySide(subject, new String(submit, StandardCharsets.UTF_8));
        mock("mock:resend-check").whenAnyExchangeReceived(e -> jdbc.update(
                "UPDATE synchronous_lease SET " + leaseChange + " WHERE srvy_drawup_no = ?", subject));
        return template.request("direct:receive-alone", e -> e.getMessage().setBody(submit));
    }
}
