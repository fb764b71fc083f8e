package com.hospital.surveyinbox.processing;

import org.apache.camel.Exchange;
import org.apache.camel.component.kafka.KafkaConstants;
import org.apache.camel.component.kafka.consumer.KafkaManualCommit;
import org.springframework.stereotype.Component;

/**
 * Commits the record's offset once its outcome is on the row ({@code routes/inbox-process.camel.yaml},
 * step {@code inbox-process-commit-offset}). Committing after a failure is deliberate: the row, not
 * Kafka, decides retries.
 */
@Component("kafkaOffsets")
public class KafkaOffsets {

    public void commit(Exchange exchange) {
        KafkaManualCommit commit = exchange.getMessage().getHeader(KafkaConstants.MANUAL_COMMIT, KafkaManualCommit.class);
        if (commit != null) {
            commit.commit();
        }
    }
}
