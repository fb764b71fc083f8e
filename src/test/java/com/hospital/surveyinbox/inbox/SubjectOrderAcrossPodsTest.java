package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Two pods store rows of one subject at the same moment. The ordering guard compares ids, so a subject's
 * ids must be in commit order: pod A's group takes its id and is slow to commit; pod B's row of the same
 * subject must not commit first under a higher id (its claim could not see A's uncommitted row and would
 * register it first). Here "two pods" are two direct calls into the store on two connections, bypassing the
 * in-process lanes that order one pod's receptions.
 */
class SubjectOrderAcrossPodsTest extends IntegrationTest {

    @Autowired
    InboxStore store;

    private static ReceivedMessage message(String subject, String msgType) {
        return new ReceivedMessage(subject, msgType,
                ServiceClient.message(subject, "\"msgType\":\"" + msgType + "\"").getBytes(StandardCharsets.UTF_8), null);
    }

    @Test
    void aSubjectsRowsCommitInIdOrderAcrossPods() throws Exception {
        String subject = uniqueSubject("TWOPODS");
        // pod A's INSERT of the SEND is slow (after its id was taken); nothing else is slowed
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_two_pods() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF NEW.srvy_drawup_no = '" + subject + "' AND NEW.msg_type = 'SEND' THEN PERFORM pg_sleep(2); END IF;"
                + " RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER slow_two_pods BEFORE INSERT ON inbox_message FOR EACH ROW EXECUTE FUNCTION slow_two_pods()");
        try {
            CompletableFuture<List<Acceptance>> podA = CompletableFuture.supplyAsync(() ->
                    store.acceptGroup(List.of(message(subject, "SEND")), Duration.ofSeconds(10)));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'INSERT INTO inbox_message%'",
                    Long.class) > 0);

            Acceptance b = store.acceptOne(message(subject, "SUBMIT")); // pod B, a moment later
            long aVisibleWhenBCommitted = jdbc.queryForObject(
                    "SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ? AND msg_type = 'SEND'", Long.class, subject);
            Acceptance a = podA.get(20, TimeUnit.SECONDS).get(0);

            assertThat(aVisibleWhenBCommitted).as("the earlier id was committed before the later one").isOne();
            assertThat(a.inboxId()).isLessThan(b.inboxId());
        } finally {
            jdbc.execute("DROP TRIGGER IF EXISTS slow_two_pods ON inbox_message");
        }
    }
}
