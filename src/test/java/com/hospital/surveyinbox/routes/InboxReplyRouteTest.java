package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.camel.Exchange;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-reply.camel.yaml} (shared setup: {@link RouteKit}). */
class InboxReplyRouteTest extends RouteKit {

    @org.springframework.beans.factory.annotation.Autowired
    com.hospital.surveyinbox.processing.DownstreamCircuits circuits;

    /** Whether the gauge adapter_inbox_replies_failing counts this row: its repository query, narrowed to the row. */
    private boolean countedFailing(long id) throws NoSuchMethodException {
        String query = com.hospital.surveyinbox.ops.InboxRowRepository.class.getMethod("failingReplies")
                .getAnnotation(org.springframework.data.jpa.repository.Query.class).value();
        return jdbc.queryForObject(query + " AND id = ?", Long.class, id) == 1;
    }

    @Test
    void replyRecordsARefusalAsFailedAndDeliversOnTheNextTry() throws Exception {
        String subject = uniqueSubject("ALONE-RPL");
        long id = stored(subject);
        // failed tries left over from a reply the row owed before (a DEAD reply, then a requeue): not this reply's
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'PENDING', reply_reason_code = 'NOTIFY_SKIPPED', "
                + "reply_reason = 'no notification', reply_attempts = 7, reply_failures = 7 WHERE id = ?", id);
        assertThat(countedFailing(id)).as("a PENDING reply is not failing").isFalse();
        // a status outside the step's okStatusCodeRange (2xx) throws, as camel-http does
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            throw new HttpOperationFailedException("http://legacy/survey-send-results", 503, "Unavailable", null, Map.of(), "");
        });

        template.sendBody("direct:inbox-reply", Map.of("id", id));
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED")
                .containsEntry("reply_last_error", "legacy answered HTTP 503")
                .containsEntry("reply_failures", 1); // this reply's backoff starts afresh
        assertThat(countedFailing(id)).isTrue();
        // the legacy circuit open (its registration calls failing): the reply is not sent. The old route caught a
        // CircuitOpenException, which the interceptor never throws for the reply's step (circuitExempt), so every
        // owed reply was POSTed through a legacy outage, a worker waiting out each one's timeout.
        for (int request = 0; request < 5; request++) {
            circuits.recordFailure("legacy", "inbox-register-legacy-patient", request);
        }
        double failed = meters.counter("adapter.replies", "reason", "NOTIFY_SKIPPED", "outcome", "failed").count();
        double waiting = meters.counter("adapter.replies", "reason", "NOTIFY_SKIPPED", "outcome", "waiting").count();
        try {
            template.sendBody("direct:inbox-reply", Map.of("id", id));
        } finally {
            circuits.reset("legacy");
        }
        // a wait, counted as one: as a failed send, a legacy outage showed every owed reply failing at every tick
        assertThat(meters.counter("adapter.replies", "reason", "NOTIFY_SKIPPED", "outcome", "waiting").count()).isEqualTo(waiting + 1);
        assertThat(meters.counter("adapter.replies", "reason", "NOTIFY_SKIPPED", "outcome", "failed").count()).isEqualTo(failed);
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED")
                .containsEntry("reply_last_error", "waiting: legacy unavailable (circuit open)")
                .containsEntry("reply_failures", 1); // nothing was sent: its backoff does not grow
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).as("not sent while open").isEqualTo(1);

        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200));
        template.sendBody("direct:inbox-reply", Map.of("id", id));
        template.sendBody("direct:inbox-reply", Map.of("id", id)); // delivered once: a SENT reply is never taken again
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENT");
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).isEqualTo(2);
        assertThat(countedFailing(id)).isFalse();
        // every try of one reply carries one key (its row and reason): a reply sent again because its SENT record was
        // lost can be told from a new one by the legacy system
        assertThat(mock("mock:legacy-reply").getReceivedExchanges()).extracting(e -> e.getMessage().getHeader("Idempotency-Key"))
                .containsOnly(id + "-NOTIFY_SKIPPED");
    }

    /**
     * An operator requeues a DEAD row while its DEAD reply is on the wire and that reply then fails (a timeout): the
     * requeue withdrew the obligation, so the failure does not bring the DEAD reply back as owed (it would be sent for
     * a row that then completes), and the row is RECEIVED with no reply owed.
     */
    @Test
    void aRequeueWithdrawsADeadReplyBeingSentAndItsSenderCannotBringItBack() throws Exception {
        long id = deadOwingItsReply("RPL-RQ");
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
            throw new java.net.SocketTimeoutException("Read timed out");
        });

        template.sendBody("direct:inbox-reply", Map.of("id", id));

        assertThat(rows.row(Long.toString(id))).containsEntry("status", "RECEIVED").containsEntry("reply_status", "NONE");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE id = ? AND reply_status IN ('PENDING', 'FAILED')",
                Integer.class, id)).isZero();

        // withdrawn while on the wire, but it got through: recorded SENT (the legacy system has it), so the row dying
        // again owes no second DEAD reply
        long second = deadOwingItsReply("RPL-RQ2");
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            assertThat(client.opsPost("/ops/inbox/" + second + "/requeue").status()).isEqualTo(200);
            e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        });
        template.sendBody("direct:inbox-reply", Map.of("id", second));
        assertThat(rows.row(Long.toString(second))).containsEntry("status", "RECEIVED").containsEntry("reply_status", "SENT")
                .containsEntry("reply_reason_code", "DEAD");
    }

    /**
     * A sender that outlived its obligation (the requeued row completed and owes a new reply, which a second sender
     * holds) records nothing: its failure neither turns the newer sender's SENDING into FAILED (the reply would be sent
     * twice) nor could its success mark as SENT a reply the newer sender has not delivered.
     */
    @Test
    void aStaleReplySenderCannotRecordOverTheSenderThatHoldsTheReplyNow() throws Exception {
        long id = deadOwingItsReply("RPL-STALE");
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
            // the requeued row completes with a reply owed, and a second sender takes it (claim-reply.sql's update)
            jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'PENDING', reply_reason_code = 'NOTIFY_SKIPPED', "
                    + "reply_reason = 'no notification', reply_updated_at = now() WHERE id = ?", id);
            jdbc.update("UPDATE inbox_message SET reply_status = 'SENDING', reply_attempts = reply_attempts + 1 WHERE id = ?", id);
            throw new java.net.SocketTimeoutException("Read timed out");
        });

        double stale = meters.counter("adapter.replies", "reason", "DEAD", "outcome", "stale").count();
        template.sendBody("direct:inbox-reply", Map.of("id", id));
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENDING").containsEntry("reply_reason_code", "NOTIFY_SKIPPED");
        assertThat(meters.counter("adapter.replies", "reason", "DEAD", "outcome", "stale").count())
                .as("counted stale, not failed: nothing was recorded").isEqualTo(stale + 1);

        // the same with a stale success: the newer sender's reply stays SENDING (not delivered yet), never SENT
        long second = deadOwingItsReply("RPL-STALE2");
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            jdbc.update("UPDATE inbox_message SET reply_status = 'SENDING', reply_attempts = reply_attempts + 1 WHERE id = ?", second);
            e.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        });
        template.sendBody("direct:inbox-reply", Map.of("id", second));
        assertThat(rows.row(Long.toString(second))).containsEntry("reply_status", "SENDING");
    }

    /**
     * The claim's statement commits and its answer is lost (the connection drops): the step's database redelivery
     * (inbox-reply-database-busy) runs it again with the same token, finds the reply its own, and sends it at once,
     * one try counted. Without the token the retry found the reply SENDING and took nothing: the reply waited for
     * stuck-processing-after (15 minutes), nothing logged.
     */
    @Test
    void aReplyClaimWhoseAnswerWasLostIsTakenAgainByItsRetryAndSentOnce() throws Exception {
        long id = deadOwingItsReply("RPL-LOST");
        int attempts = jdbc.queryForObject("SELECT reply_attempts FROM inbox_message WHERE id = ?", Integer.class, id);
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger(1);

        // camel-sql runs a step on the DataSource in this header when there is one: the claim's (the route removes
        // every header before its later statements)
        template.send("direct:inbox-reply", e -> {
            e.getMessage().setBody(Map.of("id", id));
            e.getMessage().setHeader("CamelSqlDataSource", answerLostAfterCommit(jdbc.getDataSource(), "reply_claim_token", lost));
        });

        assertThat(lost.get()).as("the claim's first answer was lost").isZero();
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).as("sent at once, once").isEqualTo(1);
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENT")
                .containsEntry("reply_attempts", attempts + 1);
    }

    /**
     * A statement of the reply that fails for another reason than an unavailable database (one refused during a
     * rolling migration, SQLState 42P01): the reply stays owed, the failure is logged in our words, and the caller
     * goes on. Camel's default error handler took it before: the exception's own text in the log, the caller's route
     * ended (a redelivery tick with it, every lost and retried row left for a later one).
     */
    @Test
    void aStatementRefusedForAnotherReasonLeavesTheReplyOwedAndTheCallerGoesOn() {
        long id = deadOwingItsReply("RPL-REFUSED");
        // connections whose statements the server refuses (not "unavailable": the statement, not the database)
        javax.sql.DataSource refusing = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class}, (proxy, method, args) -> {
                    Object result = method.invoke(jdbc.getDataSource(), args);
                    if (!(result instanceof java.sql.Connection connection)) {
                        return result;
                    }
                    return java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {java.sql.Connection.class},
                            (p, m, a) -> {
                                if (m.getName().startsWith("prepare")) {
                                    throw new java.sql.SQLException("relation \"inbox_message\" does not exist", "42P01");
                                }
                                try {
                                    return m.invoke(connection, a);
                                } catch (java.lang.reflect.InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                });

        Exchange done = template.send("direct:inbox-reply", e -> {
            e.getMessage().setBody(Map.of("id", id));
            e.getMessage().setHeader("CamelSqlDataSource", refusing);
        });

        assertThat(done.getException()).as("the caller goes on").isNull();
        assertThat(done.getVariable("replyUnrecorded")).isEqualTo("true");
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).isZero();
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "PENDING");
    }

    /**
     * The SENT record of a delivered reply commits and its answer is lost: tried again (inbox-reply-database-busy), it
     * finds its own record, and the reply is counted and logged as delivered. It changed no row before: counted
     * {@code stale} and logged "not recorded" for a reply that was delivered and recorded.
     */
    @Test
    void aDeliveredReplyWhoseRecordAnswerWasLostIsCountedSent() throws Exception {
        long id = deadOwingItsReply("RPL-SENTLOST");
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger(1);
        javax.sql.DataSource losing = answerLostAfterCommit(jdbc.getDataSource(), "SET reply_status = 'SENT'", lost);
        // the reply removes every header before its record: the DataSource is set where the record runs
        org.apache.camel.builder.AdviceWith.adviceWith(camel, "inbox-reply", a -> a.weaveById("inbox-reply-record-sent").before()
                .setHeader("CamelSqlDataSource", a.constant(losing)));
        double sent = meters.counter("adapter.replies", "reason", "DEAD", "outcome", "sent").count();
        double stale = meters.counter("adapter.replies", "reason", "DEAD", "outcome", "stale").count();
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = new ch.qos.logback.core.read.ListAppender<>();
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logged.start();
        root.addAppender(logged);
        // Camel's own retry line is on by default at DEBUG: the error handler's logger at DEBUG shows whether it is off
        ch.qos.logback.classic.Logger errorHandler = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.apache.camel.processor.errorhandler.DefaultErrorHandler.class);
        ch.qos.logback.classic.Level level = errorHandler.getLevel();
        errorHandler.setLevel(ch.qos.logback.classic.Level.DEBUG);

        Exchange done;
        try {
            done = template.send("direct:inbox-reply", e -> e.getMessage().setBody(Map.of("id", id)));
        } finally {
            root.detachAppender(logged);
            errorHandler.setLevel(level);
        }

        assertThat(done.getException()).isNull();
        assertThat(lost.get()).as("mark-reply-sent.sql's first answer was lost").isZero();
        // the try again is logged in our words: Camel's own retry line printed Spring's exception, the statement's text
        // and the driver's message in it
        java.util.List<String> lines = logged.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
        assertThat(lines).anySatisfy(line -> assertThat(line)
                .startsWith("inbox-reply: the database did not answer (").contains("[SQLState 08006]").endsWith("retry 1 of 8 follows"));
        assertThat(lines).noneSatisfy(line -> assertThat(line).containsAnyOf("reply_status", "I/O error", "caught:"));
        assertThat(logged.list).allSatisfy(event -> assertThat(event.getThrowableProxy()).isNull());
        assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "SENT");
        assertThat(meters.counter("adapter.replies", "reason", "DEAD", "outcome", "sent").count()).isEqualTo(sent + 1);
        assertThat(meters.counter("adapter.replies", "reason", "DEAD", "outcome", "stale").count()).isEqualTo(stale);
    }

    /** A DEAD row (5 attempts) whose DEAD reply is owed and not yet taken by a sender. */
    private long deadOwingItsReply(String prefix) {
        long id = aged(uniqueSubject(prefix), "DEAD", 0);
        jdbc.update("UPDATE inbox_message SET attempts = 5, reply_status = 'PENDING', reply_reason_code = 'DEAD', "
                + "reply_reason = 'patient not registered', reply_updated_at = now() WHERE id = ?", id);
        return id;
    }
}
