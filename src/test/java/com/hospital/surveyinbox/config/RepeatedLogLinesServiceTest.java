package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import com.hospital.surveyinbox.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The service as deployed (the shared test contexts write every line) caps repeated lines: an outage's line per
 * request is written repeat-limit times a window, and the drops are counted in Prometheus. Its own context, closed
 * after (the cap is the JVM's logging: it would hide lines other tests look for).
 */
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = {"adapter.logging.repeat-limit=20", "adapter.logging.repeat-window=PT1H"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RepeatedLogLinesServiceTest extends IntegrationTest {

    @Autowired
    RepeatedLogLinesInstaller installer;

    @Test
    void anOutagesLinePerRequestIsWrittenTwentyTimesAWindowAndItsDropsCounted(CapturedOutput output) {
        RepeatedLogLines filter = installer.installed();
        assertThat(((LoggerContext) LoggerFactory.getILoggerFactory()).getTurboFilterList()).contains(filter);
        Logger reception = LoggerFactory.getLogger("inbox-receive");
        String marker = "storm-" + uniqueSubject("LOG");
        for (int i = 0; i < 100; i++) {
            reception.warn("Inbox unavailable; answering 503 so the sender retries ({} attempt {})", marker, i);
        }
        assertThat(output.getOut().lines().filter(line -> line.contains(marker))).hasSize(20);
        assertThat(client.management("/actuator/prometheus", com.hospital.surveyinbox.support.ServiceClient.OPS_AUTH).body())
                .containsPattern("adapter_log_lines_dropped_total\\{[^}]*logger=\"inbox-receive\"[^}]*} 80\\.0");
    }
}
