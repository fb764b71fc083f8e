package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.ServiceClient.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * More receptions at once than {@code adapter.reception.max-in-flight} (2 of 4 request threads here; 150 of 200 as
 * shipped), each held by a slow insert: the ones beyond it are answered at once with the contract's 503 "please
 * retry" and store nothing, and the operators' API answers while the admitted ones still wait. Before, a pod took
 * receptions until Tomcat's threads and queue were full and then closed connections unanswered: the ingress's 502,
 * no X-Result-Code, and no thread left for {@code /ops}.
 */
@TestPropertySource(properties = {
        "adapter.reception.max-in-flight=2",
        "server.tomcat.threads.max=4",
        "adapter.kafka.topic=admission-tests",
        "adapter.kafka.group-id=admission-tests",
        "spring.quartz.scheduler-name=admission-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ReceptionAdmissionTest extends IntegrationTest {

    @Test
    void receptionsBeyondTheLimitAre503PleaseRetryAndStoreNothingWhileTheOperatorsApiAnswers() throws Exception {
        String prefix = uniqueSubject("ADMIT");
        // this test's rows take 1.5 s each to insert (two in one group: 3 s, within the statement bound): the first receptions hold their permits (and threads) meanwhile
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_admit_insert() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN IF NEW.srvy_drawup_no LIKE '" + prefix + "%' THEN PERFORM pg_sleep(1.5); END IF; RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER slow_admit_insert BEFORE INSERT ON inbox_message FOR EACH ROW EXECUTE FUNCTION slow_admit_insert()");
        double overloaded = meterCount("adapter.reception.overloaded");
        List<Reply> answers = new ArrayList<>();
        ExecutorService senders = Executors.newFixedThreadPool(6);
        Reply stats;
        double underWayAfterStats;
        try {
            List<Future<Reply>> sent = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String subject = prefix + "-" + i;
                sent.add(senders.submit(() -> client.receive(ServiceClient.message(subject, ""))));
            }
            // two admitted and waiting on their inserts, the other four answered
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> inFlight() == 2 && sent.stream().filter(Future::isDone).count() == 4);
            stats = client.ops("/ops/inbox/stats");
            underWayAfterStats = inFlight();
            for (Future<Reply> reply : sent) {
                answers.add(reply.get(60, TimeUnit.SECONDS));
            }
        } finally {
            senders.shutdownNow();
            jdbc.execute("DROP TRIGGER IF EXISTS slow_admit_insert ON inbox_message");
        }

        assertThat(stats.status()).as("the operators' API while receptions wait").isEqualTo(200);
        assertThat(underWayAfterStats).as("answered while the admitted receptions still waited").isEqualTo(2);
        List<Reply> turnedAway = answers.stream()
                .filter(a -> a.status() == 503 && a.body().contains("too many receptions under way")).toList();
        // the await above saw two admitted and four answered: those four are the ones turned away
        assertThat(turnedAway).as("answers beyond max-in-flight: %s", answers).hasSize(4)
                .allSatisfy(a -> {
                    assertThat(a.header("X-Result-Code")).isEqualTo("N");
                    assertThat(a.header("Retry-After")).isEqualTo("1");
                    assertThat(a.json().get("resultMessage").asText()).contains("please retry");
                });
        long accepted = answers.stream().filter(a -> a.status() == 200).count();
        assertThat(accepted).as("the receptions within the limit are stored: %s", answers).isEqualTo(2);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?", Long.class, prefix + "-%"))
                .as("stored: the 200s, nothing for the 503s").isEqualTo(accepted);
        assertThat(meterCount("adapter.reception.overloaded")).isEqualTo(overloaded + turnedAway.size());
    }

    @org.springframework.beans.factory.annotation.Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    private double inFlight() {
        io.micrometer.core.instrument.Gauge gauge = meters.find("adapter.reception.in.flight").gauge();
        return gauge == null ? -1 : gauge.value();
    }

    private double meterCount(String name) {
        io.micrometer.core.instrument.Counter counter = meters.find(name).counter();
        return counter == null ? 0 : counter.count();
    }
}
