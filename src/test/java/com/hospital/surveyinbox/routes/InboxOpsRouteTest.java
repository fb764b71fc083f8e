package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The route kit for {@code routes/inbox-ops.camel.yaml} (shared setup: {@link RouteKit}): the operator reads over
 * {@code jpa:}. camel-jpa evaluates String parameter values as Simple; the route writes those values itself
 * ({@code ${header.srvyDrawupNo}}), so what an operator types is searched as text and never run.
 */
class InboxOpsRouteTest extends RouteKit {

    @Test
    void aFilterThatLooksLikeAnExpressionIsSearchedAsText() {
        String tail = uniqueSubject("-ops");
        String home = System.getenv("HOME");
        // what each filter would become if it were evaluated: a row with that subject must not be found
        long homeDecoy = stored(home + tail);
        for (String filter : List.of("${env:HOME}" + tail, "${bean:inboxStore}" + tail,
                "${header.Authorization}" + tail, "#{systemProperties['user.home']}" + tail)) {
            long literal = stored(filter);

            JsonNode found = client.ops("/ops/inbox?srvyDrawupNo=" + encoded(filter)).json();

            assertThat(found).as(filter).singleElement().satisfies(row -> {
                assertThat(row.get("inboxId").asText()).isEqualTo(Long.toString(literal));
                assertThat(row.get("srvyDrawupNo").asText()).isEqualTo(filter);
            });
        }
        JsonNode decoy = client.ops("/ops/inbox?srvyDrawupNo=" + encoded(home + tail)).json();
        assertThat(decoy).singleElement().satisfies(row ->
                assertThat(row.get("inboxId").asText()).isEqualTo(Long.toString(homeDecoy)));
        // a status is checked against the known ones, never evaluated
        Reply status = client.ops("/ops/inbox?status=" + encoded("${env:HOME}"));
        assertThat(status.status()).isEqualTo(400);
        assertThat(status.json().get("error").asText()).startsWith("unknown status");
    }

    @Test
    void answersCarryNoRequestHeaderAndRefuseRepeatedFilters() {
        long id = stored(uniqueSubject("OPS-HDR"));
        for (String path : List.of("/ops/inbox?limit=1&srvyDrawupNo=x", "/ops/inbox/" + id, "/ops/inbox/999999999")) {
            Reply reply = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                    .header("Authorization", ServiceClient.OPS_AUTH).header("X-Probe", "echo-me").GET().build());

            assertThat(reply.status()).as(path).isIn(200, 404);
            assertThat(reply.header("Content-Type")).as(path).startsWith("application/json");
            List<String> leaked = new ArrayList<>();
            reply.headers().forEach((name, value) -> {
                if (value.contains("echo-me") || value.contains(ServiceClient.OPS_AUTH) || name.equalsIgnoreCase("srvyDrawupNo")
                        || name.equalsIgnoreCase("limit") || name.equalsIgnoreCase("inboxId") || name.startsWith("Camel")) {
                    leaked.add(name);
                }
            });
            assertThat(leaked).as(path).isEmpty();
        }
        assertThat(client.ops("/ops/inbox/" + id).json().get("inboxId").asText()).isEqualTo(Long.toString(id));
        assertThat(client.ops("/ops/inbox/999999999").json().get("error").asText()).isEqualTo("no such inbox row");
        assertThat(client.ops("/ops/inbox/not-a-row").status()).isEqualTo(404);
        Reply twice = client.ops("/ops/inbox?status=DEAD&status=FAILED");
        assertThat(twice.status()).isEqualTo(400);
        assertThat(twice.json().get("error").asText()).isEqualTo("each filter at most once");
        assertThat(client.ops("/ops/inbox?limit=501").status()).isEqualTo(400);
        // blank filters are no filters (as the console sends them)
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=&limit=").json()).isNotEmpty();
        // operators only
        assertThat(client.get("/ops/inbox", ServiceClient.LEGACY_AUTH).status()).isEqualTo(403);
        assertThat(client.get("/ops/inbox/" + id, ServiceClient.LEGACY_AUTH).status()).isEqualTo(403);
        assertThat(client.get("/ops/inbox/" + id, null).status()).isEqualTo(401);
        assertThat(client.ops("/ops/inbox?limit=x").status()).isEqualTo(400);
    }

    @Test
    void listsTheRowsWhoseReplyIsStillOwedByItsState() {
        // what SurveyInboxReplyFailures sends an operator to find: a COMPLETED row owing NOTIFY_SKIPPED is in
        // neither the DEAD nor the FAILED list
        String subject = uniqueSubject("OPS-REPLY");
        long failing = stored(subject);
        long delivered = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'FAILED', reply_reason_code = 'NOTIFY_SKIPPED', "
                + "reply_failures = 2, reply_last_error = 'legacy answered HTTP 500', reply_updated_at = now() WHERE id = ?", failing);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', reply_status = 'SENT', reply_reason_code = 'NOTIFY_SKIPPED' "
                + "WHERE id = ?", delivered);

        JsonNode owed = client.ops("/ops/inbox?replyStatus=FAILED&limit=500").json();
        assertThat(owed).isNotEmpty().allSatisfy(row -> assertThat(row.get("replyStatus").asText()).isEqualTo("FAILED"));
        assertThat(owed).anySatisfy(row -> assertThat(row.get("inboxId").asText()).isEqualTo(Long.toString(failing)));
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=" + encoded(subject) + "&replyStatus=FAILED").json())
                .singleElement().satisfies(row -> assertThat(row.get("inboxId").asText()).isEqualTo(Long.toString(failing)));
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=" + encoded(subject) + "&replyStatus=PENDING").json()).isEmpty();
        assertThat(client.ops("/ops/inbox?replyStatus=FAILED&status=DEAD&limit=500").json())
                .noneSatisfy(row -> assertThat(row.get("inboxId").asText()).isEqualTo(Long.toString(failing)));
        // only the owed states (a partial index serves them); delivered replies are every finished row
        Reply sent = client.ops("/ops/inbox?replyStatus=SENT");
        assertThat(sent.status()).isEqualTo(400);
        assertThat(sent.json().get("error").asText()).startsWith("replyStatus must be one of");
    }

    /**
     * A read carries no body, and one sent anyway is bounded as a write's: platform-http read any body into memory
     * whole before the route ran, so a GET with a body of gigabytes (an operator's credential, a port-forward) filled
     * the heap of a pod that exits on OutOfMemoryError. One byte over the cap, declared or streamed, on GET or HEAD:
     * 413 before the route; a read without a body is served as usual.
     */
    @Test
    void aReadWithABodyOverTheCapIsRefusedUnread() {
        long id = stored(uniqueSubject("OPS-BODY"));
        int cap = com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES;
        byte[] over = new byte[cap + 1];
        java.util.Arrays.fill(over, (byte) 'x');
        for (String path : List.of("/ops/inbox/" + id, "/ops/inbox?limit=1")) {
            for (String method : List.of("GET", "HEAD")) {
                Reply declared = client.send(HttpRequest.newBuilder(client.uri(path)).header("Authorization", ServiceClient.OPS_AUTH)
                        .method(method, HttpRequest.BodyPublishers.ofByteArray(over)).build());
                Reply streamed = client.send(HttpRequest.newBuilder(client.uri(path)).header("Authorization", ServiceClient.OPS_AUTH)
                        .method(method, HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(over))).build());
                assertThat(List.of(declared, streamed)).as(method + " " + path).allSatisfy(reply ->
                        assertThat(reply.status()).as(reply.body()).isEqualTo(413));
                if (method.equals("GET")) {
                    assertThat(declared.json().get("error").asText()).isEqualTo("body larger than " + cap + " bytes");
                }
            }
        }
        assertThat(client.ops("/ops/inbox/" + id).json().get("inboxId").asText()).isEqualTo(Long.toString(id));
    }

    /**
     * A viewer (adapter.security.ops-viewer: someone who looks at the console, a script polling the stats) reads what
     * operators read and changes nothing: a requeue, a bulk requeue, a reply's retry or abandon is 403 and leaves the row
     * and its audit as they were. One operator credential did everything before: every reader could requeue 500 rows
     * a call or abandon a reply the legacy system was owed.
     */
    @Test
    void aViewerReadsWhatOperatorsReadAndChangesNothing() {
        long id = stored(uniqueSubject("OPS-VIEW"));
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5, reply_status = 'FAILED', reply_reason_code = 'DEAD', "
                + "reply_updated_at = now() WHERE id = ?", id);
        for (String path : List.of("/ops/inbox", "/ops/inbox/" + id, "/ops/inbox/stats", "/ops/inbox/history?minutes=5",
                "/ops/console", "/ops/openapi.yaml")) {
            Reply read = client.get(path, ServiceClient.VIEWER_AUTH);
            assertThat(read.status()).as(path + " -> " + read.body()).isEqualTo(200);
        }
        String bulk = "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"OPS-VIEW\",\"dryRun\":false}";
        for (String path : List.of("/ops/inbox/" + id + "/requeue", "/ops/inbox/requeue", "/ops/inbox/" + id + "/reply/retry",
                "/ops/inbox/" + id + "/reply/abandon")) {
            Reply write = client.post(path, bulk.getBytes(StandardCharsets.UTF_8), "application/json", ServiceClient.VIEWER_AUTH,
                    java.util.Map.of());
            assertThat(write.status()).as(path + " -> " + write.body()).isEqualTo(403);
            assertThat(write.body()).contains("not allowed for this credential");
        }
        assertThat(jdbc.queryForMap("SELECT status, reply_status FROM inbox_message WHERE id = ?", id))
                .containsEntry("status", "DEAD").containsEntry("reply_status", "FAILED");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM operator_audit WHERE inbox_id = ?", Long.class, id)).isZero();
        // the operators' credential still writes
        assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
    }

    /**
     * The operator API serves at most adapter.security.ops-max-in-flight requests at once (8) per pod: one more is
     * answered 503 with Retry-After at once, and once they finish the API answers again. Nothing bounded it: each
     * request holds a request thread and most a main-pool connection (here requeues waiting on a row a transaction
     * holds: the permit lasts until each is answered).
     */
    @Test
    void theOperatorApiServesABoundedNumberOfRequestsAtOnce() throws Exception {
        long id = stored(uniqueSubject("OPS-BUSY"));
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", id);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try (java.sql.Connection holder = jdbc.getDataSource().getConnection();
             java.sql.Statement lock = holder.createStatement()) {
            holder.setAutoCommit(false);
            lock.execute("SELECT id FROM inbox_message WHERE id = " + id + " FOR UPDATE");
            List<java.util.concurrent.Future<Reply>> waiting = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                waiting.add(pool.submit(() -> client.opsPost("/ops/inbox/" + id + "/requeue")));
            }
            // all eight wait for the row
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%inbox_message%FOR UPDATE%'",
                    Long.class) >= 8);

            Reply busy = client.get("/ops/inbox/stats", ServiceClient.OPS_AUTH);

            assertThat(busy.status()).as(busy.body()).isEqualTo(503);
            assertThat(busy.header("Retry-After")).isEqualTo("2");
            assertThat(busy.json().get("error").asText()).startsWith("operator API busy");
            holder.rollback();
            assertThat(waiting).allSatisfy(reply -> assertThat(reply.get().status()).isIn(200, 409));
        } finally {
            pool.shutdownNow();
        }
        assertThat(client.get("/ops/inbox/stats", ServiceClient.OPS_AUTH).status()).isEqualTo(200);
    }

    private static String encoded(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
