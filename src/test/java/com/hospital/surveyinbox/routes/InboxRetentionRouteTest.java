package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.camel.builder.NotifyBuilder;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-retention.camel.yaml} (shared setup: {@link RouteKit}). */
class InboxRetentionRouteTest extends RouteKit {

    @Test
    void retentionRedactsOldClosedPayloadsInBatchesAndNeverUnfinishedRows() throws Exception {
        String p = uniqueSubject("ALONE-RET");
        long completedOld = aged(p + "-c-old", "COMPLETED", 31);
        long completedOld2 = aged(p + "-c-old2", "COMPLETED", 45);
        long completedYoung = aged(p + "-c-young", "COMPLETED", 29);
        long deadOld = aged(p + "-d-old", "DEAD", 91);
        long deadMid = aged(p + "-d-mid", "DEAD", 60);
        long received = aged(p + "-r", "RECEIVED", 400);
        long processing = aged(p + "-p", "PROCESSING", 400);
        long failed = aged(p + "-f", "FAILED", 400);
        NotifyBuilder done = new NotifyBuilder(camel).fromRoute("inbox-retention").whenDone(1).create();

        template.sendBody("direct:retention-tick", null); // batch-size 2: three due rows take more than one batch

        assertThat(done.matches(30, TimeUnit.SECONDS)).isTrue();
        for (long id : new long[] {completedOld, completedOld2, deadOld}) {
            Map<String, Object> r = jdbc.queryForMap("SELECT * FROM inbox_message WHERE id = ?", id);
            assertThat(r.get("payload")).isNull();
            assertThat(r.get("redacted_at")).isNotNull();
            assertThat(r.get("srvy_drawup_no")).isNotNull();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class, id)).isEqualTo(1);
        }
        for (long id : new long[] {completedYoung, deadMid, received, processing, failed}) {
            assertThat(jdbc.queryForObject("SELECT payload FROM inbox_message WHERE id = ?", byte[].class, id)).isNotNull();
        }
        // a redacted DEAD row cannot be requeued: there is nothing left to process
        assertThat(client.opsPost("/ops/inbox/" + deadOld + "/requeue").status()).isEqualTo(409);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id IN (?, ?, ?)", received, processing, failed);
    }
}
