package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code GET /ops/openapi.yaml} against the running service: every endpoint the service maps under
 * {@code /legacy} and {@code /ops} is described; every described operation and status is answered as
 * described — a request made here for each one gets that status, and a JSON answer carries every
 * {@code required} field of its schema. The statuses that need a broken database or a flood are proven
 * elsewhere ({@link #ELSEWHERE}).
 */
class OpenApiTest extends IntegrationTest {

    /** Statuses described but not provoked here, and the test that provokes each. */
    static final Map<String, String> ELSEWHERE = Map.ofEntries(
            Map.entry("POST /legacy/survey-send-info 503", "InboxUnavailableTest, SlowDatabaseReceptionTest, RateLimitTest"),
            Map.entry("POST /legacy/survey-send-info 429", "AuthFailureLimitTest"),
            Map.entry("POST /legacy/survey-send-info 500", "InboxUnavailableTest.publishesNoEventWhenTheInsertIsRolledBackAtCommit"),
            Map.entry("GET /ops/inbox 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("GET /ops/inbox/{inboxId} 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("GET /ops/inbox/stats 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("GET /ops/inbox/history 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("POST /ops/inbox/requeue 409", "RedeliveryTest.bulkRequeuesTheDeadRowsAFilterMatchesAfterADryRun"),
            Map.entry("POST /ops/inbox/requeue 503", "InboxRequeueRouteTest.aBulkRequeueThatLosesTheDatabaseAnswers503"),
            Map.entry("POST /ops/inbox/{inboxId}/requeue 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("POST /ops/inbox/{inboxId}/reply/abandon 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("POST /ops/inbox/{inboxId}/reply/retry 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"),
            Map.entry("POST /ops/inbox/replies/retry 503", "InboxUnavailableTest.answers503AndPublishesNothingWhileTheDatabaseIsStoppedThenRecovers"));

    static final String WRONG = ServiceClient.basic("ops", "not-the-password");

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    /** platform-http's routes (the reception, the REST DSL operator reads), behind the controllers. */
    @Autowired
    @Qualifier("platformHttpEngineRequestMapping")
    org.springframework.web.servlet.HandlerMapping routes;

    @Test
    @SuppressWarnings("unchecked")
    void theDescriptionMatchesTheServiceBothWays() {
        Reply served = client.ops("/ops/openapi.yaml");
        assertThat(served.status()).isEqualTo(200);
        Map<String, Object> doc = new Yaml().load(served.body());
        assertThat(doc.get("openapi").toString()).startsWith("3.1");
        Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) doc.get("paths");

        // every endpoint the service maps is described
        Set<String> mapped = new TreeSet<>();
        Set<org.springframework.web.servlet.mvc.method.RequestMappingInfo> infos = new java.util.HashSet<>(
                mappings.getHandlerMethods().keySet());
        infos.addAll(((com.hospital.surveyinbox.reception.ReceptionHttpEngine.AfterControllers) routes).routes()
                .getHandlerMethods().keySet());
        infos.forEach(info -> info.getPatternValues().stream()
                .filter(p -> p.startsWith("/ops") || p.startsWith("/legacy"))
                .forEach(p -> info.getMethodsCondition().getMethods().forEach(m -> mapped.add(m.name() + " " + p))));
        // the routes are in it: the reception and the REST DSL reads
        assertThat(mapped).contains("POST /legacy/survey-send-info", "GET /ops/inbox", "GET /ops/inbox/{inboxId}");
        Set<String> described = new TreeSet<>();
        paths.forEach((path, ops) -> ops.keySet().forEach(m -> described.add(m.toUpperCase() + " " + path)));
        assertThat(mapped).as("mapped endpoints").isNotEmpty();
        assertThat(described).as("described operations").containsAll(mapped);

        // every described operation and status is answered as described
        Map<String, Supplier<Reply>> probes = probes();
        Set<String> describedStatuses = new TreeSet<>();
        paths.forEach((path, ops) -> ops.forEach((method, op) -> ((Map<String, Object>) ((Map<String, Object>) op)
                .get("responses")).keySet().forEach(status -> describedStatuses.add(method.toUpperCase() + " " + path + " " + status))));
        // a legacy sender's credential on any operator endpoint: 403
        describedStatuses.stream().filter(k -> k.contains(" /ops") && k.endsWith(" 403")).forEach(k -> {
            String[] parts = k.split(" ");
            String path = parts[1].replace("{inboxId}", "1");
            probes.put(k, () -> parts[0].equals("GET") ? client.get(path, ServiceClient.LEGACY_AUTH)
                    : post(path, "{}", "application/json", ServiceClient.LEGACY_AUTH));
        });
        Set<String> probed = new TreeSet<>(probes.keySet());
        probed.addAll(ELSEWHERE.keySet());
        assertThat(probed).as("a probe for each described status").isEqualTo(describedStatuses);

        List<String> mismatches = new ArrayList<>();
        probes.forEach((key, probe) -> {
            String[] parts = key.split(" ");
            Reply reply = probe.get();
            if (reply.status() != Integer.parseInt(parts[2])) {
                mismatches.add(key + ": answered " + reply.status() + " " + reply.body());
                return;
            }
            Map<String, Object> response = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) paths
                    .get(parts[1]).get(parts[0].toLowerCase())).get("responses")).get(parts[2]);
            Map<String, Object> schema = jsonSchema(doc, response);
            if (schema != null) {
                JsonNode body = reply.json();
                String missing = missing(doc, schema, body);
                if (missing != null) {
                    mismatches.add(key + ": " + missing + " in " + reply.body());
                }
            }
        });
        assertThat(mismatches).isEmpty();
    }

    /** One request per described operation and status. */
    private Map<String, Supplier<Reply>> probes() {
        String stored = client.accept(ServiceClient.message(uniqueSubject("OAS"), ""));
        rows.awaitStatus(stored, "COMPLETED");
        String failed = client.accept(ServiceClient.message(uniqueSubject("OAS"), "").replace("F100", "UNREG-OAS"));
        rows.awaitStatus(failed, "FAILED");
        // a reply the legacy system refuses: owed (FAILED) until an operator abandons it
        String owing;
        com.hospital.surveyinbox.support.DownstreamSimulator.Fault refusing = simulator().failWhen("POST /legacy/survey-send-results", 400,
                "{\"code\":\"BAD_REQUEST\"}");
        try {
            owing = client.accept(ServiceClient.message(uniqueSubject("OAS"), "\"alimtalkYn\":\"N\""));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> "FAILED".equals(rows.row(owing).get("reply_status")));
        } finally {
            simulator().remove(refusing);
        }
        byte[] big = new byte[70_000];
        java.util.Arrays.fill(big, (byte) ' ');
        Map<String, Supplier<Reply>> p = new LinkedHashMap<>();
        String reception = "/legacy/survey-send-info";
        p.put("POST " + reception + " 200", () -> client.receive(ServiceClient.message(uniqueSubject("OAS"), "")));
        p.put("POST " + reception + " 400", () -> client.receive("{\"patno\":\"P\"}"));
        p.put("POST " + reception + " 401", () -> post(reception, ServiceClient.message(uniqueSubject("OAS"), ""), "application/json",
                ServiceClient.basic("legacy", "wrong")));
        p.put("POST " + reception + " 403", () -> post(reception, ServiceClient.message(uniqueSubject("OAS"), ""), "application/json",
                ServiceClient.OPS_AUTH));
        p.put("POST " + reception + " 413", () -> client.post(reception, big, "application/json", ServiceClient.LEGACY_AUTH, Map.of()));
        p.put("POST " + reception + " 415", () -> post(reception, ServiceClient.message(uniqueSubject("OAS"), ""), "text/plain",
                ServiceClient.LEGACY_AUTH));
        p.put("GET /ops/inbox/stats 200", () -> client.ops("/ops/inbox/stats"));
        p.put("GET /ops/inbox/stats 401", () -> client.get("/ops/inbox/stats", WRONG));
        p.put("GET /ops/inbox/stats 400", () -> readWithABody("/ops/inbox/stats"));
        p.put("GET /ops/inbox 200", () -> client.ops("/ops/inbox?limit=3"));
        p.put("GET /ops/inbox 400", () -> client.ops("/ops/inbox?status=BOGUS"));
        p.put("GET /ops/inbox 401", () -> client.get("/ops/inbox", WRONG));
        p.put("GET /ops/inbox/history 200", () -> client.ops("/ops/inbox/history?minutes=5"));
        p.put("GET /ops/inbox/history 400", () -> client.ops("/ops/inbox/history?minutes=0"));
        p.put("GET /ops/inbox/history 401", () -> client.get("/ops/inbox/history", WRONG));
        p.put("POST /ops/inbox/requeue 200", () -> post("/ops/inbox/requeue", "{\"status\":\"DEAD\",\"srvyDrawupNoPrefix\":\"OAS-none-\"}",
                "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/requeue 400", () -> post("/ops/inbox/requeue", "{\"status\":\"COMPLETED\"}", "application/json",
                ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/requeue 401", () -> post("/ops/inbox/requeue", "{\"status\":\"DEAD\"}", "application/json", WRONG));
        p.put("POST /ops/inbox/requeue 413", () -> post("/ops/inbox/requeue", "{\"status\":\"DEAD\",\"lastErrorContains\":\""
                + "x".repeat(com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES) + "\"}", "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/requeue 415", () -> post("/ops/inbox/requeue", "{\"status\":\"DEAD\"}", "application/xml",
                ServiceClient.OPS_AUTH));
        p.put("GET /ops/inbox/{inboxId} 200", () -> client.ops("/ops/inbox/" + stored));
        p.put("GET /ops/inbox/{inboxId} 401", () -> client.get("/ops/inbox/" + stored, WRONG));
        p.put("GET /ops/inbox/{inboxId} 400", () -> readWithABody("/ops/inbox/" + stored));
        p.put("GET /ops/inbox/{inboxId} 404", () -> client.ops("/ops/inbox/999999999999"));
        p.put("POST /ops/inbox/{inboxId}/requeue 200", () -> client.opsPost("/ops/inbox/" + failed + "/requeue"));
        p.put("POST /ops/inbox/{inboxId}/requeue 401", () -> post("/ops/inbox/" + failed + "/requeue", "", null, WRONG));
        p.put("POST /ops/inbox/{inboxId}/requeue 413", () -> post("/ops/inbox/" + failed + "/requeue",
                "x".repeat(com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES + 1), "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/{inboxId}/requeue 404", () -> client.opsPost("/ops/inbox/999999999999/requeue"));
        p.put("POST /ops/inbox/{inboxId}/requeue 409", () -> client.opsPost("/ops/inbox/" + stored + "/requeue"));
        // the retry before the abandon: a FAILED reply made due now (PENDING), which the abandon then gives up
        String retry = "/ops/inbox/" + owing + "/reply/retry";
        p.put("POST /ops/inbox/{inboxId}/reply/retry 401", () -> post(retry, "", null, WRONG));
        p.put("POST /ops/inbox/{inboxId}/reply/retry 413", () -> post(retry,
                "x".repeat(com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES + 1), "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/{inboxId}/reply/retry 200", () -> client.opsPost(retry));
        p.put("POST /ops/inbox/{inboxId}/reply/retry 404", () -> client.opsPost("/ops/inbox/999999999999/reply/retry"));
        p.put("POST /ops/inbox/{inboxId}/reply/retry 409", () -> client.opsPost("/ops/inbox/" + stored + "/reply/retry"));
        p.put("POST /ops/inbox/replies/retry 401", () -> post("/ops/inbox/replies/retry", "", null, WRONG));
        p.put("POST /ops/inbox/replies/retry 413", () -> post("/ops/inbox/replies/retry",
                "x".repeat(com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES + 1), "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/replies/retry 200", () -> client.opsPost("/ops/inbox/replies/retry"));
        String abandon = "/ops/inbox/" + owing + "/reply/abandon";
        p.put("POST /ops/inbox/{inboxId}/reply/abandon 401", () -> post(abandon, "", null, WRONG));
        p.put("POST /ops/inbox/{inboxId}/reply/abandon 413", () -> post(abandon,
                "x".repeat(com.hospital.surveyinbox.config.OpsBodyLimitFilter.MAX_BODY_BYTES + 1), "application/json", ServiceClient.OPS_AUTH));
        p.put("POST /ops/inbox/{inboxId}/reply/abandon 200", () -> client.opsPost(abandon));
        p.put("POST /ops/inbox/{inboxId}/reply/abandon 404", () -> client.opsPost("/ops/inbox/999999999999/reply/abandon"));
        p.put("POST /ops/inbox/{inboxId}/reply/abandon 409", () -> client.opsPost("/ops/inbox/" + stored + "/reply/abandon"));
        p.put("GET /ops/console 200", () -> client.ops("/ops/console"));
        p.put("GET /ops/console 401", () -> client.get("/ops/console", WRONG));
        p.put("GET /ops/openapi.yaml 200", () -> client.ops("/ops/openapi.yaml"));
        p.put("GET /ops/openapi.yaml 401", () -> client.get("/ops/openapi.yaml", WRONG));
        return p;
    }

    /** A GET that carries a body: refused before anything reads it. */
    private Reply readWithABody(String path) {
        return client.send(java.net.http.HttpRequest.newBuilder(client.uri(path)).header("Authorization", ServiceClient.OPS_AUTH)
                .header("Content-Type", "application/json")
                .method("GET", java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build());
    }

    private Reply post(String path, String body, String contentType, String authorization) {
        return client.post(path, body.getBytes(StandardCharsets.UTF_8), contentType, authorization, Map.of());
    }

    /** The response's application/json schema, or null when it has none (HTML, YAML). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> jsonSchema(Map<String, Object> doc, Map<String, Object> response) {
        Map<String, Object> resolved = resolve(doc, response);
        Map<String, Object> content = (Map<String, Object>) resolved.get("content");
        if (content == null || !(content.get("application/json") instanceof Map<?, ?> json)) {
            return null;
        }
        return (Map<String, Object>) json.get("schema");
    }

    /** Why {@code body} does not have the required fields of {@code schema} (refs, allOf, oneOf, arrays), or null. */
    @SuppressWarnings("unchecked")
    private static String missing(Map<String, Object> doc, Map<String, Object> schemaOrRef, JsonNode body) {
        Map<String, Object> schema = resolve(doc, schemaOrRef);
        if (schema.get("allOf") instanceof List<?> all) {
            for (Object part : all) {
                String m = missing(doc, (Map<String, Object>) part, body);
                if (m != null) {
                    return m;
                }
            }
            return null;
        }
        if (schema.get("oneOf") instanceof List<?> one) {
            List<String> why = new ArrayList<>();
            for (Object part : one) {
                String m = missing(doc, (Map<String, Object>) part, body);
                if (m == null) {
                    return null;
                }
                why.add(m);
            }
            return "none of " + why;
        }
        if ("array".equals(schema.get("type"))) {
            if (!body.isArray()) {
                return "not an array";
            }
            for (JsonNode item : body) {
                String m = missing(doc, (Map<String, Object>) schema.get("items"), item);
                if (m != null) {
                    return m;
                }
            }
            return null;
        }
        for (Object field : (List<Object>) schema.getOrDefault("required", List.of())) {
            if (!body.has(field.toString())) {
                return "no field '" + field + "'";
            }
        }
        Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
        for (Map.Entry<String, Object> property : properties.entrySet()) {
            JsonNode value = body.get(property.getKey());
            Map<String, Object> sub = resolve(doc, (Map<String, Object>) property.getValue());
            if (value != null && !value.isNull() && (sub.containsKey("required") || sub.containsKey("items"))) {
                String m = missing(doc, sub, value);
                if (m != null) {
                    return property.getKey() + ": " + m;
                }
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> resolve(Map<String, Object> doc, Map<String, Object> node) {
        Object ref = node.get("$ref");
        if (ref == null) {
            return node;
        }
        Object target = doc;
        for (String part : ref.toString().substring(2).split("/")) {
            target = ((Map<String, Object>) target).get(part);
        }
        return resolve(doc, (Map<String, Object>) target);
    }
}
