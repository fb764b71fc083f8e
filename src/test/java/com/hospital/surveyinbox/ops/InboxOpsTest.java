package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import org.junit.jupiter.api.Test;

/** The operator API of CONTRACT §4 and the actuator endpoints on the management port. */
class InboxOpsTest extends IntegrationTest {

    @Test
    void showsARowWithoutPayloadOrPatientData() {
        String subject = uniqueSubject("OPS");
        String inboxId = client.accept(ServiceClient.message(subject, "\"patNm\":\"SECRET-NAME\",\"mobileNo\":\"010-9999-1234\""));

        Reply reply = client.ops("/ops/inbox/" + inboxId);

        assertThat(reply.status()).isEqualTo(200);
        JsonNode row = reply.json();
        assertThat(row.get("inboxId").asText()).isEqualTo(inboxId);
        assertThat(row.get("srvyDrawupNo").asText()).isEqualTo(subject);
        assertThat(row.get("msgType").asText()).isEqualTo("SEND");
        assertThat(row.get("status").asText()).isIn("RECEIVED", "PROCESSING", "COMPLETED", "FAILED");
        assertThat(row.has("attempts")).isTrue();
        assertThat(row.has("lastError")).isTrue();
        assertThat(row.has("replyStatus")).isTrue();
        // instants with their offset (RFC 3339), the moments the database holds: a reader in another zone, or a
        // serializer change that dropped the offset, would otherwise read them hours off
        java.time.OffsetDateTime received = java.time.OffsetDateTime.parse(row.get("receivedAt").asText());
        java.time.OffsetDateTime updated = java.time.OffsetDateTime.parse(row.get("updatedAt").asText());
        assertThat(received.toInstant()).isEqualTo(jdbc.queryForObject("SELECT created_at FROM inbox_message WHERE id = ?",
                java.time.OffsetDateTime.class, Long.parseLong(inboxId)).toInstant());
        assertThat(updated.toInstant()).isAfterOrEqualTo(received.toInstant());
        assertThat(reply.body()).doesNotContain("SECRET-NAME", "010-9999-1234", "payload", "patno", "P" + Math.abs(subject.hashCode()));
    }

    /**
     * A row deferred uncharged for a day (its payload key missing on this pod, a circuit open) holds an attempt per
     * retry-delay: the detail shows every charged attempt and the latest 100 deferred ones, oldest first, and says how
     * many earlier deferred ones it leaves out.
     * All of them made the detail and the console's table megabytes.
     */
    @Test
    void aRowsDetailShowsItsLatestAttemptsAndCountsTheRest() {
        String subject = uniqueSubject("OPS-DEFERRED");
        long id = row(subject, "FAILED");
        // a charged failure first (it says why the row failed), then 150 deferrals
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome, reason)"
                + " VALUES (?, 1, now() - INTERVAL '1 day', now() - INTERVAL '1 day', 'FAILED', 'form not registered')", id);
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome, reason)"
                + " SELECT ?, 2, now() - make_interval(mins => 150 - n), now() - make_interval(mins => 150 - n), 'DEFERRED',"
                + " 'deferred ' || n FROM generate_series(1, 150) AS n", id);
        // and a charged one among the latest: it takes no deferred one's place
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome, reason)"
                + " VALUES (?, 2, now(), now(), 'FAILED', 'group not found')", id);

        JsonNode row = client.ops("/ops/inbox/" + id).json();

        assertThat(row.get("attemptHistory")).hasSize(102);
        assertThat(row.get("attemptHistory").get(0).get("reason").asText()).as("every charged attempt").isEqualTo("form not registered");
        assertThat(row.get("attemptHistory").get(1).get("reason").asText()).isEqualTo("deferred 51");
        assertThat(row.get("attemptHistory").get(100).get("reason").asText()).isEqualTo("deferred 150");
        assertThat(row.get("attemptHistory").get(101).get("reason").asText()).isEqualTo("group not found");
        assertThat(row.get("attemptHistoryOmitted").asLong()).isEqualTo(50);
        jdbc.update("DELETE FROM inbox_attempt WHERE inbox_id = ? AND id NOT IN (SELECT id FROM inbox_attempt WHERE inbox_id = ?"
                + " ORDER BY id DESC LIMIT 10)", id, id);
        JsonNode fewer = client.ops("/ops/inbox/" + id).json();
        assertThat(fewer.get("attemptHistory")).hasSize(10);
        assertThat(fewer.get("attemptHistory").get(0).get("reason").asText()).isEqualTo("deferred 142");
        assertThat(fewer.has("attemptHistoryOmitted")).as("nothing left out").isFalse();
    }

    /**
     * A reply the legacy system keeps refusing gets a RETRY_REPLY audit entry at every "retry the failed replies", for
     * as long as it is owed: the detail shows the latest 100 entries, oldest first, and counts the rest. The whole
     * trail made the detail grow without bound.
     */
    @Test
    void aRowsDetailShowsItsLatestAuditEntriesAndCountsTheRest() {
        String subject = uniqueSubject("OPS-AUDIT");
        long id = row(subject, "DEAD");
        jdbc.update("INSERT INTO operator_audit (inbox_id, at, actor, action, from_status, to_status)"
                + " SELECT ?, now() - make_interval(mins => 130 - n), 'ops-' || n, 'RETRY_REPLY', 'FAILED', 'FAILED'"
                + " FROM generate_series(1, 130) AS n", id);

        JsonNode row = client.ops("/ops/inbox/" + id).json();

        assertThat(row.get("audit")).hasSize(100);
        assertThat(row.get("audit").get(0).get("actor").asText()).isEqualTo("ops-31");
        assertThat(row.get("audit").get(99).get("actor").asText()).isEqualTo("ops-130");
        assertThat(row.get("auditOmitted").asLong()).isEqualTo(30);
        jdbc.update("DELETE FROM operator_audit WHERE inbox_id = ? AND actor <> 'ops-130'", id);
        JsonNode one = client.ops("/ops/inbox/" + id).json();
        assertThat(one.get("audit")).singleElement().satisfies(a -> assertThat(a.get("actor").asText()).isEqualTo("ops-130"));
        assertThat(one.has("auditOmitted")).as("nothing left out").isFalse();
    }

    /** A SEND row of {@code subject} in {@code status}, written directly: its id. */
    private long row(String subject, String status) {
        return jdbc.queryForObject("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status) VALUES (?, 'SEND', ?)"
                + " RETURNING id", Long.class, subject, status);
    }

    @Test
    void listsNewestFirstFilteredBySubjectAndStatusWithALimit() {
        String subject = uniqueSubject("LIST");
        String first = client.accept(ServiceClient.message(subject, ""));
        String second = client.accept(ServiceClient.message(subject, ""));
        String third = client.accept(ServiceClient.message(subject, ""));

        JsonNode all = client.ops("/ops/inbox?srvyDrawupNo=" + subject).json();
        assertThat(all).hasSize(3);
        assertThat(all.get(0).get("inboxId").asText()).isEqualTo(third);
        assertThat(all.get(2).get("inboxId").asText()).isEqualTo(first);

        JsonNode limited = client.ops("/ops/inbox?srvyDrawupNo=" + subject + "&limit=1").json();
        assertThat(limited).hasSize(1);
        assertThat(limited.get(0).get("inboxId").asText()).isEqualTo(third);
        // the next pages: the rows below the last inboxId of the page before, newest first, until none is left
        JsonNode next = client.ops("/ops/inbox?srvyDrawupNo=" + subject + "&limit=1&before=" + third).json();
        assertThat(next).extracting(r -> r.get("inboxId").asText()).containsExactly(second);
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=" + subject + "&limit=5&before=" + second).json())
                .extracting(r -> r.get("inboxId").asText()).containsExactly(first);
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=" + subject + "&before=" + first).json()).isEmpty();
        // every shape of the list pages alike: all rows, one status, the owed replies
        assertThat(client.ops("/ops/inbox?limit=2&before=" + third).json()).extracting(r -> Long.parseLong(r.get("inboxId").asText()))
                .hasSize(2).allSatisfy(id -> assertThat(id).isLessThan(Long.parseLong(third))).isSortedAccordingTo(java.util.Comparator.reverseOrder());
        assertThat(client.ops("/ops/inbox?status=" + status(first) + "&before=" + first).json())
                .allSatisfy(r -> assertThat(Long.parseLong(r.get("inboxId").asText())).isLessThan(Long.parseLong(first)));
        assertThat(client.ops("/ops/inbox?replyStatus=FAILED&before=1").json()).isEmpty();
        assertThat(client.ops("/ops/inbox?before=abc").json().get("error").asText())
                .isEqualTo("before must be an inboxId (the last one of the page before)");
        assertThat(client.ops("/ops/inbox?before=0").status()).isEqualTo(400);

        String status = status(second);
        JsonNode byStatus = client.ops("/ops/inbox?status=" + status + "&srvyDrawupNo=" + subject).json();
        assertThat(byStatus).allSatisfy(r -> assertThat(r.get("status").asText()).isEqualTo(status));
        assertThat(client.ops("/ops/inbox?status=BOGUS").status()).isEqualTo(400);
        assertThat(client.ops("/ops/inbox?limit=0").status()).isEqualTo(400);
        assertThat(client.ops("/ops/inbox/999999999").status()).isEqualTo(404);
        assertThat(client.ops("/ops/inbox/not-a-number").status()).isEqualTo(404);
        // the chart's span must be a whole number: said in JSON, as every operator answer
        Reply notANumber = client.ops("/ops/inbox/history?minutes=abc");
        assertThat(notANumber.status()).isEqualTo(400);
        assertThat(notANumber.json().get("error").asText()).isEqualTo("minutes must be a whole number, 1..1440");
        assertThat(client.ops("/ops/inbox/history?minutes=99999999999").json().get("error").asText())
                .isEqualTo("minutes must be a whole number, 1..1440");
    }

    @Test
    void countsRowsPerStatusAndTheOldestPendingAge() {
        client.accept(ServiceClient.message(uniqueSubject("STAT"), ""));
        JsonNode stats = client.ops("/ops/inbox/stats").json();

        long total = jdbc.queryForObject("SELECT count(*) FROM inbox_message", Long.class);
        JsonNode counts = stats.get("counts");
        assertThat(counts.fieldNames()).toIterable()
                .containsExactlyInAnyOrder("RECEIVED", "PROCESSING", "FAILED", "DEAD", "COMPLETED");
        long sum = 0;
        for (JsonNode n : counts) {
            sum += n.asLong();
        }
        assertThat(sum).isLessThanOrEqualTo(total).isPositive();
        assertThat(stats.get("oldestPendingAgeSeconds").asLong()).isGreaterThanOrEqualTo(0);
        // this pod's circuits and workers, for the console
        assertThat(stats.get("circuits").fieldNames()).toIterable().containsExactly("legacy", "account", "survey");
        assertThat(stats.at("/circuits/survey").asText()).isIn("CLOSED", "OPEN", "HALF_OPEN");
        assertThat(stats.at("/workers/size").asInt()).isPositive();
        assertThat(stats.at("/workers/busy").asInt()).isBetween(0, stats.at("/workers/size").asInt());
    }

    @Test
    void servesProbesAndMetricsOnTheManagementPortOnly() {
        assertThat(client.management("/actuator/health/liveness").status()).isEqualTo(200);
        assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(200);
        Reply prometheus = client.management("/actuator/prometheus");
        assertThat(prometheus.status()).isEqualTo(200);
        assertThat(prometheus.body()).contains("jvm_memory_used_bytes");
        assertThat(client.get("/actuator/prometheus", ServiceClient.OPS_AUTH).status()).isIn(403, 404);
    }
}
