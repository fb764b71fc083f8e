package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.inbox.Acceptance;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** The claim and the fenced outcome writes against real PostgreSQL, under contention. */
class ClaimTest extends IntegrationTest {

    @Autowired
    InboxStore store;

    private long insert(String subject) {
        // stored directly (no event): the service's own consumer never sees these rows
        Acceptance a = store.accept(new ReceivedMessage(subject, "SEND",
                ("{\"srvyDrawupNo\":\"" + subject + "\"}").getBytes(StandardCharsets.UTF_8), null));
        return a.inboxId();
    }

    @Test
    void claimsEachRowExactlyOnceUnderAHeavyRace() throws Exception {
        int rowsCount = 2_000;
        int threads = 16;
        int attemptsPerThread = 2_000; // 32,000 attempts in all
        String prefix = uniqueSubject("RACE");
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < rowsCount; i++) {
            ids.add(insert(prefix + "-" + i));
        }
        Map<Long, AtomicInteger> claimsPerRow = new ConcurrentHashMap<>();
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t * 7;
            futures.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < attemptsPerThread; i++) {
                    long id = ids.get((offset + i) % rowsCount);
                    attempts.incrementAndGet();
                    store.claim(id).ifPresent(row -> claimsPerRow.computeIfAbsent(row.inboxId(), k -> new AtomicInteger()).incrementAndGet());
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(5, TimeUnit.MINUTES);
        }
        pool.shutdown();

        assertThat(attempts.get()).isGreaterThanOrEqualTo(30_000);
        assertThat(claimsPerRow).hasSize(rowsCount);
        assertThat(claimsPerRow.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'PROCESSING' AND attempts = 1",
                Long.class, prefix + "-%")).isEqualTo(rowsCount);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE srvy_drawup_no LIKE ?", prefix + "-%");
    }

    @Test
    void rejectsAStaleWorkersOutcomeAfterItsRowWasReclaimed() {
        String subject = uniqueSubject("STALE");
        long id = insert(subject);
        ClaimedRow stale = store.claim(id).orElseThrow();
        // the redelivery job's reset of a stuck row
        jdbc.update("UPDATE inbox_message SET status = 'RECEIVED' WHERE id = ?", id);
        ClaimedRow fresh = store.claim(id).orElseThrow();

        assertThat(store.complete(stale, null, null)).isFalse();
        assertThat(store.fail(stale, "late failure", 5).applied()).isFalse();
        assertThat(jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, id)).isEqualTo("PROCESSING");

        assertThat(store.complete(fresh, null, null)).isTrue();
        assertThat(store.complete(fresh, null, null)).isFalse();
        assertThat(jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, id)).isEqualTo("COMPLETED");
        assertThat(jdbc.queryForObject("SELECT attempts FROM inbox_message WHERE id = ?", Integer.class, id)).isEqualTo(2);
        assertThat(store.claim(id)).isEmpty();
    }

    @Test
    void holdsALaterRowOfTheSameSubjectUntilTheEarlierOneFinishes() {
        String subject = uniqueSubject("HOLD");
        long first = insert(subject);
        long second = insert(subject);

        assertThat(store.claim(second)).isEmpty();
        assertThat(store.recordHold(second)).contains(first);
        ClaimedRow claimed = store.claim(first).orElseThrow();
        assertThat(store.claim(second)).isEmpty();
        assertThat(store.fail(claimed, "x", 5).status()).isEqualTo(InboxStatus.FAILED);
        assertThat(store.claim(second)).as("FAILED still blocks").isEmpty();
        ClaimedRow retry = store.claim(first).orElseThrow();
        assertThat(store.complete(retry, null, null)).isTrue();
        assertThat(store.findHeldSuccessor(first, subject)).hasValueSatisfying(e -> assertThat(e.inboxId()).isEqualTo(Long.toString(second)));
        ClaimedRow next = store.claim(second).orElseThrow();
        assertThat(store.complete(next, null, null)).isTrue();
    }
}
