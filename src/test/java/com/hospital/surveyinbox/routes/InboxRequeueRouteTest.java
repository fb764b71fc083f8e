package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.ops.PacedRepublisher;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The route kit for {@code routes/inbox-requeue.camel.yaml} (shared setup: {@link RouteKit}): the operator requeues
 * over HTTP, their events landing on {@code mock:kafka}. The black-box tests (RedeliveryTest, the console's)
 * prove a requeued row completes; these pin what the route and {@code sql/requeue-row.sql} promise on their own.
 */
// six operators pressing requeue at once: above the pod's write bound (2), which InboxOpsRouteTest pins
@org.springframework.test.context.TestPropertySource(properties = {"adapter.inbox.bulk-requeue-within=PT2S",
        "adapter.security.ops-max-writes-in-flight=8"})
class InboxRequeueRouteTest extends RouteKit {

    @Autowired
    PacedRepublisher paced;

    @Autowired
    com.hospital.surveyinbox.config.AdapterProperties properties;

    @Autowired
    com.hospital.surveyinbox.ops.InboxRowRepository repository;

    /**
     * Operators who press requeue on the same row at once: the row is locked, checked, updated and audited in one
     * statement, so exactly one of them requeues it (one audit, one event) and the others are told its status now.
     */
    @Test
    void operatorsRequeueingOneRowAtOnceRequeueItExactlyOnce() throws Exception {
        long id = aged(uniqueSubject("RQ-RACE"), "DEAD", 1);
        jdbc.update("UPDATE inbox_message SET attempts = 5, last_error = 'patient not registered yet' WHERE id = ?", id);
        int operators = 6;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(operators);
        List<Future<Reply>> replies = new ArrayList<>();
        try {
            for (int i = 0; i < operators; i++) {
                replies.add(pool.submit(() -> {
                    go.await();
                    return client.opsPost("/ops/inbox/" + id + "/requeue");
                }));
            }
            go.countDown();
            List<Reply> answered = new ArrayList<>();
            for (Future<Reply> reply : replies) {
                answered.add(reply.get());
            }

            assertThat(answered).filteredOn(r -> r.status() == 200).singleElement().satisfies(r -> {
                assertThat(r.json().get("inboxId").asText()).isEqualTo(Long.toString(id));
                assertThat(r.json().get("status").asText()).isEqualTo("RECEIVED");
            });
            assertThat(answered).filteredOn(r -> r.status() != 200).hasSize(operators - 1).allSatisfy(r -> {
                assertThat(r.status()).as(r.body()).isEqualTo(409);
                assertThat(r.json().get("status").asText()).isEqualTo("RECEIVED");
            });
        } finally {
            pool.shutdownNow();
        }
        assertThat(jdbc.queryForList("SELECT actor, from_status, to_status FROM operator_audit WHERE inbox_id = ?", id))
                .singleElement().isEqualTo(Map.of("actor", "ops", "from_status", "DEAD", "to_status", "RECEIVED"));
        assertThat(rows.attempts(Long.toString(id))).isZero();
        assertThat(jdbc.queryForObject("SELECT last_error FROM inbox_message WHERE id = ?", String.class, id)).isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> eventsOf(id) == 1);
        // once: no second event follows (a paced republish would come within the second)
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> eventsOf(id) == 1);
    }

    /**
     * A single requeue while Kafka does not answer is answered at once: its event is handed to the publish pool and
     * reaches the broker once it answers. The operator's request waited out the producer (20 s), holding one of the
     * operators' two write slots.
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aRequeueIsAnsweredWithoutWaitingForKafka() throws Exception {
        long id = aged(uniqueSubject("RQ-KAFKADOWN"), "DEAD", 1);
        CountDownLatch kafkaBack = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean published = new java.util.concurrent.atomic.AtomicBoolean();
        mock("mock:kafka").whenAnyExchangeReceived(e -> { // a broker that does not answer
            kafkaBack.await(30, java.util.concurrent.TimeUnit.SECONDS);
            published.set(true);
        });
        try {
            Reply reply = client.opsPost("/ops/inbox/" + id + "/requeue");

            assertThat(reply.status()).as(reply.body()).isEqualTo(200);
            assertThat(reply.json().get("status").asText()).isEqualTo("RECEIVED");
            assertThat(published).as("answered while the publish still waits for the broker").isFalse();
        } finally {
            kafkaBack.countDown();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> eventsOf(id) == 1);
        assertThat(published).isTrue();
    }

    /**
     * A requeue and a reply retry whose row cannot be read back once the change committed (the pool exhausted for a
     * moment): answered 200 with what was done and where to read the row. Both were answered 503 "please retry" before,
     * and the operator's retry was refused (409) for a change already made.
     */
    @Test
    void aChangeWhoseRowCannotBeReadBackIsAnsweredAsDone() {
        mock("mock:changed-row-find").whenAnyExchangeReceived(e -> {
            throw new java.sql.SQLTransientConnectionException("connection is not available, request timed out", "08001");
        });
        long dead = aged(uniqueSubject("RQ-UNREAD"), "DEAD", 1);
        long owed = aged(uniqueSubject("RQ-UNREAD-REPLY"), "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', reply_attempts = 2, "
                + "reply_failures = 2, reply_last_error = 'legacy answered HTTP 503', reply_updated_at = now() WHERE id = ?", owed);

        Reply requeued = client.opsPost("/ops/inbox/" + dead + "/requeue");
        Reply retried = client.opsPost("/ops/inbox/" + owed + "/reply/retry");

        assertThat(requeued.status()).as(requeued.body()).isEqualTo(200);
        assertThat(requeued.json().get("inboxId").asText()).isEqualTo(Long.toString(dead));
        assertThat(requeued.json().get("resultMessage").asText()).isEqualTo("inbox " + dead
                + " requeued; the row could not be read back just now: GET /ops/inbox/" + dead + " shows it");
        assertThat(rows.status(Long.toString(dead))).isEqualTo("RECEIVED");
        assertThat(audits(dead)).isOne();
        await().atMost(Duration.ofSeconds(10)).until(() -> eventsOf(dead) == 1);
        // once: no second event follows (a paced republish would come within the second)
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> eventsOf(dead) == 1);
        assertThat(retried.status()).as(retried.body()).isEqualTo(200);
        assertThat(retried.json().get("resultMessage").asText()).startsWith("inbox " + owed + " set to go at the next redelivery tick;");
        assertThat(audits(owed)).isOne();
        assertThat(mock("mock:changed-row-find").getReceivedCounter()).isEqualTo(2);
    }

    /**
     * A bulk requeue whose second row fails (the database went away part-way): the answer is a 500 in JSON, the
     * first row stays requeued with its audit and its event is still published, the rows after it are untouched,
     * and the room the call reserved is handed back (a bulk requeue right after has all of it).
     */
    @Test
    void aBulkRequeueThatFailsPartWayKeepsWhatItDidAndHandsBackItsRoom() {
        String prefix = uniqueSubject("RQ-PART") + "-";
        long first = aged(prefix + "1", "DEAD", 1);
        long second = aged(prefix + "2", "DEAD", 1);
        long third = aged(prefix + "3", "DEAD", 1);
        mock("mock:requeue-row").whenExchangeReceived(2, e -> {
            throw new IllegalStateException("the database went away");
        });

        Reply failed = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false,\"limit\":3}");

        assertThat(failed.status()).as(failed.body()).isEqualTo(500);
        assertThat(failed.json().path("error").asText()).as(failed.body()).isEqualTo("internal error");
        assertThat(rows.status(Long.toString(first))).isEqualTo("RECEIVED");
        assertThat(audits(first)).isOne();
        for (long untouched : new long[] {second, third}) {
            assertThat(rows.status(Long.toString(untouched))).isEqualTo("DEAD");
            assertThat(audits(untouched)).isZero();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> eventsOf(first) == 1);
        // once: no second event follows (a paced republish would come within the second)
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> eventsOf(first) == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> paced.pending() == 0);
        PacedRepublisher.Reservation all = paced.reserve(Integer.MAX_VALUE);
        paced.release(all);
        assertThat(all.getGranted()).isGreaterThanOrEqualTo(3);

        // the rest, once the cause is gone: the two rows left, oldest first
        Reply rest = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false}");
        assertThat(rest.status()).as(rest.body()).isEqualTo(200);
        assertThat(rest.json().get("ids")).extracting(JsonNode::asText)
                .containsExactly(Long.toString(second), Long.toString(third));
        assertThat(rest.json().get("remaining").asLong()).isZero();
    }

    /**
     * A bulk requeue on a database that takes half a second per row starts no row once its time
     * (adapter.inbox.bulk-requeue-within, 2 s here) has passed: the rows it did are requeued, the rest are
     * answered as remaining and left as they were. It held the call for as long as every row took (500 rows: minutes).
     */
    @Test
    void aBulkRequeueOnASlowDatabaseAnswersInItsTimeWithTheRestRemaining() {
        String prefix = uniqueSubject("RQ-SLOW") + "-";
        long[] ids = new long[8];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = aged(prefix + i, "DEAD", 1);
        }
        // each row's statement meets a database busy for half a second first
        mock("mock:requeue-row").whenAnyExchangeReceived(e -> jdbc.queryForList("SELECT pg_sleep(0.5)"));

        Reply done = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false}");

        assertThat(done.status()).as(done.body()).isEqualTo(200);
        int requeued = done.json().get("requeued").asInt();
        assertThat(requeued).as(done.body()).isBetween(1, ids.length - 1);
        assertThat(done.json().get("remaining").asInt()).as(done.body()).isEqualTo(ids.length - requeued);
        long dead = java.util.Arrays.stream(ids).filter(id -> "DEAD".equals(rows.status(Long.toString(id)))).count();
        assertThat(dead).as("the rows not started are left as they were").isEqualTo(ids.length - requeued);
    }

    /**
     * A bulk requeue of FAILED rows meets a row that went DEAD since it was chosen (its last attempt failed, its DEAD
     * reply owed): skipped. Requeued as any DEAD or FAILED row, its DEAD reply was withdrawn, five more attempts were
     * charged and the audit said "from DEAD" for a call that asked for FAILED rows.
     */
    @Test
    void aBulkRequeueSkipsARowWhoseStatusChangedFromTheOneItChose() {
        String prefix = uniqueSubject("RQ-MOVED") + "-";
        long moved = aged(prefix + "1", "FAILED", 1);
        long kept = aged(prefix + "2", "FAILED", 1);
        mock("mock:requeue-row").whenExchangeReceived(1, e -> jdbc.update("UPDATE inbox_message SET status = 'DEAD', "
                + "attempts = 5, reply_status = 'PENDING', reply_reason_code = 'DEAD', reply_reason = 'system error', "
                + "reply_updated_at = now() WHERE id = ?", moved));

        Reply done = bulk("{\"status\":\"FAILED\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false,\"limit\":2}");

        assertThat(done.status()).as(done.body()).isEqualTo(200);
        assertThat(done.json().get("ids")).extracting(JsonNode::asText).containsExactly(Long.toString(kept));
        assertThat(rows.row(Long.toString(moved))).containsEntry("status", "DEAD").containsEntry("reply_status", "PENDING");
        assertThat(audits(moved)).isZero();
        assertThat(rows.status(Long.toString(kept))).isEqualTo("RECEIVED");
    }

    /** The database gone part-way through a bulk requeue: 503, as for every operator call while it is unavailable. */
    @Test
    void aBulkRequeueThatLosesTheDatabaseAnswers503() {
        String prefix = uniqueSubject("RQ-GONE") + "-";
        long dead = aged(prefix + "1", "DEAD", 1);
        mock("mock:requeue-row").whenExchangeReceived(1, e -> {
            throw new java.sql.SQLTransientConnectionException("connection lost", "08006");
        });

        Reply gone = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false}");

        assertThat(gone.status()).as(gone.body()).isEqualTo(503);
        assertThat(gone.json().path("error").asText()).as(gone.body()).isEqualTo("inbox temporarily unavailable; please retry");
        assertThat(rows.status(Long.toString(dead))).isEqualTo("DEAD");
        await().atMost(Duration.ofSeconds(10)).until(() -> paced.pending() == 0);
    }

    /**
     * Events still queued when the pod stops are dropped, not published at the pace until Camel's shutdown
     * timeout: their rows are RECEIVED, the redelivery job republishes them.
     */
    @Test
    void eventsStillQueuedWhenThePublisherStopsAreDroppedNotWaitedFor() throws Exception {
        long started = System.nanoTime();
        for (int i = 0; i < 40; i++) { // 4 s of events at 10/s
            template.sendBody("seda:inbox-requeue-publish?queue=#bulkRequeueEvents&purgeWhenStopping=true",
                    new com.hospital.surveyinbox.inbox.InboxEvent("99999999" + i, "NO-SUCH-ROW", "SEND"));
        }
        try {
            camel.getRouteController().stopRoute("inbox-requeue-publish");
            long tookMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

            // what the pace let through while the test ran (one every 100 ms; a loaded machine takes longer), never all 40
            assertThat(mock("mock:kafka").getReceivedCounter()).isLessThanOrEqualTo(2 + (int) (tookMillis / 100)).isLessThan(40);
            assertThat(paced.pending()).isZero();
        } finally {
            camel.getRouteController().startRoute("inbox-requeue-publish");
        }
    }

    /** A bulk requeue is a JSON object: any other body or type is refused and changes nothing. */
    @Test
    void aBulkRequeueThatIsNotJsonChangesNothing() {
        String prefix = uniqueSubject("RQ-TYPE") + "-";
        long dead = aged(prefix + "1", "DEAD", 1);
        String filter = "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false}";

        Reply xml = client.post("/ops/inbox/requeue", filter.getBytes(StandardCharsets.UTF_8), "application/xml",
                ServiceClient.OPS_AUTH, Map.of());
        Reply broken = bulk("{\"status\":\"DEAD\",");
        Reply quoted = bulk("\"" + filter.replace("\"", "\\\"") + "\"");

        assertThat(xml.status()).as(xml.body()).isEqualTo(415);
        assertThat(broken.status()).as(broken.body()).isEqualTo(400);
        assertThat(broken.json().get("error").asText()).startsWith("a JSON object with only the fields");
        assertThat(quoted.status()).as(quoted.body()).isEqualTo(400);
        assertThat(rows.status(Long.toString(dead))).isEqualTo("DEAD");
        assertThat(audits(dead)).isZero();
        assertThat(bulk(filter).json().get("requeued").asInt()).isOne();
    }

    /**
     * A bulk request PostgreSQL could not run (a NUL in a filter text, a time past its calendar) is a 400, as is a
     * key sent twice: {@code "dryRun":true,"dryRun":false} was read as its last value and requeued for real.
     */
    @Test
    void aBulkRequeueThatCannotBeOneIsRefusedAndChangesNothing() {
        String prefix = uniqueSubject("RQ-BAD") + "-";
        long dead = aged(prefix + "1", "DEAD", 1);
        String filter = "\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\"";
        for (String bad : List.of(
                "{" + filter + ",\"dryRun\":true,\"dryRun\":false}",
                "{" + filter + ",\"dryRun\":false} {}",
                "{" + filter + ",\"dryRun\":false,\"lastErrorContains\":\"a\\u0000b\"}",
                "{" + filter + ",\"dryRun\":false,\"lastErrorCode\":\"A\\nB\"}",
                "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\\u0000\",\"dryRun\":false}",
                "{" + filter + ",\"dryRun\":false,\"lastErrorContains\":\"\\uD800\"}",
                "{" + filter + ",\"dryRun\":false,\"receivedFrom\":\"+300000-01-01T00:00Z\"}",
                "{" + filter + ",\"dryRun\":false,\"receivedTo\":\"-5000-01-01T00:00Z\"}")) {
            Reply refused = bulk(bad);

            assertThat(refused.status()).as(bad + " -> " + refused.body()).isEqualTo(400);
            assertThat(refused.json().get("error").asText()).as(bad).isNotBlank();
        }
        assertThat(rows.status(Long.toString(dead))).isEqualTo("DEAD");
        assertThat(audits(dead)).isZero();
        assertThat(eventsOf(dead)).isZero();
        // the operator's list refuses a NUL in its subject filter too (a 500 before)
        for (String subject : List.of("a%00b", "%00")) {
            Reply list = client.ops("/ops/inbox?srvyDrawupNo=" + subject);
            assertThat(list.status()).as(subject + " -> " + list.body()).isEqualTo(400);
            assertThat(list.json().get("error").asText()).startsWith("srvyDrawupNo must not contain");
        }
        assertThat(bulk("{" + filter + ",\"dryRun\":false}").json().get("requeued").asInt()).isOne();
    }

    /**
     * The operator API reads at most 16 KiB of a body, declared or streamed (chunked: no Content-Length), and
     * answers 413 without running the route; a body just under the cap is read as usual.
     */
    @Test
    void aBulkRequeueBodyOverTheCapIsRefusedUnread() {
        String prefix = uniqueSubject("RQ-BIG") + "-";
        long dead = aged(prefix + "1", "DEAD", 1);
        String filter = "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false}";
        int cap = com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES;
        byte[] over = (filter + " ".repeat(cap + 1 - filter.length())).getBytes(StandardCharsets.UTF_8);
        java.util.function.Supplier<java.io.InputStream> chunks = () -> new java.io.ByteArrayInputStream(over);

        Reply declared = client.post("/ops/inbox/requeue", over, "application/json", ServiceClient.OPS_AUTH, Map.of());
        Reply streamed = client.send(java.net.http.HttpRequest.newBuilder(client.uri("/ops/inbox/requeue"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .header("Authorization", ServiceClient.OPS_AUTH)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(chunks)).build());

        assertThat(List.of(declared, streamed)).allSatisfy(reply -> {
            assertThat(reply.status()).as(reply.body()).isEqualTo(413);
            assertThat(reply.json().get("error").asText()).isEqualTo("body larger than " + cap + " bytes");
        });
        assertThat(rows.status(Long.toString(dead))).isEqualTo("DEAD");
        assertThat(audits(dead)).isZero();
        byte[] under = (filter + " ".repeat(cap - filter.length())).getBytes(StandardCharsets.UTF_8);
        Reply read = client.post("/ops/inbox/requeue", under, "application/json", ServiceClient.OPS_AUTH, Map.of());
        assertThat(read.status()).as(read.body()).isEqualTo(200);
        assertThat(read.json().get("requeued").asInt()).isOne();
    }

    /**
     * A bulk search in lastError matches the text operators see (masked): matched on the stored text, a row stored
     * before the mask learnt a wording answered a dry run for what its answer hides — a phone number confirmed digit
     * by digit through the count — and text copied from the masked answer matched nothing.
     */
    @Test
    void aSearchedErrorTextIsMatchedAsOperatorsSeeIt() {
        String prefix = uniqueSubject("RQ-MASKED") + "-";
        long dead = aged(prefix + "1", "DEAD", 1);
        jdbc.update("UPDATE inbox_message SET last_error = 'patient 010-1234-5678 not found' WHERE id = ?", dead);
        String shown = client.ops("/ops/inbox/" + dead).json().get("lastError").asText();
        assertThat(shown).startsWith("patient ").endsWith(" not found").doesNotContain("1234");
        String filter = "\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\"";
        for (String hidden : List.of("010-1234-5678", "010-1", "patient 010", "5678 not")) {
            Reply probe = bulk("{" + filter + ",\"lastErrorContains\":\"" + hidden + "\"}");
            assertThat(probe.status()).as(probe.body()).isEqualTo(200);
            assertThat(probe.json().get("matching").asLong()).as(hidden).isZero();
        }
        Reply copied = bulk("{" + filter + ",\"lastErrorContains\":\"" + shown + "\"}");
        assertThat(copied.json().get("matching").asLong()).isOne();
        // what a call takes by default (the console confirms no more): min(100, bulk-requeue-max)
        assertThat(copied.json().get("takesPerCall").asInt()).isEqualTo(Math.min(100, properties.getInbox().getBulkRequeueMax()));
        assertThat(copied.json().get("firstIds")).extracting(com.fasterxml.jackson.databind.JsonNode::asText)
                .containsExactly(Long.toString(dead));
        Reply requeued = bulk("{" + filter + ",\"lastErrorContains\":\"not found\",\"dryRun\":false}");
        assertThat(requeued.json().get("ids")).extracting(com.fasterxml.jackson.databind.JsonNode::asText)
                .containsExactly(Long.toString(dead));
        assertThat(rows.status(Long.toString(dead))).isNotEqualTo("DEAD");
    }

    /** A searched text more rows hold than are masked for one call is a 400 asking for a narrower search. */
    @Test
    void aSearchedErrorTextTooManyRowsHoldIsRefused() {
        String prefix = uniqueSubject("RQ-BROAD") + "-";
        deadRows(jdbc, prefix, 10001, "broad failure");
        try {
            Reply broad = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix
                    + "\",\"lastErrorContains\":\"broad\",\"dryRun\":false}");
            assertThat(broad.status()).as(broad.body()).isEqualTo(400);
            assertThat(broad.json().get("error").asText()).startsWith("more than 10000 rows hold the lastErrorContains text");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE starts_with(srvy_drawup_no, ?)"
                    + " AND status = 'DEAD'", Long.class, prefix)).isEqualTo(10001L);
            // narrowed, it is answered
            Reply narrow = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix
                    + "1000\",\"lastErrorContains\":\"broad\"}");
            assertThat(narrow.json().get("matching").asLong()).isEqualTo(3L); // 1000, 10000, 10001
        } finally {
            jdbc.update("DELETE FROM inbox_message WHERE starts_with(srvy_drawup_no, ?)", prefix);
        }
    }

    /**
     * A DEAD backlog past the count's cap: the dry run counts up to 100,000 and says there are more (countCapped), the rows it
     * names being the oldest. Counted in full, the count read every matching row on each dry run: a backlog of a few
     * hundred thousand ran past the statement bound and answered 503 at every retry.
     */
    @Test
    void aBacklogPastTheCountsCapIsCountedUpToItAndSaysSo() {
        String prefix = uniqueSubject("RQ-CAP") + "-";
        // written and removed past the pool's statement bound (a 100,000-row delete took longer than it on a busy machine)
        org.springframework.jdbc.core.JdbcTemplate unbounded = new org.springframework.jdbc.core.JdbcTemplate(
                com.hospital.surveyinbox.support.EmbeddedServices.get().dataSource());
        deadRows(unbounded, prefix, 100001, "backlog");
        try {
            Reply capped = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\"}");
            assertThat(capped.status()).as(capped.body()).isEqualTo(200);
            assertThat(capped.json().get("matching").asLong()).isEqualTo(100_000L);
            assertThat(capped.json().get("countCapped").asBoolean()).isTrue();
            long oldest = jdbc.queryForObject("SELECT min(id) FROM inbox_message WHERE starts_with(srvy_drawup_no, ?)",
                    Long.class, prefix);
            assertThat(capped.json().get("firstIds").get(0).asText()).isEqualTo(Long.toString(oldest));
            assertThat(capped.json().get("firstIds")).hasSize(20);

            // exactly at the cap: all counted, nothing more
            jdbc.update("DELETE FROM inbox_message WHERE srvy_drawup_no = ?", prefix + "1");
            Reply atCap = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\"}");
            assertThat(atCap.json().get("matching").asLong()).isEqualTo(100_000L);
            assertThat(atCap.json().get("countCapped").asBoolean()).isFalse();

            Reply under = bulk("{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "1000\"}");
            assertThat(under.json().get("matching").asLong()).isEqualTo(13L); // 1000, 10000-10009, 100000, 100001
            assertThat(under.json().get("countCapped").asBoolean()).isFalse();
        } finally {
            unbounded.update("DELETE FROM inbox_message WHERE starts_with(srvy_drawup_no, ?)", prefix);
        }
    }

    /** {@code count} DEAD rows, subjects {@code prefix}1 to {@code prefix}{@code count}, each with {@code lastError}. */
    private static void deadRows(org.springframework.jdbc.core.JdbcTemplate jdbc, String prefix, int count, String lastError) {
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, last_error)"
                + " SELECT ? || g, 'SEND', 'DEAD', 5, ? FROM generate_series(1, ?) g", prefix, lastError, count);
    }

    private Reply bulk(String json) {
        return client.post("/ops/inbox/requeue", json.getBytes(StandardCharsets.UTF_8), "application/json",
                ServiceClient.OPS_AUTH, Map.of());
    }

    /**
     * inbox-abandon-reply: a reply the legacy system keeps refusing is given up once, audited; the row then owes
     * nothing (replyStatus NONE, audited once), keeping what was owed. Nothing owed: 409.
     */
    @Test
    void anOperatorAbandonsAnOwedReplyOnce() {
        long id = aged(uniqueSubject("RQ-ABANDON"), "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', reply_attempts = 3, "
                + "reply_failures = 3, reply_last_error = 'legacy answered HTTP 400' WHERE id = ?", id);

        Reply abandoned = client.opsPost("/ops/inbox/" + id + "/reply/abandon");

        assertThat(abandoned.status()).as(abandoned.body()).isEqualTo(200);
        assertThat(abandoned.json().get("replyStatus").asText()).isEqualTo("NONE");
        assertThat(jdbc.queryForMap("SELECT reply_status, reply_reason_code, reply_last_error FROM inbox_message WHERE id = ?", id))
                .containsEntry("reply_status", "NONE").containsEntry("reply_reason_code", "NOTIFY_SKIPPED")
                .containsEntry("reply_last_error", "abandoned by an operator");
        assertThat(jdbc.queryForMap("SELECT actor, action, from_status, to_status FROM operator_audit WHERE inbox_id = ?", id))
                .containsEntry("action", "ABANDON_REPLY").containsEntry("from_status", "FAILED").containsEntry("to_status", "NONE")
                .containsEntry("actor", "ops");
        Reply again = client.opsPost("/ops/inbox/" + id + "/reply/abandon");
        assertThat(again.status()).as(again.body()).isEqualTo(409);
        assertThat(again.json().get("replyStatus").asText()).isEqualTo("NONE");
        assertThat(audits(id)).isOne();
        assertThat(client.opsPost("/ops/inbox/999999999999/reply/abandon").status()).isEqualTo(404);
    }

    /**
     * inbox-retry-reply: once the legacy endpoint is fixed, a FAILED reply waiting out its backoff (up to an hour) is
     * made due now, audited, keeping its status and failures (still failing until delivered); the next redelivery tick
     * sends it. A reply being sent, delivered or not owed: 409; no row: 404.
     */
    @Test
    void anOperatorSendsAFailedReplyAgainAtTheNextTick() {
        long id = aged(uniqueSubject("RQ-RETRY"), "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', reply_attempts = 6, "
                + "reply_failures = 6, reply_last_error = 'legacy answered HTTP 503', reply_updated_at = now() WHERE id = ?", id);
        long failingBefore = repository.failingReplies();

        Reply retried = client.opsPost("/ops/inbox/" + id + "/reply/retry");

        assertThat(retried.status()).as(retried.body()).isEqualTo(200);
        assertThat(retried.json().get("replyStatus").asText()).isEqualTo("FAILED");
        assertThat(jdbc.queryForMap("SELECT reply_status, reply_failures, reply_reason_code FROM inbox_message WHERE id = ?", id))
                .containsEntry("reply_status", "FAILED").containsEntry("reply_failures", 6).containsEntry("reply_reason_code", "NOTIFY_SKIPPED");
        assertThat(jdbc.queryForMap("SELECT actor, action, from_status, to_status FROM operator_audit WHERE inbox_id = ?", id))
                .containsEntry("action", "RETRY_REPLY").containsEntry("from_status", "FAILED").containsEntry("to_status", "FAILED")
                .containsEntry("actor", "ops");
        // still failing until it is delivered: the reply alert clears then, not when an operator asks
        assertThat(repository.failingReplies()).isEqualTo(failingBefore);

        jdbc.update("UPDATE inbox_message SET reply_status = 'SENDING' WHERE id = ?", id);
        Reply sending = client.opsPost("/ops/inbox/" + id + "/reply/retry");
        assertThat(sending.status()).as(sending.body()).isEqualTo(409);
        assertThat(sending.json().get("replyStatus").asText()).isEqualTo("SENDING");
        jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id);
        assertThat(client.opsPost("/ops/inbox/" + id + "/reply/retry").status()).isEqualTo(409);
        assertThat(audits(id)).isOne();
        assertThat(client.opsPost("/ops/inbox/999999999999/reply/retry").status()).isEqualTo(404);

        // with a production retry-delay (1 min) and its backoff (after 6 failures 32 min): tried 10 minutes ago, past
        // the retry delay but within the backoff, then due at the next tick once retried (the job's own statement decides)
        long other = aged(uniqueSubject("RQ-RETRY2"), "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', reply_attempts = 6, "
                + "reply_failures = 6, reply_updated_at = now() - INTERVAL '10 minutes' WHERE id = ?", other);
        Map<String, Object> owed = Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 100_000);
        java.util.function.Supplier<Boolean> due = () -> template.requestBody(
                "sql:classpath:sql/find-owed-replies.sql?parametersCount=7", owed, List.class).stream()
                .anyMatch(r -> ((Number) ((Map<?, ?>) r).get("id")).longValue() == other);
        assertThat(due.get()).as("waiting out its backoff").isFalse();
        template.requestBody("sql:classpath:sql/retry-reply.sql?outputType=SelectOne&parametersCount=3",
                Map.of("id", other, "actor", "ops", "dueAfterMillis", 3_600_000L));
        assertThat(due.get()).as("due at the next tick").isTrue();
    }

    /**
     * inbox-retry-replies: after the legacy endpoint was down a while, every FAILED reply waiting out its backoff is made
     * due at once (audited, status and failures kept), not one call per row; a reply already due, a PENDING one (it
     * waits retry-delay at most) and a row locked right now are not taken (the locked one by the next call); a second
     * call takes nothing twice.
     */
    @Test
    void anOperatorSendsEveryFailedReplyWaitingOutItsBackoffAgainAtTheNextTick() throws Exception {
        String prefix = uniqueSubject("RQ-RETRYALL");
        long tenMinutes = failedReply(prefix + "-1", "10 minutes");
        long halfAnHour = failedReply(prefix + "-2", "30 minutes");
        long locked = failedReply(prefix + "-3", "5 minutes");
        long alreadyDue = failedReply(prefix + "-4", "2 hours");
        long pending = aged(prefix + "-5", "DEAD", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'PENDING', reply_reason_code = 'DEAD', reply_updated_at = now() "
                + "WHERE id = ?", pending);
        Map<Long, Object> untouched = Map.of(alreadyDue, lastTry(alreadyDue), pending, lastTry(pending));
        assertThat(List.of(tenMinutes, halfAnHour, locked)).as("waiting out their backoff").noneMatch(this::dueAtTheNextTick);

        Reply first;
        try (java.sql.Connection holder = jdbc.getDataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (java.sql.Statement lock = holder.createStatement()) {
                lock.executeQuery("SELECT id FROM inbox_message WHERE id = " + locked + " FOR UPDATE").close();
            }
            first = client.opsPost("/ops/inbox/replies/retry");
            holder.commit();
        }

        assertThat(first.status()).as(first.body()).isEqualTo(200);
        assertThat(first.json().get("retried").asLong()).isGreaterThanOrEqualTo(2);
        assertThat(first.json().get("limit").asInt()).isEqualTo(500); // adapter.inbox.bulk-requeue-max
        assertThat(List.of(tenMinutes, halfAnHour)).allMatch(this::dueAtTheNextTick);
        assertThat(dueAtTheNextTick(locked)).isFalse();
        for (long id : List.of(tenMinutes, halfAnHour)) {
            assertThat(jdbc.queryForMap("SELECT reply_status, reply_failures FROM inbox_message WHERE id = ?", id))
                    .containsEntry("reply_status", "FAILED").containsEntry("reply_failures", 6);
            assertThat(jdbc.queryForMap("SELECT actor, action, from_status, to_status FROM operator_audit WHERE inbox_id = ?", id))
                    .containsEntry("action", "RETRY_REPLY").containsEntry("from_status", "FAILED")
                    .containsEntry("to_status", "FAILED").containsEntry("actor", "ops");
        }
        untouched.forEach((id, before) -> {
            assertThat(lastTry(id)).as("row %s", id).isEqualTo(before);
            assertThat(audits(id)).isZero();
        });

        Reply second = client.opsPost("/ops/inbox/replies/retry");
        assertThat(second.status()).as(second.body()).isEqualTo(200);
        assertThat(dueAtTheNextTick(locked)).isTrue();
        assertThat(List.of(tenMinutes, halfAnHour, locked)).allSatisfy(id -> assertThat(audits(id)).isOne());
    }

    /** A COMPLETED row owing a reply the legacy system refused 6 times, the last {@code ago}. */
    private long failedReply(String subject, String ago) {
        long id = aged(subject, "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', reply_attempts = 6, "
                + "reply_failures = 6, reply_last_error = 'legacy answered HTTP 503', reply_updated_at = now() - CAST(? AS INTERVAL) "
                + "WHERE id = ?", ago, id);
        return id;
    }

    private Object lastTry(long id) {
        return jdbc.queryForObject("SELECT reply_updated_at FROM inbox_message WHERE id = ?", Object.class, id);
    }

    /** Whether the redelivery job's own statement takes the row's reply at its next tick, with production delays. */
    private boolean dueAtTheNextTick(long id) {
        Map<String, Object> owed = Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 100_000);
        return template.requestBody("sql:classpath:sql/find-owed-replies.sql?parametersCount=7", owed, List.class).stream()
                .anyMatch(r -> ((Number) ((Map<?, ?>) r).get("id")).longValue() == id);
    }

    /**
     * Abandoning the reply of a row whose payload retention removed takes the kept reason with it (it was kept only
     * because it was owed), and the row, with its audit entry, is not removed by the next night's retention.
     */
    @Test
    void anAbandonedReplysRowKeepsItsAuditAndLosesItsKeptReason() {
        long id = aged(uniqueSubject("RQ-OLDREPLY"), "DEAD", 400);
        jdbc.update("UPDATE inbox_message SET reply_status = 'FAILED', reply_reason_code = 'DEAD', reply_reason = 'form F9 is not registered', "
                + "redacted_at = now() - interval '300 days', payload = NULL WHERE id = ?", id);

        // a row as old with nothing owed: retention removes it, which shows its ticks reached rows of that age
        long control = aged(uniqueSubject("RQ-OLDGONE"), "DEAD", 400);
        jdbc.update("UPDATE inbox_message SET redacted_at = now() - interval '300 days', payload = NULL WHERE id = ?", control);

        assertThat(client.opsPost("/ops/inbox/" + id + "/reply/abandon").status()).isEqualTo(200);
        for (int run = 0; run < 20 && exists(control); run++) {
            org.apache.camel.builder.NotifyBuilder done = new org.apache.camel.builder.NotifyBuilder(camel)
                    .fromRoute("inbox-retention").whenDone(1).create();
            template.sendBody("direct:retention-tick", null);
            assertThat(done.matches(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        assertThat(exists(control)).as("the row as old with nothing owed, removed").isFalse();

        assertThat(jdbc.queryForObject("SELECT reply_reason FROM inbox_message WHERE id = ?", String.class, id))
                .isEqualTo("(removed with the payload)");
        assertThat(audits(id)).as("the abandonment stays on record").isOne();
    }

    private boolean exists(long id) {
        return jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE id = ?", Long.class, id) == 1;
    }

    @Autowired
    com.hospital.surveyinbox.processing.ProcessingRecord processingRecord;

    /** After an abandon and a requeue, the row dying again owes a new reply, without the abandonment's text. */
    @Test
    void aNewObligationStartsWithoutTheAbandonedOnesError() {
        String subject = uniqueSubject("RQ-AGAIN");
        long id = aged(subject, "PROCESSING", 1);
        java.util.UUID token = java.util.UUID.randomUUID();
        jdbc.update("UPDATE inbox_message SET reply_status = 'NONE', reply_reason_code = 'DEAD', reply_last_error = 'abandoned by an operator', "
                + "attempts = 5, claim_token = ? WHERE id = ?", token, id);

        String status = new com.hospital.surveyinbox.support.RowOutcomes(template, processingRecord).fail(
                new com.hospital.surveyinbox.inbox.ClaimedRow(id, subject, "SEND", new byte[0], 5, token), "patient not registered");

        assertThat(status).isEqualTo("DEAD");
        assertThat(jdbc.queryForMap("SELECT reply_status, reply_last_error FROM inbox_message WHERE id = ?", id))
                .containsEntry("reply_status", "PENDING").containsEntry("reply_last_error", null);
    }

    /**
     * The same when a lost worker's last attempt is reset to DEAD by the redelivery job: the new DEAD reply showed the
     * abandoned one's "abandoned by an operator" until its first try.
     */
    @Test
    void aDeadReplyOpenedByTheStuckResetStartsWithoutTheAbandonedOnesError() {
        String subject = uniqueSubject("RQ-STUCKAGAIN");
        long id = aged(subject, "PROCESSING", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'NONE', reply_reason_code = 'DEAD', reply_last_error = 'abandoned by an operator', "
                + "attempts = 5, claim_token = ? WHERE id = ?", java.util.UUID.randomUUID(), id);

        List<?> reset = template.requestBody("sql:classpath:sql/reset-stuck-rows.sql?parametersCount=10", Map.of(
                "batch", 200, "maxAttempts", 5, "retryDelayMillis", 60_000, "stuckAfterMillis", 60_000), List.class);

        assertThat(reset).map(r -> (Map<?, ?>) r).anySatisfy(r -> assertThat(r.get("inboxId")).isEqualTo(id));
        assertThat(jdbc.queryForMap("SELECT status, reply_status, reply_last_error FROM inbox_message WHERE id = ?", id))
                .containsEntry("status", "DEAD").containsEntry("reply_status", "PENDING").containsEntry("reply_last_error", null);
    }

    /** A reply abandoned while it was on the wire, that got through, is recorded SENT: the legacy system has it. */
    @Test
    void aReplyAbandonedOnTheWireThatGotThroughIsRecordedSent() {
        long id = aged(uniqueSubject("RQ-WIRE"), "COMPLETED", 1);
        jdbc.update("UPDATE inbox_message SET reply_status = 'SENDING', reply_reason_code = 'ALREADY_SUBMITTED', reply_attempts = 2 "
                + "WHERE id = ?", id);
        assertThat(client.opsPost("/ops/inbox/" + id + "/reply/abandon").status()).isEqualTo(200);

        template.sendBody("sql:classpath:sql/mark-reply-sent.sql?parametersCount=2", Map.of("id", id, "replyAttempt", 2));

        assertThat(jdbc.queryForObject("SELECT reply_status FROM inbox_message WHERE id = ?", String.class, id)).isEqualTo("SENT");
    }

    private long audits(long id) {
        return jdbc.queryForObject("SELECT count(*) FROM operator_audit WHERE inbox_id = ?", Long.class, id);
    }

    /** Events of the row that reached the broker's stand-in. */
    private long eventsOf(long id) {
        return mock("mock:kafka").getExchanges().stream().map(Exchange::getMessage)
                .filter(m -> m.getBody(String.class).contains("\"inboxId\":\"" + id + "\"")).count();
    }
}
