package com.hospital.surveyinbox.retention;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Retention redacts the payload of old closed rows only; unfinished rows survive whatever their age. */
class RetentionTest extends IntegrationTest {

    @Autowired
    InboxStore store;

    @Autowired
    RetentionSweep retention;

    private long row(String subject, String status, int ageDays) {
        long id = store.accept(new ReceivedMessage(subject, "SEND",
                ("{\"srvyDrawupNo\":\"" + subject + "\",\"patno\":\"P\"}").getBytes(StandardCharsets.UTF_8), null)).inboxId();
        jdbc.update("UPDATE inbox_message SET status = ?, updated_at = now() - make_interval(days => ?), "
                + "created_at = now() - make_interval(days => ?) WHERE id = ?", status, ageDays, ageDays, id);
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, outcome) VALUES (?, 1, now(), ?)", id, status);
        return id;
    }

    @Test
    void redactsOldCompletedAndDeadPayloadsAndNeverUnfinishedRows() {
        String p = uniqueSubject("RET");
        long completedOld = row(p + "-c-old", "COMPLETED", 31);
        long completedYoung = row(p + "-c-young", "COMPLETED", 29);
        long deadOld = row(p + "-d-old", "DEAD", 91);
        long deadMid = row(p + "-d-mid", "DEAD", 60);
        long received = row(p + "-r", "RECEIVED", 400);
        long processing = row(p + "-p", "PROCESSING", 400);
        long failed = row(p + "-f", "FAILED", 400);

        int redacted = retention.redact();

        assertThat(redacted).isGreaterThanOrEqualTo(2);
        for (long id : new long[] {completedOld, deadOld}) {
            Map<String, Object> r = jdbc.queryForMap("SELECT * FROM inbox_message WHERE id = ?", id);
            assertThat(r.get("payload")).isNull();
            assertThat(r.get("redacted_at")).isNotNull();
            assertThat(r.get("srvy_drawup_no")).isNotNull();
            assertThat(r.get("status")).isIn("COMPLETED", "DEAD");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class, id)).isEqualTo(1);
        }
        for (long id : new long[] {completedYoung, deadMid, received, processing, failed}) {
            assertThat(jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, id)).isNotNull();
            assertThat(jdbc.queryForObject("SELECT redacted_at IS NULL FROM inbox_message WHERE id = ?", Boolean.class, id)).isTrue();
        }
        // a redacted DEAD row cannot be requeued: there is nothing left to process
        assertThat(client.opsPost("/ops/inbox/" + deadOld + "/requeue").status()).isEqualTo(409);
        assertThat(retention.redact()).isZero();
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id IN (?, ?, ?)", received, processing, failed);
    }
}
