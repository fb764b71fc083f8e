package com.hospital.surveyinbox.support;

import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

/**
 * Base of the tests that boot the whole service against the real embedded services. All subclasses
 * with the same configuration share one Spring context.
 */
@CamelSpringBootTest
@AutoConfigureObservability // Boot disables metrics export in tests otherwise; /actuator/prometheus is API
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("test")
// outranks ./config/application.yaml, which a classpath profile file would not
@TestPropertySource(locations = "classpath:test.properties")
public abstract class IntegrationTest {

    @LocalServerPort
    protected int port;

    @LocalManagementPort
    protected int managementPort;

    @Autowired
    protected JdbcTemplate jdbc;

    protected ServiceClient client;

    protected Rows rows;

    protected static EmbeddedServices services() {
        return EmbeddedServices.get();
    }

    protected static DownstreamSimulator simulator() {
        return EmbeddedServices.get().simulator();
    }

    @BeforeEach
    void setUpClient() {
        client = new ServiceClient("http://localhost:" + port, "http://localhost:" + managementPort);
        rows = new Rows(jdbc);
    }

    /** The simulator is shared by every context of the run: no test leaves a fault behind. */
    @AfterEach
    void clearSimulatorFaults() {
        simulator().clearFaults();
    }

    @Autowired
    private com.hospital.surveyinbox.processing.DownstreamCircuits downstreamCircuits;

    /**
     * Each test's system errors are its own: a few in a row open a downstream's circuit, which would defer the next
     * test's rows (and those of the next test class sharing this context) for its open duration, or let them through
     * as half-open trials: counts of attempts and calls then depended on the order the methods ran in.
     */
    @AfterEach
    protected void closeCircuits() {
        com.hospital.surveyinbox.processing.DownstreamCircuits.DOWNSTREAMS.forEach(downstreamCircuits::reset);
    }

    protected long rowCount() {
        return jdbc.queryForObject("SELECT count(*) FROM inbox_message", Long.class);
    }

    protected String status(String inboxId) {
        return jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, Long.parseLong(inboxId));
    }

    /** The simulator created at most one dispatch bundle per subject. */
    protected static void assertNoBundleTwice(Iterable<String> subjects) {
        for (String subject : subjects) {
            org.assertj.core.api.Assertions.assertThat(simulator().bundleCreates(subject)).as(subject).isLessThanOrEqualTo(1);
        }
    }

    /** A subject number no other test uses. */
    protected static String uniqueSubject(String prefix) {
        return prefix + "-" + java.util.UUID.randomUUID().toString().substring(0, 12);
    }
}
