package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.Acceptance;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.processing.ClaimRepository;
import com.hospital.surveyinbox.inbox.PayloadCipher;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/** Payload encryption at rest (AES-GCM, key id per row), transparent to processing and key rotation. */
@TestPropertySource(properties = {
        "adapter.crypto.enabled=true",
        "adapter.crypto.active-key=K1",
        "adapter.crypto.keys.k1=" + PayloadEncryptionTest.K1,
        "adapter.kafka.topic=crypto-tests",
        "adapter.kafka.group-id=crypto-tests",
        "spring.quartz.scheduler-name=crypto-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class PayloadEncryptionTest extends IntegrationTest {

    static final String K1 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    static final String K2 = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";

    @Autowired
    NamedParameterJdbcTemplate named;

    @Autowired
    org.apache.camel.ProducerTemplate producer;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @Test
    void storesThePayloadEncryptedAndStillProcessesIt() {
        String subject = uniqueSubject("ENC");
        String body = "{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P-SECRET-42\",\"formCd\":\"F100\",\"patNm\":\"홍길동\"}";

        String id = client.accept(body);

        byte[] stored = jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, Long.parseLong(id));
        assertThat(new String(stored, StandardCharsets.ISO_8859_1)).doesNotContain("P-SECRET-42", subject);
        assertThat(stored).isNotEqualTo(body.getBytes(StandardCharsets.UTF_8));
        assertThat(jdbc.queryForObject("SELECT payload_key_id FROM inbox_message WHERE id = ?", String.class, Long.parseLong(id)))
                .isEqualTo("k1");
        new Rows(jdbc).awaitStatus(id, "COMPLETED");
        assertThat(simulator().bundleRequests(subject)).singleElement()
                .satisfies(b -> assertThat(b.get("formCd").asText()).isEqualTo("F100"));
    }

    @Test
    void rotatesKeysWithoutRewritingOldRows() {
        InboxStore withK1 = store(Map.of("k1", K1), "k1");
        InboxStore withK2 = store(Map.of("k1", K1, "k2", K2), "k2");
        String oldSubject = uniqueSubject("ROT");
        String newSubject = uniqueSubject("ROT");
        byte[] oldPayload = ("{\"srvyDrawupNo\":\"" + oldSubject + "\"}").getBytes(StandardCharsets.UTF_8);
        byte[] newPayload = ("{\"srvyDrawupNo\":\"" + newSubject + "\"}").getBytes(StandardCharsets.UTF_8);

        Acceptance old = withK1.accept(new ReceivedMessage(oldSubject, "SEND", oldPayload, null));
        Acceptance fresh = withK2.accept(new ReceivedMessage(newSubject, "SEND", newPayload, null));

        assertThat(jdbc.queryForObject("SELECT payload_key_id FROM inbox_message WHERE id = ?", String.class, old.inboxId())).isEqualTo("k1");
        assertThat(jdbc.queryForObject("SELECT payload_key_id FROM inbox_message WHERE id = ?", String.class, fresh.inboxId())).isEqualTo("k2");
        ClaimRepository claimsWithK2 = new ClaimRepository(named, new PayloadCipher(properties(Map.of("k1", K1, "k2", K2), "k2")),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ZERO);
        ClaimedRow oldRow = claimsWithK2.claim(old.inboxId()).orElseThrow();
        ClaimedRow newRow = claimsWithK2.claim(fresh.inboxId()).orElseThrow();
        assertThat(oldRow.payload()).isEqualTo(oldPayload);
        assertThat(newRow.payload()).isEqualTo(newPayload);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE id IN (?, ?)",
                oldRow.inboxId(), newRow.inboxId());
    }

    /**
     * A row sealed with a key this instance does not have (a rotation rolled out before every pod had the new key, a
     * Secret missing one) waits uncharged, as for an open circuit: it walked to DEAD in five retries and a failure
     * reply told the legacy system the survey was lost.
     */
    @Test
    void aRowSealedWithAKeyThisInstanceLacksWaitsUnchargedNotDead() {
        String subject = uniqueSubject("NOKEY");
        Acceptance sealed = sealedWithAKeyThisInstanceLacks(subject);
        double before = meters.counter("adapter.inbox.payload.unreadable", "reason", "key-not-configured").count();

        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, sealed.event())).isTrue();

        String id = Long.toString(sealed.inboxId());
        new Rows(jdbc).awaitStatus(id, "FAILED");
        assertThat(jdbc.queryForMap("SELECT attempts, last_error, reply_status FROM inbox_message WHERE id = ?", sealed.inboxId()))
                .containsEntry("attempts", 0).containsEntry("reply_status", "NONE")
                .containsEntry("last_error", "waiting: payload key 'k9' not configured on this instance");
        assertThat(meters.counter("adapter.inbox.payload.unreadable", "reason", "key-not-configured").count()).isEqualTo(before + 1);
        assertThat(simulator().bundleRequests(subject)).isEmpty();

        // past adapter.crypto.key-wait (P1D) from its arrival: charged, so a key gone for good ends in DEAD, not a row
        // (and every later row of its subject) held for ever
        jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '2 days' WHERE id = ?", sealed.inboxId());
        assertThat(com.hospital.surveyinbox.support.EventPublisher.publish(producer, sealed.event())).isTrue();
        new Rows(jdbc).awaitAttempt(id, 1, "FAILED");
        assertThat(jdbc.queryForObject("SELECT last_error FROM inbox_message WHERE id = ?", String.class, sealed.inboxId()))
                .isEqualTo("system error");

        // gone DEAD, then requeued by an operator (the key being restored, a pod still without it): it owes work from
        // the requeue, so it waits key-wait again, uncharged; from its arrival two days ago it was charged at once
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', claim_token = NULL WHERE id = ?", sealed.inboxId());
        assertThat(client.opsPost("/ops/inbox/" + id + "/requeue").status()).isEqualTo(200);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> assertThat(jdbc.queryForMap(
                "SELECT status, attempts, last_error FROM inbox_message WHERE id = ?", sealed.inboxId()))
                .containsEntry("status", "FAILED").containsEntry("attempts", 0)
                .containsEntry("last_error", "waiting: payload key 'k9' not configured on this instance"));
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE id = ?", sealed.inboxId());
    }

    /**
     * A claim tried again because its answer was lost reads its own row back (find-own-claim.sql) as the claim returns
     * it, the row's age included: the key-missing row's retry failed on a column the read-back lacked, and the row
     * stayed PROCESSING until stuck-processing-after.
     */
    @Test
    void aClaimTriedAgainFindsItsOwnRowThoughItsKeyIsMissing() {
        String subject = uniqueSubject("NOKEYRETRY");
        Acceptance sealed = sealedWithAKeyThisInstanceLacks(subject);
        ClaimRepository claims = new ClaimRepository(named, new PayloadCipher(properties(Map.of("k1", K1), "k1")),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ZERO);
        org.apache.camel.Exchange exchange = new org.apache.camel.support.DefaultExchange(new org.apache.camel.impl.DefaultCamelContext());
        String id = Long.toString(sealed.inboxId());
        try {
            assertThat(claims.add(exchange, id)).isTrue();
            // the same exchange again: the retry of a claim whose commit answer was lost (same token)
            assertThat(claims.add(exchange, id)).isTrue();
            assertThat(exchange.getProperty("row", ClaimedRow.class).missingKey()).isEqualTo("k9");
        } finally {
            jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE id = ?", sealed.inboxId());
        }
    }

    /** A row sealed with key k9, which this test's service (k1 only) does not have. */
    private Acceptance sealedWithAKeyThisInstanceLacks(String subject) {
        return store(Map.of("k1", K1, "k9", K2), "k9").accept(new ReceivedMessage(subject, "SEND",
                com.hospital.surveyinbox.support.ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8), null));
    }

    /**
     * With encryption on a lone reception is written as a group of one: a replay whose first row is gone when the group
     * reads it (retention's delete, seen by the group's read) is written again, not answered 500. Here the first write
     * sees the row deleted (a statement trigger, once: a sequence is not rolled back), the second finds it again.
     */
    @Test
    void aReplayWhoseFirstRowIsGoneWhenReadIsWrittenAgainNotAnswered500() {
        String subject = uniqueSubject("CRYPTGONE");
        String key = "crypt-gone-" + subject;
        String body = com.hospital.surveyinbox.support.ServiceClient.message(subject, "");
        String first = client.receive(body, Map.of("Idempotency-Key", key)).json().get("inboxId").asText();
        new Rows(jdbc).awaitStatus(first, "COMPLETED");
        String trigger = "crypt_race_" + first;
        jdbc.execute("CREATE SEQUENCE " + trigger);
        jdbc.execute("CREATE FUNCTION " + trigger + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF nextval('" + trigger + "') = 1 THEN DELETE FROM inbox_attempt WHERE inbox_id = " + first + ";"
                + " DELETE FROM inbox_message WHERE id = " + first + "; END IF; RETURN NULL; END $$");
        jdbc.execute("CREATE TRIGGER " + trigger + " AFTER INSERT ON inbox_message FOR EACH STATEMENT EXECUTE FUNCTION " + trigger + "()");
        com.hospital.surveyinbox.support.ServiceClient.Reply replay;
        try {
            replay = client.receive(body, Map.of("Idempotency-Key", key));
        } finally {
            jdbc.execute("DROP TRIGGER " + trigger + " ON inbox_message");
            jdbc.execute("DROP FUNCTION " + trigger + "()");
            jdbc.execute("DROP SEQUENCE " + trigger);
        }
        assertThat(replay.status()).as(replay.body()).isEqualTo(200);
        assertThat(replay.header("X-Result-Code")).isEqualTo("Y");
        assertThat(replay.json().get("inboxId").asText()).isEqualTo(first);
    }

    @Test
    void refusesACiphertextMovedToAnotherSubjectOrAnotherRowOfTheSameSubject() {
        PayloadCipher cipher = new PayloadCipher(properties(Map.of("k1", K1), "k1"));
        PayloadCipher.Sealed sealed = cipher.seal(41, "SUBJECT-A", "{}".getBytes(StandardCharsets.UTF_8));

        assertThat(cipher.open(41, "SUBJECT-A", sealed.bytes(), sealed.keyId())).isEqualTo("{}".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> cipher.open(41, "SUBJECT-B", sealed.bytes(), sealed.keyId())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> cipher.open(42, "SUBJECT-A", sealed.bytes(), sealed.keyId())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new PayloadCipher(properties(Map.of("k1", Base64.getEncoder().encodeToString(new byte[16])), "k1")))
                .hasMessageContaining("32 bytes");
        assertThatThrownBy(() -> new PayloadCipher(properties(Map.of("k1", K1), "k9"))).hasMessageContaining("active-key");
        // a key that is not base64: named, none of it quoted (the decoder's message quotes the offending character)
        assertThatThrownBy(() -> new PayloadCipher(properties(Map.of("k1", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh~="), "k1")))
                .hasMessage("adapter.crypto.keys.k1 is not base64");
    }

    /**
     * Other key bytes under a key id pods already used (a key regenerated under its old id, a Secret edited while
     * pods still hold the old one) stop the start, naming the id: each side's rows would not open on the other, a
     * system error per attempt, DEAD with a failure reply within minutes. The same bytes start; a new id is recorded.
     */
    @Test
    void aKeyIdGivenOtherBytesStopsTheStart() {
        String id = "t" + Long.toString(System.nanoTime(), 36);
        try {
            new com.hospital.surveyinbox.inbox.PayloadKeyCheck(new PayloadCipher(properties(Map.of(id, K1), id)), jdbc).afterPropertiesSet();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM payload_key WHERE key_id = ?", Long.class, id)).isOne();
            new com.hospital.surveyinbox.inbox.PayloadKeyCheck(new PayloadCipher(properties(Map.of(id, K1), id)), jdbc).afterPropertiesSet();

            assertThatThrownBy(() -> new com.hospital.surveyinbox.inbox.PayloadKeyCheck(
                    new PayloadCipher(properties(Map.of(id.toUpperCase(java.util.Locale.ROOT), K2), id)), jdbc).afterPropertiesSet())
                    .hasMessageContaining("adapter.crypto.keys." + id + " is not the key '" + id + "'")
                    .hasMessageNotContaining(K2).hasMessageNotContaining(K1);
        } finally {
            jdbc.update("DELETE FROM payload_key WHERE key_id = ?", id);
        }
        // this context's own key was recorded at its start
        assertThat(jdbc.queryForObject("SELECT count(*) FROM payload_key WHERE key_id = 'k1'", Long.class)).isOne();
    }

    @Test
    void aPayloadSwappedBetweenTwoRowsOfOneSubjectNoLongerOpens() {
        InboxStore encrypting = store(Map.of("k1", K1), "k1");
        String subject = uniqueSubject("SWAP");
        long first = encrypting.accept(new ReceivedMessage(subject, "SEND", "{\"n\":1}".getBytes(StandardCharsets.UTF_8), null)).inboxId();
        long second = encrypting.accept(new ReceivedMessage(subject, "SEND", "{\"n\":2}".getBytes(StandardCharsets.UTF_8), null)).inboxId();
        ClaimRepository claims = new ClaimRepository(named, new PayloadCipher(properties(Map.of("k1", K1), "k1")),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ZERO);
        // someone with write access to the table swaps the two ciphertexts (same subject, same key)
        jdbc.update("""
                UPDATE inbox_message m
                   SET payload = o.payload
                  FROM inbox_message o
                 WHERE (m.id, o.id) IN ((?, ?), (?, ?))""", first, second, second, first);

        ClaimedRow claimed = claims.claim(first).orElseThrow();
        assertThat(claimed.payload()).as("a moved ciphertext is refused, not opened as the other row's").isNull();
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE id IN (?, ?)", first, second);
    }

    @Test
    void aRowSealedBeforeTheRowIdWasBoundStillOpens() throws Exception {
        // the earlier format: associated data = "survey-inbox:" + srvyDrawupNo, nonce first
        byte[] nonce = new byte[12];
        new java.security.SecureRandom().nextBytes(nonce);
        javax.crypto.Cipher aes = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        aes.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(Base64.getDecoder().decode(K1), "AES"),
                new javax.crypto.spec.GCMParameterSpec(128, nonce));
        aes.updateAAD("survey-inbox:OLD-SUBJECT".getBytes(StandardCharsets.UTF_8));
        byte[] sealed = aes.doFinal("{\"old\":true}".getBytes(StandardCharsets.UTF_8));
        byte[] stored = java.nio.ByteBuffer.allocate(12 + sealed.length).put(nonce).put(sealed).array();

        PayloadCipher cipher = new PayloadCipher(properties(Map.of("k1", K1), "k1"));
        assertThat(new String(cipher.open(7, "OLD-SUBJECT", stored, "k1"), StandardCharsets.UTF_8)).isEqualTo("{\"old\":true}");
        assertThatThrownBy(() -> cipher.open(7, "OTHER-SUBJECT", stored, "k1")).isInstanceOf(IllegalStateException.class);
    }

    private InboxStore store(Map<String, String> keys, String active) {
        AdapterProperties properties = properties(keys, active); // group insert off: these stores take one row at a time
        return new InboxStore(named, new PayloadCipher(properties),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), properties);
    }

    private static AdapterProperties properties(Map<String, String> keys, String active) {
        return com.hospital.surveyinbox.support.TestProperties.encrypting(keys, active);
    }
}
