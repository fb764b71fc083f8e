package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.util.Map;
import java.util.UUID;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-register.camel.yaml} (and the {@code inbox-downstream} configuration its calls run in) (shared setup: {@link RouteKit}). */
class InboxRegisterRouteTest extends RouteKit {

    @org.springframework.beans.factory.annotation.Autowired
    com.hospital.surveyinbox.processing.DownstreamCircuits circuits;

    private long guestCreations() {
        return simulator().requests().stream().filter(r -> r.line().startsWith("POST /account/guests")).count();
    }

    /**
     * The legacy patient lookup down while the consent lookups answer (each message a survey not in the cache): the
     * lookups' answers clear the legacy count, so only the patient call's different failing requests can open the
     * circuit. Its values are in the path (toD sends the base URL as the endpoint and the path apart): the requests
     * of different patients must count as different, or the circuit never opens.
     */
    @Test
    void aPatientLookupDownForDifferentPatientsOpensTheLegacyCircuit() {
        circuits.reset("legacy");
        String run = uniqueSubject("ALONE-PATDOWN");
        com.hospital.surveyinbox.support.DownstreamSimulator.Fault down =
                simulator().failWhen("GET /legacy/patients/P-" + run, 503, "{\"error\":\"maintenance\"}");
        try {
            for (int patient = 0; patient < 5; patient++) {
                assertThat(circuits.state("legacy")).as("patient " + patient).isEqualTo(com.hospital.surveyinbox.processing.DownstreamCircuits.State.CLOSED);
                String subject = run + "-" + patient;
                Outcome outcome = register(subject, ServiceClient.message(subject, "P-" + subject, "\"srvyNo\":\"SV-" + subject + "\""), Map.of());
                assertThat(outcome.failureReason()).as("patient " + patient).isEqualTo(Outcome.SYSTEM_ERROR);
            }
            assertThat(circuits.state("legacy")).isEqualTo(com.hospital.surveyinbox.processing.DownstreamCircuits.State.OPEN);
        } finally {
            simulator().remove(down);
            circuits.reset("legacy");
        }
    }

    /**
     * The account system's guest creation down while its search answers, messages one at a time (a quiet hour): each
     * message's search (a 404, an answer) cleared the account circuit's count before its creation failed, so the
     * circuit never opened and every message was charged its attempts to DEAD, a failure reply each. Now the
     * creation failing for failure-threshold (5) different patients opens it: the next message waits uncharged, no
     * call made. One patient's creation failing again and again (its row's retries) is one request and opens nothing.
     */
    @Test
    void aGuestCreationDownWhileTheSearchAnswersOpensTheAccountCircuit() {
        circuits.reset("account");
        com.hospital.surveyinbox.support.DownstreamSimulator.Fault down =
                simulator().failWhen("POST /account/guests", 503, "{\"error\":\"maintenance\"}");
        try {
            String again = uniqueSubject("ALONE-GUESTAGAIN");
            for (int retry = 0; retry < 8; retry++) {
                Outcome outcome = register(again, ServiceClient.message(again, "P-" + again, ""), Map.of());
                assertThat(outcome.deferred()).as("one patient's retries: " + outcome).isFalse();
                assertThat(outcome.failureReason()).isEqualTo(Outcome.SYSTEM_ERROR);
            }
            for (int patient = 0; patient < 4; patient++) {
                String subject = uniqueSubject("ALONE-GUESTDOWN");
                Outcome outcome = register(subject, ServiceClient.message(subject, "P-" + subject, ""), Map.of());
                assertThat(outcome.failureReason()).as("patient " + patient).isEqualTo(Outcome.SYSTEM_ERROR);
            }
            // the fifth different request (the first patient's counted once)
            assertThat(circuits.state("account")).isEqualTo(com.hospital.surveyinbox.processing.DownstreamCircuits.State.OPEN);
            long creations = guestCreations();
            String next = uniqueSubject("ALONE-GUESTDOWN");
            Outcome waiting = register(next, ServiceClient.message(next, "P-" + next, ""), Map.of());
            assertThat(waiting.deferred()).as(waiting.toString()).isTrue();
            assertThat(waiting.failureReason()).isEqualTo("waiting: account unavailable (circuit open)");
            assertThat(guestCreations()).as("no call made").isEqualTo(creations);
        } finally {
            simulator().remove(down);
            circuits.reset("account");
        }
    }

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

    /**
     * inbox-register-record-for-masking: a refusal before the patient step (here the consent lookup's) whose text
     * quotes the patient by the legacy record's name, the message carrying none, is masked with the record, which
     * the route reads once for it; without that read the text would be withheld.
     */
    @Test
    void aRefusalBeforeThePatientStepIsMaskedWithTheRecordReadForIt() {
        String subject = uniqueSubject("ALONE-MASK");
        String patno = "PM" + Math.abs(subject.hashCode());
        String name = "Patient-" + patno; // the simulator's record
        mock("mock:consent-lookup").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://legacy", 403, "Forbidden", null, Map.of(),
                    "{\"code\":\"CONSENTS_SEALED\",\"message\":\"consents of " + name + " are sealed\"}");
        });
        int before = simulator().requests().size();

        Outcome refused = register(subject, ServiceClient.message(subject, patno, "\"srvyNo\":\"CONSENT-" + subject + "\""), Map.of());

        assertThat(refused.success()).isFalse();
        assertThat(refused.failureReason()).isEqualTo("consents of *** are sealed");
        assertThat(simulator().requests().subList(before, simulator().requests().size()))
                .filteredOn(r -> r.line().startsWith("GET /legacy/patients/" + patno)).hasSize(1);
    }

    /**
     * The record read for masking is checked as the patient step checks its record: one naming another patient (a
     * caching proxy mixing two lookups) would mask the text with that patient's name and leave this patient's, stored
     * and shown to operators; it is refused and the text withheld.
     */
    @Test
    void aRecordForMaskingThatNamesAnotherPatientIsNotUsedAndTheTextIsWithheld() {
        String subject = uniqueSubject("ALONE-OTHER");
        String patno = "PO" + Math.abs(subject.hashCode());
        simulator().add(new com.hospital.surveyinbox.support.DownstreamSimulator.Fault(r -> r.equals("GET /legacy/patients/" + patno), 200,
                "{\"patno\":\"SOMEONE-ELSE\",\"patNm\":\"Wrong Person\",\"mobileNo\":\"01099990000\"}", 0));
        mock("mock:consent-lookup").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://legacy", 403, "Forbidden", null, Map.of(),
                    "{\"code\":\"CONSENTS_SEALED\",\"message\":\"consents of Real Person are sealed\"}");
        });

        Outcome refused = register(subject, ServiceClient.message(subject, patno, "\"srvyNo\":\"CONSENT-" + subject + "\""), Map.of());

        assertThat(refused.success()).isFalse();
        assertThat(refused.failureReason()).doesNotContain("Real Person").startsWith("(text withheld");
    }

    /**
     * The database not answering the resend check (before any call) defers the row uncharged: as a system error it
     * was charged, so a database outage of some minutes walked rows to DEAD, blaming the downstreams.
     */
    @Test
    void aDatabaseNotAnsweringTheResendCheckDefersTheRowUncharged() {
        mock("mock:resend-check").whenAnyExchangeReceived(e -> {
            throw new org.springframework.jdbc.CannotGetJdbcConnectionException("no connection in time",
                    new java.sql.SQLTransientConnectionException("pool timeout"));
        });
        String subject = uniqueSubject("ALONE-DBDOWN");

        Outcome outcome = register(subject, ServiceClient.message(subject, "P-" + subject, ""), Map.of());

        assertThat(outcome.deferred()).as(outcome.toString()).isTrue();
        assertThat(outcome.failureReason()).isEqualTo("waiting: the database did not answer");
        assertThat(mock("mock:bundle").getReceivedCounter()).isZero();
    }

    /**
     * A worker paused past stuck-processing-after with a resend ahead (a frozen pod, a stop-the-world pause): its row
     * was reset by the redelivery job and claimed by another worker meanwhile. Resumed, it sends nothing (the survey
     * side cannot tell a second resend from a new request: the patient got the questionnaire twice) and its outcome
     * sends nothing. The worker whose claim holds resends, its claim renewed so the reset cannot take the row then.
     */
    @Test
    void aWorkerWhoseRowWasResetWhilePausedDoesNotResend() throws Exception {
        String subject = uniqueSubject("ALONE-PAUSED");
        String json = ServiceClient.message(subject, "P-" + subject, "");
        long first = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id = ?", first);
        bundleOnTheSurveySide(subject, json);
        long second = stored(subject);
        UUID paused = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        // the paused worker's claim; reset as stuck (reset-stuck-rows.sql: RECEIVED, no token) and claimed by another
        // worker (claim-row.sql: a new token, the attempt counted), who has not reached its resend yet
        jdbc.update("UPDATE inbox_message SET status = 'RECEIVED', attempts = 1, claim_token = NULL WHERE id = ?", second);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 2, claim_token = ?, "
                + "updated_at = now() - INTERVAL '3 minutes' WHERE id = ?", other, second);
        Timestamp claimedAt = jdbc.queryForObject("SELECT updated_at FROM inbox_message WHERE id = ?",
                Timestamp.class, second);

        Outcome resumed = register(new ClaimedRow(second, subject, "SEND",
                json.getBytes(StandardCharsets.UTF_8), 1, paused));

        assertThat(surveyCalls(subject, "resend")).as("the paused worker resent").isZero();
        assertThat(resumed.success()).isFalse();
        assertThat(resumed.failureReason()).startsWith("claim lost before a submission or resend");
        assertThat(jdbc.queryForMap("SELECT status, claim_token, updated_at FROM inbox_message WHERE id = ?", second))
                .as("the other worker's claim, untouched").containsEntry("status", "PROCESSING")
                .containsEntry("claim_token", other).containsEntry("updated_at", claimedAt);

        Outcome holder = register(new ClaimedRow(second, subject, "SEND",
                json.getBytes(StandardCharsets.UTF_8), 2, other));

        assertThat(holder.success()).as(holder.toString()).isTrue();
        assertThat(surveyCalls(subject, "resend")).isOne();
        assertThat(jdbc.queryForObject("SELECT updated_at > ? FROM inbox_message WHERE id = ?", Boolean.class, claimedAt, second))
                .as("the claim renewed before the resend").isTrue();
    }

    /** The same for a SUBMIT: the survey side does not key a submission either (a second one is recorded twice). */
    @Test
    void aWorkerWhoseSubmitRowWasResetWhilePausedDoesNotSubmit() throws Exception {
        String subject = uniqueSubject("ALONE-PAUSEDSUB");
        String json = ServiceClient.message(subject, "P-" + subject, "\"msgType\":\"SUBMIT\"");
        bundleOnTheSurveySide(subject, json);
        long row = store.accept(new com.hospital.surveyinbox.inbox.ReceivedMessage(subject, "SUBMIT",
                json.getBytes(StandardCharsets.UTF_8), null)).inboxId();
        UUID paused = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 2, claim_token = ? WHERE id = ?", other, row);

        Outcome resumed = register(new ClaimedRow(row, subject, "SUBMIT", json.getBytes(StandardCharsets.UTF_8), 1, paused));

        assertThat(surveyCalls(subject, "submission")).as("the paused worker submitted").isZero();
        assertThat(resumed.failureReason()).startsWith("claim lost before a submission or resend");

        Outcome holder = register(new ClaimedRow(row, subject, "SUBMIT", json.getBytes(StandardCharsets.UTF_8), 2, other));

        assertThat(holder.success()).as(holder.toString()).isTrue();
        assertThat(surveyCalls(subject, "submission")).isOne();
    }
}
