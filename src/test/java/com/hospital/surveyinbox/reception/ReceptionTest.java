package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import com.hospital.surveyinbox.support.TopicProbe;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** CONTRACT §1, row by row, against the running service with real PostgreSQL and Kafka. */
class ReceptionTest extends IntegrationTest {

    static final String PATIENT_MARKER = "PATNO-MARKER-7731";
    /** Every subject a test of this class had rejected: none may have an event (checked once, after the last test). */
    private static final List<String> rejectedSubjects = new java.util.concurrent.CopyOnWriteArrayList<>();
    private static ServiceClient lastClient;

    TopicProbe topic() {
        return TopicProbe.get("survey-send-info-received");
    }

    @Test
    void storesAndAcknowledgesAValidMessageAndPublishesItsEventAfterCommit() {
        String subject = uniqueSubject("RCV");
        String body = ServiceClient.message(subject, "\"srvyNo\":\"S1\",\"msgType\":\"SEND\"");

        Reply reply = client.receive(body, Map.of("X-Trace-Marker", "echo-me-not"));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
        assertThat(reply.json().get("resultCode").asText()).isEqualTo("Y");
        String inboxId = reply.json().get("inboxId").asText();
        assertThat(inboxId).isNotBlank();
        byte[] stored = jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, Long.parseLong(inboxId));
        assertThat(stored).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
        assertThat(jdbc.queryForObject("SELECT msg_type FROM inbox_message WHERE id = ?", String.class, Long.parseLong(inboxId)))
                .isEqualTo("SEND");
        // no request header comes back
        assertThat(reply.headers()).doesNotContainKeys("authorization", "x-trace-marker", "idempotency-key");

        await().atMost(Duration.ofSeconds(20)).until(() -> !topic().forInboxId(inboxId).isEmpty());
        TopicProbe.Record event = topic().forInboxId(inboxId).get(0);
        assertThat(event.key()).isEqualTo(subject);
        assertThat(event.value().get("srvyDrawupNo").asText()).isEqualTo(subject);
        assertThat(event.value().get("msgType").asText()).isEqualTo("SEND");
        assertThat(event.value().fieldNames()).toIterable().containsExactlyInAnyOrder("inboxId", "srvyDrawupNo", "msgType");
        // neither the Authorization header nor any other inbound header travels into Kafka: only the trace the
        // row was received in (stored on the row), which the worker continues
        String traced = jdbc.queryForObject("SELECT trace_parent FROM inbox_message WHERE id = ?", String.class,
                Long.parseLong(inboxId));
        assertThat(traced).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]");
        assertThat(event.headers()).containsOnlyKeys("traceparent", "inboxDatabase").containsEntry("traceparent", traced)
                .containsEntry("inboxDatabase", jdbc.queryForObject("SELECT CAST(id AS TEXT) FROM inbox_database", String.class));
    }

    @Test
    void aMalformedOrOversizedTraceContextIsNeitherStoredNorSentOn() {
        String subject = uniqueSubject("TRACE-BAD");
        Reply reply = client.receive(ServiceClient.message(subject, ""), Map.of(
                "traceparent", "00-zzzz'; DROP TABLE inbox_message;--",
                "tracestate", "k=" + "v".repeat(6000)));

        assertThat(reply.status()).isEqualTo(200);
        String stored = jdbc.queryForObject("SELECT trace_parent FROM inbox_message WHERE id = ?", String.class,
                Long.parseLong(reply.json().get("inboxId").asText()));
        // a trace of its own, started here: only ids, in the W3C form
        assertThat(stored).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]").doesNotContain("zzzz");
    }

    @Test
    void storesALenientMessageByteForByte() {
        String subject = uniqueSubject("LEN");
        String body = "{ \"srvyDrawupNo\" : \"" + subject + "\", \"patno\":\"P1\", \"formCd\":\"F1\",\n"
                + "  \"sendDt\":\"\", \"sendDt2\":\"not-a-date\", \"patNm\":\"김환자 Ünïcødé 🙂\",\n"
                + "  \"memo\":\"'; DROP TABLE inbox_message; --\", \"extra\":{\"nested\":[1,2.50,null,true]}, \"msgType\":\"SUBMIT\" }";
        String garbageDate = ServiceClient.message(uniqueSubject("LEN"), "\"sendDt\":\"2024-13-45 99:99\"");

        String inboxId = client.accept(body);
        String second = client.accept(garbageDate);

        assertThat(jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, Long.parseLong(inboxId)))
                .isEqualTo(body.getBytes(StandardCharsets.UTF_8));
        assertThat(jdbc.queryForObject("SELECT msg_type FROM inbox_message WHERE id = ?", String.class, Long.parseLong(inboxId)))
                .isEqualTo("SUBMIT");
        assertThat(jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, Long.parseLong(second)))
                .isEqualTo(garbageDate.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A replay whose first row retention deletes between the insert that met its key and the read of that row (the
     * key free again) is stored as a new row, as it would have been a moment later: it was answered 500.
     */
    @Test
    void aReplayWhoseFirstRowIsDeletedMeanwhileIsStoredAsNew() {
        String subject = uniqueSubject("IDEMGONE");
        String key = "idem-gone-" + subject;
        String body = ServiceClient.message(subject, "");
        String first = client.receive(body, Map.of("Idempotency-Key", key)).json().get("inboxId").asText();
        new com.hospital.surveyinbox.support.Rows(jdbc).awaitStatus(first, "COMPLETED");
        String trigger = "replay_race_" + first;
        // retention's delete, committed right after the replay's insert met the key (a statement trigger of that insert)
        jdbc.execute("CREATE FUNCTION " + trigger + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " DELETE FROM inbox_attempt WHERE inbox_id = " + first + "; DELETE FROM inbox_message WHERE id = " + first + ";"
                + " RETURN NULL; END $$");
        jdbc.execute("CREATE TRIGGER " + trigger + " AFTER INSERT ON inbox_message FOR EACH STATEMENT EXECUTE FUNCTION " + trigger + "()");
        Reply replay;
        try {
            replay = client.receive(body, Map.of("Idempotency-Key", key));
        } finally {
            jdbc.execute("DROP TRIGGER " + trigger + " ON inbox_message");
            jdbc.execute("DROP FUNCTION " + trigger + "()");
        }
        assertThat(replay.status()).as(replay.body()).isEqualTo(200);
        assertThat(replay.header("X-Result-Code")).isEqualTo("Y");
        String stored = replay.json().get("inboxId").asText();
        assertThat(stored).isNotEqualTo(first);
        assertThat(jdbc.queryForObject("SELECT idempotency_key FROM inbox_message WHERE id = ?", String.class, Long.parseLong(stored)))
                .isEqualTo(key);
    }

    static Stream<Arguments> malformedBodies() {
        String s = "@SUBJECT@";
        return Stream.of(
                Arguments.of("not JSON", "hello".getBytes(StandardCharsets.UTF_8), "not valid JSON"),
                Arguments.of("truncated JSON", ("{\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"" + PATIENT_MARKER + "\",\"formCd\":\"F")
                        .getBytes(StandardCharsets.UTF_8), "not valid JSON"),
                Arguments.of("empty body", new byte[0], "empty"),
                Arguments.of("whitespace body", "   ".getBytes(StandardCharsets.UTF_8), "empty"),
                Arguments.of("array body", ("[{\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\"}]")
                        .getBytes(StandardCharsets.UTF_8), "JSON object"),
                Arguments.of("string body", "\"text\"".getBytes(StandardCharsets.UTF_8), "JSON object"),
                Arguments.of("trailing garbage", ("{\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\"} x")
                        .getBytes(StandardCharsets.UTF_8), "not valid JSON"),
                Arguments.of("invalid UTF-8", invalidUtf8(s), "UTF-8"),
                Arguments.of("missing srvyDrawupNo", json("\"patno\":\"" + PATIENT_MARKER + "\",\"formCd\":\"F\""), "'srvyDrawupNo'"),
                Arguments.of("missing patno", json("\"srvyDrawupNo\":\"" + s + "\",\"formCd\":\"F\""), "'patno'"),
                Arguments.of("missing formCd", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"" + PATIENT_MARKER + "\""), "'formCd'"),
                Arguments.of("null formCd", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":null"), "'formCd'"),
                Arguments.of("blank srvyDrawupNo", json("\"srvyDrawupNo\":\"   \",\"patno\":\"P\",\"formCd\":\"F\""), "'srvyDrawupNo'"),
                Arguments.of("blank patno", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"\",\"formCd\":\"F\""), "'patno'"),
                Arguments.of("blank formCd", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\" \\t\""), "'formCd'"),
                Arguments.of("object patno", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":{\"x\":1},\"formCd\":\"F\""), "'patno'"),
                Arguments.of("unknown msgType", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"" + PATIENT_MARKER
                        + "\",\"formCd\":\"F\",\"msgType\":\"DELETE\""), "'msgType'"),
                Arguments.of("lower-case msgType", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"msgType\":\"send\""), "'msgType'"),
                // read as no survey before: the consents were skipped and the bundle sent with none
                Arguments.of("object srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":{\"id\":\"S1\"}"), "'srvyNo'"),
                Arguments.of("array srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":[\"S1\"]"), "'srvyNo'"),
                Arguments.of("boolean alimtalkYn", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"alimtalkYn\":false"), "'alimtalkYn'"),
                Arguments.of("object alimtalkYn", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"alimtalkYn\":{\"v\":\"N\"}"), "'alimtalkYn'"),
                // a decimal read back as a double named another subject or patient (1.10 as "1.1", 1E2 as "100.0")
                Arguments.of("decimal srvyDrawupNo", json("\"srvyDrawupNo\":1.10,\"patno\":\"P\",\"formCd\":\"F\""), "'srvyDrawupNo'"),
                Arguments.of("exponent patno", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":1E2,\"formCd\":\"F\""), "'patno'"),
                Arguments.of("decimal srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":1.5"), "'srvyNo'"),
                // a tab or newline is no absent survey: its consents were skipped
                Arguments.of("newline srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":\"\\n\""), "'srvyNo'"),
                Arguments.of("ideographic-space srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":\"\\u3000\""), "'srvyNo'"),
                Arguments.of("tab srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":\" \\t \""), "'srvyNo'"),
                // UTF-16 without a byte order mark is valid UTF-8 byte by byte when ASCII; Jackson read it
                Arguments.of("UTF-16 body", ("{\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\"}")
                        .getBytes(StandardCharsets.UTF_16LE), "UTF-8"),
                // passed on downstream as text: an object was read as absent (a questionnaire without its group)
                Arguments.of("object groupCd", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"groupCd\":{\"cd\":\"G1\"}"), "'groupCd'"),
                Arguments.of("array patNm", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"patNm\":[\"Kim\"]"), "'patNm'"),
                Arguments.of("boolean mobileNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"mobileNo\":true"), "'mobileNo'"),
                Arguments.of("boolean srvyNo", json("\"srvyDrawupNo\":\"" + s + "\",\"patno\":\"P\",\"formCd\":\"F\",\"srvyNo\":true"), "'srvyNo'"),
                // an unpaired surrogate escape is no text: stored and sent as "?", two such subjects were one
                Arguments.of("unpaired surrogate in a field the code does not name", json("\"srvyDrawupNo\":\"" + s
                        + "\",\"patno\":\"P\",\"formCd\":\"F\",\"memo\":\"a\\uD800b\""), "'memo'"),
                Arguments.of("unpaired surrogate deep in a field", json("\"srvyDrawupNo\":\"" + s
                        + "\",\"patno\":\"P\",\"formCd\":\"F\",\"extra\":{\"list\":[1,{\"\\uDC00\":2}]}"), "'extra'"),
                Arguments.of("unpaired surrogate in formCd", json("\"srvyDrawupNo\":\"" + s
                        + "\",\"patno\":\"P\",\"formCd\":\"F\\uDBFF\""), "'formCd'"),
                Arguments.of("unpaired surrogate in a field name", json("\"srvyDrawupNo\":\"" + s
                        + "\",\"patno\":\"P\",\"formCd\":\"F\",\"\\uD800\":1"), "a field name"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedBodies")
    void rejectsAMalformedMessageWith400AndStoresNothing(String name, byte[] template, String expectedMessage) {
        String subject = uniqueSubject("BAD");
        byte[] body = new String(template, StandardCharsets.ISO_8859_1).replace("@SUBJECT@", subject)
                .getBytes(StandardCharsets.ISO_8859_1);
        long before = rowCount();

        Reply reply = client.post("/legacy/survey-send-info", body, "application/json", ServiceClient.LEGACY_AUTH, Map.of());

        assertRejected(reply, 400, subject, before);
        assertThat(reply.json().get("resultMessage").asText()).contains(expectedMessage).doesNotContain(PATIENT_MARKER);
    }

    @Test
    void rejectsMissingOrWrongCredentialsWith401AndTheWrongRoleWith403() {
        String subject = uniqueSubject("AUTH");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);
        long before = rowCount();

        assertRejected(client.post("/legacy/survey-send-info", body, "application/json", null, Map.of()), 401, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/json",
                ServiceClient.basic("legacy", "wrong"), Map.of()), 401, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/json",
                ServiceClient.basic("nobody", "legacy-test-secret"), Map.of()), 401, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/json", ServiceClient.OPS_AUTH, Map.of()),
                403, subject, before);
        // and the legacy credential is no operator
        assertThat(client.get("/ops/inbox/stats", ServiceClient.LEGACY_AUTH).status()).isEqualTo(403);
        assertThat(client.get("/ops/inbox/stats", null).status()).isEqualTo(401);
    }

    @Test
    void rejectsAnOversizeBodyWith413WhetherItDeclaresItsLengthOrIsChunked() {
        String subject = uniqueSubject("BIG");
        String padding = "x".repeat(70_000);
        byte[] body = ServiceClient.message(subject, "\"pad\":\"" + padding + "\"").getBytes(StandardCharsets.UTF_8);
        long before = rowCount();

        Reply declared = client.post("/legacy/survey-send-info", body, "application/json", ServiceClient.LEGACY_AUTH, Map.of());
        Reply chunked = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/legacy/survey-send-info"))
                .header("Content-Type", "application/json")
                .header("Authorization", ServiceClient.LEGACY_AUTH)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
                .build());

        assertRejected(declared, 413, subject, before);
        assertRejected(chunked, 413, subject, before);
        // exactly at the limit is fine
        String edge = uniqueSubject("EDGE");
        String exact = ServiceClient.message(edge, "\"pad\":\"\"");
        String atLimit = ServiceClient.message(edge, "\"pad\":\"" + "y".repeat(65536 - exact.length()) + "\"");
        assertThat(atLimit.getBytes(StandardCharsets.UTF_8)).hasSize(65536);
        assertThat(client.receive(atLimit).status()).isEqualTo(200);
    }

    @Test
    void rejectsANonJsonContentTypeWith415() {
        String subject = uniqueSubject("CT");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);
        long before = rowCount();

        assertRejected(client.post("/legacy/survey-send-info", body, "text/plain", ServiceClient.LEGACY_AUTH, Map.of()), 415, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, null, ServiceClient.LEGACY_AUTH, Map.of()), 415, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/x-www-form-urlencoded",
                ServiceClient.LEGACY_AUTH, Map.of()), 415, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/json; charset=ISO-8859-1",
                ServiceClient.LEGACY_AUTH, Map.of()), 415, subject, before);
        // a coded body is refused, never decoded (a small gzip body could expand to megabytes)
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(body);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertRejected(client.post("/legacy/survey-send-info", gz.toByteArray(), "application/json",
                ServiceClient.LEGACY_AUTH, Map.of("Content-Encoding", "gzip")), 415, subject, before);
        assertRejected(client.post("/legacy/survey-send-info", body, "application/json",
                ServiceClient.LEGACY_AUTH, Map.of("Content-Encoding", "identity, br")), 415, subject, before);
        byte[] other = ServiceClient.message(uniqueSubject("CT"), "").getBytes(StandardCharsets.UTF_8);
        assertThat(client.post("/legacy/survey-send-info", other, "application/json; charset=UTF-8",
                ServiceClient.LEGACY_AUTH, Map.of()).status()).isEqualTo(200);
        // a Content-Encoding that is no compression (a charset sent by mistake) is ignored, as it always was
        byte[] third = ServiceClient.message(uniqueSubject("CT"), "").getBytes(StandardCharsets.UTF_8);
        assertThat(client.post("/legacy/survey-send-info", third, "application/json",
                ServiceClient.LEGACY_AUTH, Map.of("Content-Encoding", "UTF-8")).status()).isEqualTo(200);
    }

    @Test
    void replaysAnIdempotencyKeyWithTheFirstInboxIdAndStoresNothing() {
        String subject = uniqueSubject("IDEM");
        String key = "idem-" + subject;
        String body = ServiceClient.message(subject, "");

        Reply first = client.receive(body, Map.of("Idempotency-Key", key));
        Reply second = client.receive(body, Map.of("Idempotency-Key", key));

        assertThat(first.status()).isEqualTo(200);
        assertThat(second.status()).isEqualTo(200);
        assertThat(second.header("X-Result-Code")).isEqualTo("Y");
        assertThat(second.json().get("inboxId").asText()).isEqualTo(first.json().get("inboxId").asText());
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject)).isEqualTo(1);
        // without the header every POST is a new row
        String a = client.accept(body);
        String b = client.accept(body);
        assertThat(a).isNotEqualTo(b);
    }

    static Stream<Arguments> malformedIdentifiers() {
        String longSubject = "S" + "x".repeat(2_999);
        return Stream.of(
                Arguments.of("srvyDrawupNo of 3,000 characters", "srvyDrawupNo", longSubject, "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo of 101 characters", "srvyDrawupNo", "D".repeat(101), "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo ..", "srvyDrawupNo", "..", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo .", "srvyDrawupNo", ".", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with /", "srvyDrawupNo", "A/B", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with a backslash", "srvyDrawupNo", "A\\\\B", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with a newline", "srvyDrawupNo", "A\\nB", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with U+0000", "srvyDrawupNo", "A\\u0000B", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with DEL", "srvyDrawupNo", "A\\u007FB", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with ?", "srvyDrawupNo", "A?B", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with #", "srvyDrawupNo", "A#B", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with %", "srvyDrawupNo", "A%2FB", "\"patno\":\"P\""),
                Arguments.of("patno ..", "patno", "..", "\"srvyDrawupNo\":\"@SUBJECT@\""),
                Arguments.of("patno with /", "patno", PATIENT_MARKER + "/x", "\"srvyDrawupNo\":\"@SUBJECT@\""),
                Arguments.of("srvyNo with /", "srvyNo", "S/1", "\"srvyDrawupNo\":\"@SUBJECT@\",\"patno\":\"P\""),
                Arguments.of("srvyNo ..", "srvyNo", "..", "\"srvyDrawupNo\":\"@SUBJECT@\",\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo with an unpaired high surrogate", "srvyDrawupNo", "\\uD800X", "\"patno\":\"P\""),
                Arguments.of("srvyDrawupNo ending in a high surrogate", "srvyDrawupNo", "X\\uDBFF", "\"patno\":\"P\""),
                Arguments.of("patno with an unpaired low surrogate", "patno", "\\uDC00X", "\"srvyDrawupNo\":\"@SUBJECT@\""),
                Arguments.of("srvyNo with surrogates in the wrong order", "srvyNo", "\\uDC00\\uD800", "\"srvyDrawupNo\":\"@SUBJECT@\",\"patno\":\"P\""));
    }

    /** CONTRACT §1: identifiers that become downstream path segments; a 400 naming the field, never its value. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedIdentifiers")
    void rejectsAMalformedIdentifierWith400NamingTheFieldAndStoresNothing(String name, String field, String value,
                                                                          String otherFields) {
        String subject = uniqueSubject("BADID");
        String body = "{" + otherFields.replace("@SUBJECT@", subject) + ",\"formCd\":\"F\",\"" + field + "\":\"" + value + "\"}";
        long before = rowCount();

        Reply reply = client.post("/legacy/survey-send-info", body.getBytes(StandardCharsets.UTF_8), "application/json",
                ServiceClient.LEGACY_AUTH, Map.of());

        assertRejected(reply, 400, subject, before);
        assertThat(rowCount()).isEqualTo(before);
        String message = reply.json().get("resultMessage").asText();
        assertThat(message).contains("'" + field + "'").doesNotContain(PATIENT_MARKER);
        if (value.length() > 3) {
            assertThat(message).doesNotContain(value);
        }
    }

    /**
     * The key is the request header's alone: Camel copies the query string's parameters into the message's
     * headers too, and a key sent there passed none of the header's checks (a NUL in it was a 500).
     */
    @Test
    void anIdempotencyKeyInTheQueryStringIsNoKey() {
        String subject = uniqueSubject("IDEMQ");
        byte[] body = ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8);

        Reply nul = client.post("/legacy/survey-send-info?Idempotency-Key=a%00b", body, "application/json",
                ServiceClient.LEGACY_AUTH, Map.of());
        Reply first = client.post("/legacy/survey-send-info?Idempotency-Key=q-" + subject, body, "application/json",
                ServiceClient.LEGACY_AUTH, Map.of());
        Reply second = client.post("/legacy/survey-send-info?Idempotency-Key=q-" + subject, body, "application/json",
                ServiceClient.LEGACY_AUTH, Map.of());

        assertThat(List.of(nul, first, second)).allSatisfy(reply -> assertThat(reply.status()).as(reply.body()).isEqualTo(200));
        assertThat(List.of(nul, first, second)).extracting(reply -> reply.json().get("inboxId").asText()).doesNotHaveDuplicates();
        assertThat(jdbc.queryForList("SELECT idempotency_key FROM inbox_message WHERE srvy_drawup_no = ?", String.class, subject))
                .hasSize(3).containsOnlyNulls();
    }

    /** A key sent twice names no one request: 400, nothing stored. */
    @Test
    void rejectsAnIdempotencyKeySentTwice() {
        String subject = uniqueSubject("IDEM2");
        long before = rowCount();
        Reply reply = client.send(java.net.http.HttpRequest.newBuilder(client.uri("/legacy/survey-send-info"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").header("Authorization", ServiceClient.LEGACY_AUTH)
                .header("Idempotency-Key", "k1-" + subject).header("Idempotency-Key", "k2-" + subject)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(ServiceClient.message(subject, ""))).build());

        assertRejected(reply, 400, subject, before);
        assertThat(reply.json().get("resultMessage").asText()).contains("'Idempotency-Key'");
    }

    /**
     * Receptions waiting for one of Tomcat's threads are bounded (server.tomcat.threads.max-queue-capacity): Tomcat's
     * default queue is unbounded, and a slow database queued receptions longer than the sender waited (stored after
     * nginx gave up, stored again by the sender's retry). The bound is the running connector's, as configured.
     */
    @Test
    void receptionsWaitingForARequestThreadAreBounded(
            @org.springframework.beans.factory.annotation.Autowired org.springframework.boot.web.servlet.context.ServletWebServerApplicationContext web) {
        org.apache.catalina.connector.Connector connector =
                ((org.springframework.boot.web.embedded.tomcat.TomcatWebServer) web.getWebServer()).getTomcat().getConnector();
        java.util.concurrent.Executor executor = connector.getProtocolHandler().getExecutor();
        assertThat(executor).isInstanceOf(org.apache.tomcat.util.threads.ThreadPoolExecutor.class);
        java.util.concurrent.BlockingQueue<Runnable> queue = ((org.apache.tomcat.util.threads.ThreadPoolExecutor) executor).getQueue();
        assertThat(queue.size() + queue.remainingCapacity()).isEqualTo(100);
    }

    @Test
    void acceptsIdentifiersTheContractAllows() {
        String subject = uniqueSubject("OKID") + "-a.b_c~$:{}";
        Reply reply = client.receive("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"" + "P".repeat(100)
                + "\",\"formCd\":\"F\",\"srvyNo\":\"...\"}");
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        // an integer is stored as its digits, exactly; a srvyNo of spaces alone (a padded field) reads as absent
        String digits = Long.toString(Math.abs(System.nanoTime())) + "123456789012";
        Reply number = client.receive("{\"srvyDrawupNo\":" + digits + ",\"patno\":12345678901234567890,\"formCd\":7,"
                + "\"srvyNo\":\"   \"}");
        assertThat(number.status()).as(number.body()).isEqualTo(200);
        assertThat(jdbc.queryForObject("SELECT srvy_drawup_no FROM inbox_message WHERE id = ?", String.class,
                Long.parseLong(number.json().get("inboxId").asText()))).isEqualTo(digits);
    }

    @Test
    void aMalformedSubjectInABurstAffectsNoOtherReception() throws Exception {
        String run = uniqueSubject("BURST");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(40);
        java.util.List<java.util.concurrent.Future<Reply>> replies = new java.util.ArrayList<>();
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        for (int i = 0; i < 40; i++) {
            String subject = i % 8 == 0 ? run + "-" + "x".repeat(3_000) : run + "-" + i;
            replies.add(pool.submit(() -> {
                start.await();
                return client.receive(ServiceClient.message(subject, "P-" + subject.length(), ""));
            }));
        }
        start.countDown();
        int accepted = 0;
        for (int i = 0; i < 40; i++) {
            Reply reply = replies.get(i).get(30, java.util.concurrent.TimeUnit.SECONDS);
            if (i % 8 == 0) {
                assertThat(reply.status()).as(reply.body()).isEqualTo(400);
            } else {
                assertThat(reply.status()).as(reply.body()).isEqualTo(200);
                accepted++;
            }
        }
        pool.shutdown();
        assertThat(accepted).isEqualTo(35);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?", Long.class, run + "-%"))
                .isEqualTo(35);
    }

    @Test
    void answersOnlyPostOnTheReceptionPath() {
        // in the contract's shape, as every answer of the reception (X-Result-Code N, resultCode N)
        Reply get = client.get("/legacy/survey-send-info", ServiceClient.LEGACY_AUTH);
        assertThat(get.status()).isEqualTo(405);
        assertThat(get.header("X-Result-Code")).isEqualTo("N");
        assertThat(get.header("Allow")).isEqualTo("POST");
        assertThat(get.json().get("resultCode").asText()).isEqualTo("N");
        assertThat(client.get("/actuator/health", null).status()).isIn(401, 403, 404);
    }

    @AfterEach
    void keepTheClient() {
        lastClient = client;
    }

    @AfterAll
    static void noEventForAnyRejectedSubject() {
        if (rejectedSubjects.isEmpty()) {
            return;
        }
        // sentinels accepted after the rejections: once one's event is read on every partition, an event of a
        // rejection would be too
        TopicProbe topic = TopicProbe.get("survey-send-info-received");
        topic.awaitSentinelOnEveryPartition(uniqueSubject("SENTINEL"), subject -> lastClient.accept(ServiceClient.message(subject, "")));
        for (String subject : rejectedSubjects) {
            assertThat(topic.forSubject(subject)).as("event for rejected " + subject).isEmpty();
        }
    }

    private void assertRejected(Reply reply, int status, String subject, long rowsBefore) {
        assertThat(reply.status()).as(reply.body()).isEqualTo(status);
        assertThat(reply.header("X-Result-Code")).isEqualTo("N");
        assertThat(reply.json().get("resultCode").asText()).isEqualTo("N");
        assertThat(reply.json().get("resultMessage").asText()).isNotBlank();
        assertThat(reply.json().has("inboxId")).isFalse();
        assertThat(reply.headers()).doesNotContainKey("authorization");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ?", Long.class, subject))
                .isZero();
        // and no row at all: a body without a readable subject (not JSON, no srvyDrawupNo) is not found by it
        assertThat(rowCount()).as("rows stored").isEqualTo(rowsBefore);
        rejectedSubjects.add(subject);
    }

    private static byte[] json(String fields) {
        return ("{" + fields + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] invalidUtf8(String subject) {
        byte[] head = ("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"").getBytes(StandardCharsets.ISO_8859_1);
        byte[] bad = {(byte) 0xC3, (byte) 0x28, (byte) 0xFF};
        byte[] tail = "\",\"formCd\":\"F\"}".getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = Arrays.copyOf(head, head.length + bad.length + tail.length);
        System.arraycopy(bad, 0, all, head.length, bad.length);
        System.arraycopy(tail, 0, all, head.length + bad.length, tail.length);
        return all;
    }
}
