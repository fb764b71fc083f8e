package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A slow (not frozen) database: every INSERT into the inbox takes 3 s (a statement-level trigger), and four
 * receptions of one subject arrive together. The first is written alone and answered 200; the others form a
 * group that would commit after their 5 s store timeout. Whatever each is answered, the answer is the truth:
 * a 200 is stored, a 503 is not — never "503, please retry" for a row that commits anyway (the sender's retry
 * would store a second SEND, a resend request: the patient notified twice).
 */
class SlowDatabaseReceptionTest extends IntegrationTest {

    @Test
    void everyAnswerTellsTheTruthAboutTheRowWhenTheDatabaseIsSlow() throws Exception {
        String subject = uniqueSubject("SLOWDB");
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_inbox_insert() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$");
        jdbc.execute("CREATE TRIGGER slow_inbox_insert BEFORE INSERT ON inbox_message FOR EACH STATEMENT EXECUTE FUNCTION slow_inbox_insert()");
        List<String> keys = keys(subject, 4);
        List<Reply> answers;
        try {
            answers = receiveAtOnce(subject, keys);
        } finally {
            jdbc.execute("DROP TRIGGER IF EXISTS slow_inbox_insert ON inbox_message");
        }

        int refused = 0;
        for (int i = 0; i < 4; i++) {
            Reply answer = answers.get(i);
            assertThat(answer.status()).as(answer.body()).isIn(200, 503);
            long stored = jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE idempotency_key = ?", Long.class, keys.get(i));
            if (answer.status() == 200) {
                assertThat(stored).as("answered 200: stored").isOne();
                assertThat(answer.json().get("inboxId").asText()).isEqualTo(jdbc.queryForObject(
                        "SELECT id::text FROM inbox_message WHERE idempotency_key = ?", String.class, keys.get(i)));
            } else {
                refused++;
                assertThat(stored).as("answered 503 (%s): nothing may be stored", answer.body()).isZero();
            }
        }
        assertThat(refused).as("the database was slow enough to refuse someone").isPositive();
    }

    /**
     * A group's COMMIT that takes longer than the socket timeout (a deferred trigger sleeps 5 s at commit): the
     * client gives up without an answer. The group's transaction must not commit after its receptions were
     * answered: the backend is ended and the transaction's status decides the answer. A first reception of the
     * subject, slow to insert (1 s), holds the lane so that the next two form a group.
     */
    @Test
    void aGroupsCommitThatGetsNoAnswerNeverCommitsAfterItsReceptionsWereAnswered() throws Exception {
        String subject = uniqueSubject("SLOWCOMMIT");
        List<String> keys = keys(subject, 3);
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_first_insert() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN IF NEW.idempotency_key = '" + keys.get(0) + "' THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER slow_first_insert BEFORE INSERT ON inbox_message FOR EACH ROW EXECUTE FUNCTION slow_first_insert()");
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_inbox_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN IF NEW.srvy_drawup_no = '" + subject + "' AND NEW.idempotency_key <> '" + keys.get(0) + "'"
                + " THEN PERFORM pg_sleep(5); END IF; RETURN NULL; END $$");
        jdbc.execute("CREATE CONSTRAINT TRIGGER slow_inbox_commit AFTER INSERT ON inbox_message DEFERRABLE INITIALLY DEFERRED"
                + " FOR EACH ROW EXECUTE FUNCTION slow_inbox_commit()");
        List<Reply> answers = new ArrayList<>();
        ExecutorService senders = Executors.newFixedThreadPool(2);
        try {
            Future<Reply> first = senders.submit(() -> receive(subject, keys.get(0)));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'INSERT INTO inbox_message%'",
                    Long.class) > 0);
            answers.addAll(receiveAtOnce(subject, keys.subList(1, 3)));
            answers.add(0, first.get(40, TimeUnit.SECONDS));
        } finally {
            jdbc.execute("DROP TRIGGER IF EXISTS slow_inbox_commit ON inbox_message");
            jdbc.execute("DROP TRIGGER IF EXISTS slow_first_insert ON inbox_message");
            senders.shutdown();
        }
        // whatever was still on its way has landed by now, or never will: the backends were ended
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'", Long.class) == 0);
        assertThat(answers.get(0).status()).isEqualTo(200);
        for (int i = 0; i < 3; i++) {
            long stored = jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE idempotency_key = ?", Long.class, keys.get(i));
            assertThat(answers.get(i).status()).isIn(200, 503);
            assertThat(stored).as("answered %s: stored", answers.get(i).status()).isEqualTo(answers.get(i).status() == 200 ? 1 : 0);
        }
        assertThat(answers.subList(1, 3)).as("the group's COMMIT outlived the socket timeout").allMatch(a -> a.status() == 503);
    }

    private Reply receive(String subject, String key) {
        return client.post("/legacy/survey-send-info", ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8),
                "application/json", ServiceClient.LEGACY_AUTH, Map.of("Idempotency-Key", key));
    }

    private static List<String> keys(String subject, int n) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(subject + "-key-" + i);
        }
        return keys;
    }

    /** One reception of the subject per key, all at once; the answers in the keys' order. */
    private List<Reply> receiveAtOnce(String subject, List<String> keys) throws Exception {
        ExecutorService senders = Executors.newFixedThreadPool(keys.size());
        try {
            List<Future<Reply>> futures = new ArrayList<>();
            for (String key : keys) {
                futures.add(senders.submit(() -> receive(subject, key)));
            }
            List<Reply> answers = new ArrayList<>();
            for (Future<Reply> f : futures) {
                answers.add(f.get(40, TimeUnit.SECONDS));
            }
            return answers;
        } finally {
            senders.shutdown();
        }
    }
}
