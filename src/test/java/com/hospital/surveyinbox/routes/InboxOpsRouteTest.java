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
import org.springframework.beans.factory.annotation.Autowired;

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
        // a misspelt or unknown filter is refused, never answered as the unfiltered newest rows; its name not echoed
        for (String unknown : List.of("stauts=DEAD", "subject=X", "status=DEAD&Limit=5", "%3Cb%3E=1")) {
            Reply refused = client.ops("/ops/inbox?" + unknown);
            assertThat(refused.status()).as(unknown).isEqualTo(400);
            assertThat(refused.json().get("error").asText()).as(unknown)
                    .isEqualTo("unknown query parameter; the list's are status, srvyDrawupNo, replyStatus, limit, before");
        }
        assertThat(client.ops("/ops/inbox?status=DEAD&replyStatus=FAILED&limit=5&before=9&srvyDrawupNo=x").status()).isEqualTo(200);
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
     * A read carries no body: one sent anyway is refused unread, whatever its size (platform-http read any body into
     * memory whole before the route ran, so a GET with a body of gigabytes, an operator's credential, a port-forward,
     * filled the heap of a pod that exits on OutOfMemoryError; sent slowly, it held a request thread). Declared or
     * streamed, on GET or HEAD: 400 before the route; a read without a body is served as usual.
     */
    @Test
    void aReadWithABodyIsRefusedUnread() {
        long id = stored(uniqueSubject("OPS-BODY"));
        byte[] over = new byte[com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES + 1];
        java.util.Arrays.fill(over, (byte) 'x');
        for (byte[] body : List.of(over, new byte[] {'x'})) {
            for (String path : List.of("/ops/inbox/" + id, "/ops/inbox?limit=1")) {
                for (String method : List.of("GET", "HEAD")) {
                    Reply declared = client.send(HttpRequest.newBuilder(client.uri(path)).header("Authorization", ServiceClient.OPS_AUTH)
                            .method(method, HttpRequest.BodyPublishers.ofByteArray(body)).build());
                    Reply streamed = client.send(HttpRequest.newBuilder(client.uri(path)).header("Authorization", ServiceClient.OPS_AUTH)
                            .method(method, HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(body))).build());
                    assertThat(List.of(declared, streamed)).as(method + " " + path + " " + body.length).allSatisfy(reply ->
                            assertThat(reply.status()).as(reply.body()).isEqualTo(400));
                    if (method.equals("GET")) {
                        assertThat(declared.json().get("error").asText()).isEqualTo("a read carries no body");
                    }
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
                "/ops/inbox/" + id + "/reply/abandon", "/ops/inbox/replies/retry")) {
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
     * The operator API serves at most adapter.security.ops-max-writes-in-flight writes (2) at once per pod, apart from
     * its reads: one more write is answered 503 with Retry-After at once while reads are still served, and once the
     * writes finish the API takes writes again. Nothing bounded it: each request holds a request thread and most a
     * main-pool connection (here bulk requeues held before their first row).
     */
    @Test
    void theOperatorApiServesABoundedNumberOfWritesAtOnceApartFromItsReads() throws Exception {
        com.hospital.surveyinbox.config.OpsAdmissionFilter admission = opsAdmission.getFilter();
        int limit = adapterProperties.getSecurity().getOpsMaxWritesInFlight();
        String prefix = uniqueSubject("OPS-BUSY") + "-";
        for (int i = 0; i <= limit; i++) {
            long id = stored(prefix + i);
            jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", id);
        }
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        mock("mock:requeue-row").whenAnyExchangeReceived(e -> release.await(30, java.util.concurrent.TimeUnit.SECONDS));
        String bulk = "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"" + prefix + "\",\"dryRun\":false,\"limit\":1}";
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(limit);
        try {
            List<java.util.concurrent.Future<Reply>> writing = new ArrayList<>();
            for (int i = 0; i < limit; i++) {
                writing.add(pool.submit(() -> client.post("/ops/inbox/requeue", bulk.getBytes(StandardCharsets.UTF_8),
                        "application/json", ServiceClient.OPS_AUTH, java.util.Map.of())));
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> admission.writesInFlight() == limit);

            Reply busy = client.post("/ops/inbox/requeue", bulk.getBytes(StandardCharsets.UTF_8), "application/json",
                    ServiceClient.OPS_AUTH, java.util.Map.of());
            Reply read = client.get("/ops/inbox/stats", ServiceClient.VIEWER_AUTH);

            assertThat(busy.status()).as(busy.body()).isEqualTo(503);
            assertThat(busy.header("Retry-After")).isEqualTo("2");
            assertThat(busy.json().get("error").asText()).isEqualTo("operator API busy: " + limit + " writes under way on this pod; please retry");
            assertThat(read.status()).as("reads have their own room").isEqualTo(200);
            release.countDown();
            assertThat(writing).allSatisfy(reply -> assertThat(reply.get().status()).isEqualTo(200));
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        // the answer can reach the client before the request thread is back in the filter
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> admission.writesInFlight() == 0);
        Reply after = client.post("/ops/inbox/requeue", bulk.getBytes(StandardCharsets.UTF_8), "application/json",
                ServiceClient.OPS_AUTH, java.util.Map.of());
        assertThat(after.status()).as(after.body()).isEqualTo(200);
    }

    @Autowired
    org.springframework.boot.web.servlet.FilterRegistrationBean<com.hospital.surveyinbox.config.OpsAdmissionFilter> opsAdmission;

    @Autowired
    com.hospital.surveyinbox.config.AdapterProperties adapterProperties;

    /** Reads are bounded the same way: adapter.security.ops-max-in-flight (6) at once, one more answered 503. */
    @Test
    void theOperatorApiServesABoundedNumberOfReadsAtOnce() throws Exception {
        assertThat(opsAdmission.getUrlPatterns()).containsExactlyInAnyOrder("/ops/inbox", "/ops/inbox/*");
        com.hospital.surveyinbox.config.OpsAdmissionFilter filter = opsAdmission.getFilter();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        int limit = adapterProperties.getSecurity().getOpsMaxInFlight();
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(limit);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(limit);
        try {
            for (int i = 0; i < limit; i++) {
                pool.submit(() -> {
                    filter.doFilter(new org.springframework.mock.web.MockHttpServletRequest("GET", "/ops/inbox"),
                            new org.springframework.mock.web.MockHttpServletResponse(), (request, response) -> {
                                entered.countDown();
                                try {
                                    release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            });
                    return null;
                });
            }
            assertThat(entered.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            org.springframework.mock.web.MockHttpServletResponse refused = new org.springframework.mock.web.MockHttpServletResponse();
            filter.doFilter(new org.springframework.mock.web.MockHttpServletRequest("GET", "/ops/inbox"), refused,
                    (request, response) -> { throw new AssertionError("a read beyond the bound was let through"); });
            assertThat(refused.getStatus()).isEqualTo(503);
            assertThat(refused.getContentAsString()).contains("operator API busy: " + limit + " reads under way on this pod");
            // a write still has its own room
            org.springframework.mock.web.MockHttpServletResponse write = new org.springframework.mock.web.MockHttpServletResponse();
            boolean[] passed = {false};
            filter.doFilter(new org.springframework.mock.web.MockHttpServletRequest("POST", "/ops/inbox/requeue"), write,
                    (request, response) -> passed[0] = true);
            assertThat(passed[0]).isTrue();
        } finally {
            release.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        boolean[] again = {false};
        filter.doFilter(new org.springframework.mock.web.MockHttpServletRequest("GET", "/ops/inbox"),
                new org.springframework.mock.web.MockHttpServletResponse(), (request, response) -> again[0] = true);
        assertThat(again[0]).isTrue();
    }

    private static String encoded(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
