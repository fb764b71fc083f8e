package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.CommitRefusal;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import com.hospital.surveyinbox.support.TopicProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** When the inbox cannot be written, the sender is told to retry (503) and nothing is published. */
class InboxUnavailableTest extends IntegrationTest {

    @org.springframework.beans.factory.annotation.Autowired
    private com.hospital.surveyinbox.inbox.ReceptionConnections receptions;

    @Test
    void answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers() throws java.sql.SQLException {
        TopicProbe topic = TopicProbe.get("survey-send-info-received");
        String warmup = client.accept(ServiceClient.message(uniqueSubject("UP"), ""));
        await().atMost(Duration.ofSeconds(20)).until(() -> !topic.forInboxId(warmup).isEmpty());
        String subject = uniqueSubject("DOWN");

        services().stopPostgres();
        try {
            Reply reply = client.receive(ServiceClient.message(subject, ""));
            assertThat(reply.status()).as(reply.body()).isEqualTo(503);
            assertThat(reply.header("X-Result-Code")).isEqualTo("N");
            assertThat(reply.json().get("resultCode").asText()).isEqualTo("N");
            assertThat(reply.json().has("inboxId")).isFalse();
            // operators' reads say so in JSON too (GET /ops/inbox and /ops/inbox/{inboxId}, REST DSL over jpa:; the
            // stats and the chart, Spring controllers: 503, not Boot's 500 with a logged stack trace)
            // and their requeues (REST DSL over sql:). Asked together, each waiting out the pool's connection-timeout,
            // within the operator API's bounds (6 reads, 2 writes at once): the answer is the database's, not "busy"
            List<String> reads = List.of("/ops/inbox?status=DEAD", "/ops/inbox/" + warmup, "/ops/inbox/stats", "/ops/inbox/history");
            List<String> writes = List.of("/ops/inbox/" + warmup + "/requeue", "/ops/inbox/" + warmup + "/reply/abandon",
                    "/ops/inbox/" + warmup + "/reply/retry", "/ops/inbox/replies/retry");
            Map<String, java.util.concurrent.CompletableFuture<Reply>> asked = new java.util.LinkedHashMap<>();
            reads.forEach(read -> asked.put(read, java.util.concurrent.CompletableFuture.supplyAsync(() -> client.ops(read))));
            for (List<String> two : List.of(writes.subList(0, 2), writes.subList(2, 4))) {
                List<java.util.concurrent.CompletableFuture<Reply>> together = two.stream()
                        .map(write -> java.util.concurrent.CompletableFuture.supplyAsync(() -> client.opsPost(write))).toList();
                for (int i = 0; i < two.size(); i++) {
                    asked.put("POST " + two.get(i), together.get(i));
                }
                java.util.concurrent.CompletableFuture.allOf(together.toArray(java.util.concurrent.CompletableFuture[]::new)).join();
            }
            asked.forEach((request, answer) -> {
                Reply ops = answer.join();
                assertThat(ops.status()).as(request + " -> " + ops.body()).isEqualTo(503);
                assertThat(ops.json().get("error").asText()).as(request).isEqualTo("inbox temporarily unavailable; please retry");
            });
            // the pod stays in the Service, answering the contract's 503 JSON; health tells operators why
            assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(200);
            assertThat(client.management("/actuator/health/liveness").status()).isEqualTo(200);
            // receptionDb: the sender retries its 503 (the contract); a borrow drops the pool's dead connections (the
            // first 503 above may have dropped only the one it used). With no reception at all they leave within
            // keepalive-time, HikariCP's own check of idle connections (at its 2-minute default, receptionDb said UP
            // over a dead pool that long): the setting reaches both pools, 30 s (HikariCP's minimum)
            for (javax.sql.DataSource pool : List.of(jdbc.getDataSource(), receptions.dataSource())) {
                assertThat(pool.unwrap(com.zaxxer.hikari.HikariDataSource.class).getKeepaliveTime())
                        .as("spring.datasource.hikari.keepalive-time of " + pool).isEqualTo(30_000L);
            }
            for (String component : List.of("db", "receptionDb")) {
                await().atMost(Duration.ofSeconds(45)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                    assertThat(client.receive(ServiceClient.message(subject, "")).status()).isEqualTo(503);
                    assertThat(client.management("/actuator/health", ServiceClient.OPS_AUTH).json()
                            .at("/components/" + component + "/status").asText()).as(component).isEqualTo("DOWN");
                });
            }
        } finally {
            services().startPostgres();
        }

        // both pools reconnect on their own backoff (HikariCP, up to 5 s between attempts): db can say UP before the
        // receptions' pool holds a connection again; receptionDb says when it does
        for (String component : List.of("db", "receptionDb")) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(client.management("/actuator/health",
                    ServiceClient.OPS_AUTH).json().at("/components/" + component + "/status").asText()).as(component).isEqualTo("UP"));
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject))
                .isZero();
        // the sender retries a 503 (the contract), with its Idempotency-Key: the first COMMIT after the restart can
        // outlive the socket timeout on a loaded machine (seen once on CI: 4 s). A retry is accepted, and the row is
        // stored once whatever became of the attempt answered 503.
        String back = uniqueSubject("BACK");
        Map<String, String> key = Map.of("Idempotency-Key", "retry-" + back);
        List<String> answered = new ArrayList<>();
        Reply accepted = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            Reply reply = client.receive(ServiceClient.message(back, ""), key);
            answered.add(reply.status() + " " + reply.body());
            assertThat(reply.status()).as("answers so far %s", answered).isIn(200, 503);
            return reply;
        }, reply -> reply.status() == 200);
        String after = accepted.json().get("inboxId").asText();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, back))
                .as("rows stored after answers %s", answered).isEqualTo(1);
        if ("received".equals(accepted.json().get("resultMessage").asText())) {
            // stored by this answer: published
            await().atMost(Duration.ofSeconds(20)).until(() -> !topic.forInboxId(after).isEmpty());
        } else {
            // the replay of a row whose COMMIT outlived its 503: not published again (the redelivery job, off in this
            // context, republishes a row left RECEIVED: RedeliveryTest)
            assertThat(accepted.json().get("resultMessage").asText()).as("answers %s", answered).contains("duplicate Idempotency-Key");
            assertThat(answered).hasSizeGreaterThan(1);
        }
        assertThat(topic.forSubject(subject)).isEmpty();
    }

    /**
     * The server's own failure (an I/O error, an internal error) or the deployment's (a privilege revoked) while the
     * row is written is not the row's: a 503, so the sender retries. It was a 500 "could not be stored", which a
     * sender takes for a message never to send again.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"58030", "XX000", "42501"})
    void answers503WhenTheServerFailsWhileTheRowIsWritten(String sqlState) {
        String subject = uniqueSubject("SERVERFAULT");
        try (CommitRefusal ignored = CommitRefusal.forSubjectsLike(jdbc, "SERVERFAULT-%", sqlState)) {
            Reply reply = client.receive(ServiceClient.message(subject, ""));
            assertThat(reply.status()).as(reply.body()).isEqualTo(503);
            assertThat(reply.header("X-Result-Code")).isEqualTo("N");
            assertThat(reply.json().get("resultMessage").asText()).contains("please retry");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject))
                .isZero();
    }

    @Test
    void publishesNoEventWhenTheInsertIsRolledBackAtCommit() {
        TopicProbe topic = TopicProbe.get("survey-send-info-received");
        String subject = uniqueSubject("ROLLBACK");
        // a deferred constraint trigger fails the transaction at COMMIT, after the INSERT itself succeeded
        try (CommitRefusal ignored = CommitRefusal.forSubjectsLike(jdbc, "ROLLBACK-%")) {
            Reply reply = client.receive(ServiceClient.message(subject, ""));
            // the database refused the row (the trigger's error is not one of unavailability): 500
            assertThat(reply.status()).as(reply.body()).isEqualTo(500);
            assertThat(reply.header("X-Result-Code")).isEqualTo("N");
            assertThat(reply.json().has("inboxId")).isFalse();
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject))
                .isZero();
        topic.awaitSentinelOnEveryPartition(uniqueSubject("AFTER"), after -> client.accept(ServiceClient.message(after, "")));
        assertThat(topic.forSubject(subject)).isEmpty();
    }
}
