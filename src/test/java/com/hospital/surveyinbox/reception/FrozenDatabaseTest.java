package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.FreezableTcpProxy;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.LoadSender;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A database that stops answering without closing connections (a network partition, a frozen primary),
 * played by a TCP proxy between the service and PostgreSQL: receptions answer 503 within a bounded time
 * instead of holding the sender's transaction open, the pod stays ready (it answers the contract's 503 JSON; health shows
 * the database DOWN), and everything recovers by itself
 * once the database answers again.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=frozen-db-tests",
        "adapter.kafka.group-id=frozen-db-tests",
        "spring.quartz.scheduler-name=frozen-db-tests",
        "adapter.reception.store-timeout=PT3S",
        // a worker whose outcome write hit the freeze leaves its row PROCESSING: the stuck-row reset recovers it
        "adapter.inbox.redeliver-enabled=true",
        "adapter.inbox.redeliver-cron=0/1 * * * * ?",
        "adapter.inbox.retry-delay=PT1S",
        "adapter.inbox.lost-event-after=PT3S",
        "adapter.inbox.stuck-processing-after=PT8S",
        "adapter.inbox.max-attempts=8"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class FrozenDatabaseTest extends IntegrationTest {

    /** Between this class's context and PostgreSQL; cleared after the class. */
    static final FreezableTcpProxy PROXY = FreezableTcpProxy.inFrontOfPostgresForTheNextContext();

    @AfterAll
    static void removeProxy() {
        PROXY.removeFromContexts();
    }

    /**
     * Fault suite: a steady load while the database freezes for twice the socket timeout. Every 200 is
     * stored and completes; a reception is never left hanging (the senders' requests would time out and
     * fail the load). A reception answered 503 whose group's COMMIT was already on the wire may still be
     * committed when the traffic resumes (the proxy, like a partitioned network, delivers what it held):
     * such a row exists although its sender was told to retry — never the other way round.
     */
    @Test
    void aLoadThroughAFrozenDatabaseLosesNothingAcknowledged() throws Exception {
        String prefix = uniqueSubject("FROZENLOAD") + "-";
        LoadSender load = new LoadSender(client, prefix, 4);
        Map<String, String> acknowledged = load.acknowledged;
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> acknowledged.size() >= 50);
            PROXY.freeze();
            long frozen = System.nanoTime();
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> load.answers().stream()
                        .filter(a -> a.sentAt() > frozen && a.status() == 503).count() >= 4);
            } finally {
                PROXY.thaw();
            }
            long thawed = System.nanoTime();
            await().atMost(Duration.ofSeconds(90)).until(() -> load.answers().stream()
                    .filter(a -> a.sentAt() > thawed && a.status() == 200).count() >= 20);
        } finally {
            PROXY.thaw();
            load.close();
        }

        assertThat(load.answers()).allSatisfy(a -> assertThat(a.status()).isIn(200, 503));
        Set<String> stored = rows.ids(prefix);
        assertThat(stored).containsAll(acknowledged.values()); // nothing acknowledged is lost
        long unacknowledgedButStored = stored.size() - acknowledged.size();
        long answered503 = load.answers().stream().filter(a -> a.status() == 503).count();
        assertThat(unacknowledgedButStored).isBetween(0L, answered503);
        rows.awaitAllClosed(prefix, stored.size(), Duration.ofMinutes(3));
        assertThat(rows.count(prefix, "COMPLETED")).isEqualTo(stored.size());
        assertNoBundleTwice(load.attempted);
    }

    @Test
    void receptionsAnswer503InBoundedTimeWhileTheDatabaseIsFrozenAndEverythingRecoversAfter() throws Exception {
        String before = client.accept(ServiceClient.message(uniqueSubject("FROZEN-BEFORE"), ""));
        rows.awaitStatus(before, "COMPLETED");

        PROXY.freeze();
        List<String> subjects = new ArrayList<>();
        ExecutorService senders = Executors.newFixedThreadPool(6);
        try {
            List<Future<Reply>> replies = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String subject = uniqueSubject("FROZEN");
                subjects.add(subject);
                replies.add(senders.submit(() -> client.receive(ServiceClient.message(subject, ""))));
            }
            for (Future<Reply> f : replies) {
                // bounded: store-timeout (3 s here) plus the HTTP round trip; without the bound it waits on the socket
                Reply reply = f.get(20, TimeUnit.SECONDS);
                assertThat(reply.status()).as(reply.body()).isEqualTo(503);
                assertThat(reply.header("X-Result-Code")).isEqualTo("N");
                assertThat(reply.json().has("inboxId")).isFalse();
            }
            // the pod stays in the Service: the sender keeps getting the contract's 503 JSON, not the ingress's page
            assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(200);
            assertThat(client.management("/actuator/health/liveness").status()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                    client.management("/actuator/health", ServiceClient.OPS_AUTH).json().at("/components/db/status").asText())
                    .isEqualTo("DOWN"));
        } finally {
            PROXY.thaw();
            senders.shutdown();
        }

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(
                client.management("/actuator/health", ServiceClient.OPS_AUTH).json().at("/components/db/status").asText())
                .isEqualTo("UP"));
        String after = client.accept(ServiceClient.message(uniqueSubject("FROZEN-AFTER"), ""));
        rows.awaitStatus(after, "COMPLETED", Duration.ofSeconds(60));
    }
}
