package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.FreezableTcpProxy;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * A pod started while PostgreSQL is down (restarting, failing over; a pod evicted or restarted during the outage)
 * waits for it and starts, inside the startup probe's window. Flyway, the first to connect, tried once: the JVM
 * exited and the pod crash-looped, kubelet's back-off keeping it out for minutes after the database was back.
 * Played by a proxy that closes every connection for the context's first seconds.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=db-down-at-start-tests",
        "adapter.kafka.group-id=db-down-at-start-tests",
        "spring.quartz.scheduler-name=db-down-at-start-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
// from before the context starts: its start's lines are what this test reads
@org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
class DatabaseDownAtStartTest extends IntegrationTest {

    /** Between this class's context and PostgreSQL: refusing until some seconds after the context began. */
    static final FreezableTcpProxy PROXY = FreezableTcpProxy.inFrontOfPostgresForTheNextContext();

    static {
        PROXY.cutOff();
        // the database comes back once the start has tried it twice and been refused
        Thread back = new Thread(() -> {
            try {
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofMinutes(2)).until(() -> PROXY.refused() >= 2);
            } finally {
                PROXY.restore();
            }
        }, "database-back");
        back.setDaemon(true);
        back.start();
    }

    @AfterAll
    static void removeProxy() {
        PROXY.removeFromContexts();
    }

    @Test
    void aPodStartedWhileTheDatabaseIsDownStartsOnceItIsBack(org.springframework.boot.test.system.CapturedOutput output) {
        // the context is up: it started through the outage (else this class failed to load), having found it
        assertThat(output.getOut()).contains("The database cannot be reached to migrate").contains("The database answers (after");
        ServiceClient.Reply reply = client.receive(ServiceClient.message(uniqueSubject("DBDOWNSTART"), ""));
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    }
}
