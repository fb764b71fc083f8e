package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.EmbeddedServicesInitializer;
import com.hospital.surveyinbox.support.FreezableTcpProxy;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * instead of holding the sender's transaction open, readiness goes DOWN, and everything recovers by itself
 * once the database answers again.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=frozen-db-tests",
        "adapter.kafka.group-id=frozen-db-tests",
        "spring.quartz.scheduler-name=frozen-db-tests",
        "adapter.reception.store-timeout=PT3S"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class FrozenDatabaseTest extends IntegrationTest {

    static final FreezableTcpProxy PROXY;

    static {
        try {
            PROXY = new FreezableTcpProxy(EmbeddedServices.get().postgresPort());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // read by EmbeddedServicesInitializer when this class's context starts; cleared after the class
        System.setProperty(EmbeddedServicesInitializer.POSTGRES_OVERRIDE,
                "jdbc:postgresql://localhost:" + PROXY.port() + "/" + EmbeddedServices.DB_NAME);
    }

    @AfterAll
    static void removeProxy() {
        System.clearProperty(EmbeddedServicesInitializer.POSTGRES_OVERRIDE);
        PROXY.thaw();
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
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(503));
            assertThat(client.management("/actuator/health/liveness").status()).isEqualTo(200);
        } finally {
            PROXY.thaw();
            senders.shutdown();
        }

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(client.management("/actuator/health/readiness").status()).isEqualTo(200));
        String after = client.accept(ServiceClient.message(uniqueSubject("FROZEN-AFTER"), ""));
        rows.awaitStatus(after, "COMPLETED", Duration.ofSeconds(60));
    }
}
